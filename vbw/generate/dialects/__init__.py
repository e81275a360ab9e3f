"""Server dialects: how each kind of OpenAI-compatible server wants a schema, a forced
call, greedy decoding and log-probabilities (vbw.generate.dialects.base.Dialect), one
module per dialect, each registering itself in DIALECTS by name.

Most servers silently drop a request field they do not know, so a schema sent in the
wrong dialect yields unconstrained text with HTTP 200: the dialect is the run's engine
(`server-<dialect>`), and the canary must pass before a server run. An installed package
adds a dialect through an entry point of group `vbw.dialects` (docs/reference/plugins.md).
"""

from __future__ import annotations

from vbw.errors import ConfigError
from vbw.generate.dialects.base import DIALECTS, Dialect
from vbw.generate.dialects.openai import OpenAI  # in the order the dialects list in
from vbw.generate.dialects.vllm import Vllm
from vbw.generate.dialects.llama_server import LlamaServer
from vbw.generate.dialects.llama_cpp_python import LlamaCppPython
from vbw.generate.dialects.ollama import Ollama

__all__ = ["DIALECTS", "Dialect", "LlamaCppPython", "LlamaServer", "Ollama", "OpenAI", "Vllm",
           "dialect_for"]


def dialect_for(name: str) -> Dialect:
    """The dialect `name` names (vbw's, or an installed package's); ConfigError in one
    line with a did-you-mean for a name none has."""
    try:
        cls = DIALECTS.get(name)
    except ValueError as e:
        raise ConfigError(f"backend.dialect: {e}") from None
    return cls()

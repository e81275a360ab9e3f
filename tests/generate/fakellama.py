"""A scripted stand-in for llama.cpp's low-level API, enough to drive vbw's own decode loop
(vbw.generate.decode.Decoder) and Runtime.complete without a model: a tiny byte vocabulary,
logits that a script gives per step, and a TokenRule that allows a scripted set of tokens
per step. What the loop and the intervention records make of them is vbw's real code."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from types import SimpleNamespace

import numpy as np

from vbw.generate.backend import Generation
from vbw.generate.batched import BatchDecoder
from vbw.generate.decode import Decoder, best_allowed
from vbw.generate.runtime import Runtime

EOG = 0
# token id -> the bytes it appends; 6 and 7 are the two bytes of "é" (a split character)
VOCAB = {EOG: b"", 1: b"{", 2: b"}", 3: b'"', 4: b"a", 5: b"b", 6: b"\xc3", 7: b"\xa9",
         8: b"1", 9: b" "}
N_VOCAB = len(VOCAB)

# (context: the prompt and the tokens generated so far) -> logits over VOCAB
Model = Callable[[Sequence[int]], np.ndarray]


class FakeLib:
    """The llama_cpp functions Decoder and BatchDecoder call, over sequences (one KV
    stream each) whose logits `model` gives from each sequence's own tokens."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.seqs: dict[int, list[int]] = {}  # what the fake KV cache holds, per sequence
        self._rows: dict[int, ctypes.Array] = {}  # batch position -> its logits
        self._last = -1
        self.decoded = 0  # llama_decode calls
        self.rows: list[int] = []  # rows per llama_decode call

    @property
    def seq(self) -> list[int]:
        return self.seqs.setdefault(0, [])

    def llama_batch_init(self, n: int, _embd: int, _seqs: int) -> SimpleNamespace:
        return SimpleNamespace(n_tokens=0, token=[0] * n, pos=[0] * n, n_seq_id=[0] * n,
                               seq_id=[[0] for _ in range(n)], logits=[False] * n)

    def llama_decode(self, _ctx: object, batch: SimpleNamespace) -> int:
        n = batch.n_tokens
        assert batch.logits[n - 1] or any(batch.logits[:n])  # the loops' bookkeeping
        ids = list(dict.fromkeys(batch.seq_id[i][0] for i in range(n)))  # in batch order
        # a non-unified batch stays one ubatch only with consecutive increasing ids
        assert ids == list(range(ids[0], ids[0] + len(ids))), f"llama.cpp would split {ids}"
        self._rows = {}
        for i in range(n):
            seq = self.seqs.setdefault(batch.seq_id[i][0], [])
            assert batch.pos[i] == len(seq), (i, batch.pos[i], len(seq))
            seq.append(batch.token[i])
            if batch.logits[i]:
                row = (ctypes.c_float * N_VOCAB)()
                row[:] = [float(x) for x in self.model(seq)]
                self._rows[i] = row
                self._last = i
        self.decoded += 1
        self.rows.append(n)
        return 0

    def llama_get_logits_ith(self, _ctx: object, i: int) -> object:
        row = self._rows[self._last if i == -1 else i]
        return ctypes.cast(row, ctypes.POINTER(ctypes.c_float))

    def llama_sampler_sample(self, _sampler: object, ctx: object, i: int) -> int:
        row = self._rows[self._last if i == -1 else i]
        return int(np.asarray(row[:], np.float32).argmax())

    def llama_memory_seq_rm(self, _memory: object, seq: int, keep: int, _end: int) -> bool:
        for s in (list(self.seqs) if seq == -1 else [seq]):
            del self.seqs.setdefault(s, [])[max(keep, 0):]
        return True

    def llama_memory_seq_cp(self, _memory: object, src: int, dst: int, p0: int,
                            p1: int) -> None:
        assert p0 == p1 == -1, "llama.cpp copies a stream between streams only whole"
        self.seqs[dst] = list(self.seqs.get(src, []))

    def llama_memory_seq_pos_max(self, _memory: object, seq: int) -> int:
        return len(self.seqs.get(seq, [])) - 1

    def llama_memory_clear(self, _memory: object, _data: bool) -> None:
        self.seqs = {}

    def llama_vocab_is_eog(self, _vocab: object, token: int) -> bool:
        return token == EOG

    def llama_sampler_init_greedy(self) -> object:
        return object()

    def llama_get_memory(self, _ctx: object) -> object:
        return object()

    def llama_batch_free(self, _batch: object) -> None:
        pass

    def llama_sampler_free(self, _sampler: object) -> None:
        pass


def runtime(model: Model, n_batch: int = 4, sequences: int = 1,
            flash_attn: bool = False) -> Runtime:
    """A Runtime whose Decoder (or, `sequences` > 1, BatchDecoder, as with flash attention
    if `flash_attn`) runs on FakeLib (complete() and its records are vbw's)."""
    rt = Runtime.__new__(Runtime)
    lib = FakeLib(model)
    rt._lib, rt.vocab, rt.n_ctx, rt.reuse_kv, rt.n_vocab = lib, None, 512, False, N_VOCAB
    rt.llm = SimpleNamespace(detokenize=lambda ts: b"".join(VOCAB[t] for t in ts))
    rt.token_bytes = VOCAB.__getitem__  # type: ignore[method-assign]
    rt.decoder = Decoder(lib, None, N_VOCAB, n_batch, rt.is_eog)
    rt.batcher = (BatchDecoder(lib, None, N_VOCAB, n_batch, rt.is_eog, sequences,
                               flash_attn=flash_attn)
                  if sequences > 1 else None)
    return rt


def record(gen: Generation) -> tuple:
    """What a generation records, to compare two runs of one completion."""
    return (gen.text, gen.n_tokens, gen.finish_reason, gen.tax,
            [i.model_dump() for i in gen.interventions or []])


def script(seed: int, steps: int = 40) -> tuple[list[int], list[set[int]]]:
    """The model's argmax and the rule's allowed tokens per step: the argmax allowed at
    about half the steps, among one to four allowed tokens; the rule then forces the end
    of generation the model does not want (its argmax one step longer)."""
    rng = np.random.default_rng(seed)
    wanted = [int(t) for t in rng.integers(1, N_VOCAB, steps + 1)]
    allowed = []
    for k in range(steps):
        pool = [t for t in range(1, N_VOCAB) if t != wanted[k]]
        chosen = {int(t) for t in rng.choice(pool, int(rng.integers(1, 4)), replace=False)}
        allowed.append(chosen | {wanted[k]} if rng.random() < 0.5 else chosen)
    return wanted, allowed


def scripted_model(wanted: Sequence[int], prompt_len: int, seed: int = 0) -> Model:
    """A model whose argmax at output step k is `wanted[k]` (EOG past the end), under
    logits that otherwise look random (a fixed generator per step)."""
    def logits(context: Sequence[int]) -> np.ndarray:
        k = len(context) - prompt_len
        x = np.random.default_rng([seed, k]).normal(size=N_VOCAB).astype(np.float32)
        x[wanted[k] if k < len(wanted) else EOG] = x.max() + 1.5
        return x
    return logits


class ScriptedRule:
    """A TokenRule that allows the tokens `allowed[k]` at output step k (only EOG past
    the end), with the boolean mask of the last `best` call, as the engines' rules give."""

    def __init__(self, allowed: Sequence[set[int]]) -> None:
        self.allowed_sets = allowed
        self.k = 0
        self._mask: np.ndarray | None = None

    def _now(self) -> set[int]:
        return set(self.allowed_sets[self.k]) if self.k < len(self.allowed_sets) else {EOG}

    def allows(self, token: int) -> bool:
        return token in self._now()

    def best(self, logits: np.ndarray) -> int:
        self._mask = np.isin(np.arange(N_VOCAB), sorted(self._now()))
        return best_allowed(self._mask, logits, "scripted")

    def allowed(self) -> np.ndarray | None:
        return self._mask

    def accept(self, token: int) -> None:
        assert self.allows(token)
        self.k += 1

"""Several sequences in one llama.cpp decode (`batch.sequences` > 1).

Threads (one per item in flight) hand their completions to one `BatchDecoder`, whose own
thread owns the context: each step decodes one token of every live sequence in one
`llama_decode`; a finished sequence leaves and a waiting one joins (continuous batching).
Each sequence keeps its own rule, sampler, seed, interventions and tax, and a KV stream
of its own, so its text is the one the one-sequence loop gives it.

How it works and why: docs/design.md, section vbw.generate.batched.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from vbw.errors import EngineError
from vbw.generate.backend import Sampling
from vbw.generate.completion import Completion, Decoded, TokenRule
from vbw.generate.decode import common_prefix, fill_prompt, prompt_chunks


@dataclass
class _Job:
    prompt: list[int]
    gen: Completion
    done: Future[Decoded]


@dataclass
class _Slot:
    """One llama.cpp sequence id: the prompt whose cells it holds, and its job if live."""

    seq: int
    cached: tuple[int, ...] = ()  # prompt tokens in its cells (evaluated in batches >= 2)
    end: np.ndarray | None = None  # the logits at the end of `cached` (a whole prompt)
    job: _Job | None = None
    row: int = -1  # its row in the last decode; -1: its first step reads `end`
    pos: int = 0  # the position of its next token
    used: int = 0  # when it last took a job (least recently used slots are taken first)


def batch_context(lib: Any, llm: Any, n_ctx: int, sequences: int) -> Any:
    """A second llama.cpp context on `llm`'s loaded weights for `sequences` sequences at
    once, `n_ctx` tokens each, each in a KV stream of its own; every other setting copied
    from `llm`'s own context (flash attention off, as there)."""
    own = llm.context_params
    params = type(own)()
    ctypes.memmove(ctypes.byref(params), ctypes.byref(own), ctypes.sizeof(own))
    params.n_ctx = n_ctx * sequences
    params.n_seq_max = sequences
    params.kv_unified = False
    ctx = lib.llama_init_from_model(llm.model, params)
    if not ctx:
        raise EngineError(f"cannot create a context for batch.sequences={sequences} "
                          f"(n_ctx {n_ctx} per sequence): out of memory?")
    return ctx


class BatchDecoder:
    """Owns a context of `sequences` sequences (a KV stream each) and the thread that
    decodes them; `run` is called from any thread and blocks until its sequence ends."""

    def __init__(self, lib: Any, ctx: Any, n_vocab: int, n_batch: int,
                 is_eog: Callable[[int], bool], sequences: int, reuse: bool = True) -> None:
        self._lib = lib
        self._ctx = ctx
        self._memory = lib.llama_get_memory(ctx)
        self.n_vocab = n_vocab
        self.n_batch = n_batch
        self.is_eog = is_eog
        self.reuse = reuse
        self._batch = lib.llama_batch_init(max(n_batch, sequences), 0, 1)
        self._slots = [_Slot(seq) for seq in range(sequences)]
        self._queue: deque[_Job] = deque()
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._broken: BaseException | None = None  # the bug that stopped the thread
        self._tick = 0
        self.record = True  # interventions (as vbw.generate.decode.Decoder.record)
        self.record_tax = True
        # what the benchmark and the tests read: prompt tokens evaluated, decode steps of
        # generated tokens and the rows they carried (rows / steps: the mean batch)
        self.prompt_tokens = 0
        self.steps = 0
        self.rows = 0
        self.padded = 0  # padding rows (free slots between live ones)

    @property
    def sequences(self) -> int:
        return len(self._slots)

    # -- the callers' side ------------------------------------------------------------

    def run(self, prompt: Sequence[int], max_tokens: int, rule: TokenRule | None = None,
            greedy_first: bool = True, sampling: Sampling | None = None) -> Decoded:
        """Complete `prompt` in the batch (as vbw.generate.decode.Decoder.run does alone)."""
        return self.submit(prompt, max_tokens, rule, greedy_first, sampling).result()

    def submit(self, prompt: Sequence[int], max_tokens: int, rule: TokenRule | None = None,
               greedy_first: bool = True, sampling: Sampling | None = None) -> Future[Decoded]:
        """Queue a completion; completions join the batch in the order they are queued."""
        job = _Job([int(t) for t in prompt],
                   self._completion(max_tokens, rule, greedy_first, sampling), Future())
        with self._cv:
            if self._broken is not None:
                raise self._broken
            if self._closed:
                raise EngineError("the batch decoder is closed")
            self._queue.append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="vbw-batch",
                                                daemon=True)
                self._thread.start()
            self._cv.notify()
        return job.done

    def _completion(self, max_tokens: int, rule: TokenRule | None, greedy_first: bool,
                    sampling: Sampling | None) -> Completion:
        return Completion(self.n_vocab, self.is_eog, max_tokens, rule, greedy_first,
                          sampling, self.record, self.record_tax)

    def clear(self) -> None:
        """Forget every cached prompt (between runs; live sequences keep theirs)."""
        with self._cv:
            for slot in self._slots:
                if slot.job is None:
                    self._lib.llama_memory_seq_rm(self._memory, slot.seq, -1, -1)
                    slot.cached, slot.end = (), None

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify()
        if self._thread is not None:
            self._thread.join()
        if self._batch is not None:
            self._lib.llama_batch_free(self._batch)
            self._batch = None

    # -- the decoding thread -----------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._closed and not self._queue and not self._live():
                    self._cv.wait()
                if self._closed:
                    self._fail_all(EngineError("the batch decoder was closed"))
                    return
                free = [s for s in self._slots if s.job is None]
                jobs = [self._queue.popleft() for _ in range(min(len(free), len(self._queue)))]
            pending = deque(jobs)
            try:
                self._choose()
                while pending:
                    self._admit(pending.popleft())
                self._decode_rows()
            except BaseException as e:  # every caller hears it: none waits forever
                for job in pending:
                    job.done.set_exception(e)
                self._fail_all(e)
                if not isinstance(e, EngineError):  # vbw's own bug: no more decoding
                    with self._cv:
                        self._broken = e
                        self._fail_all(e)
                    return

    def _live(self) -> list[_Slot]:
        return [s for s in self._slots if s.job is not None]

    def _fail_all(self, exc: BaseException) -> None:
        for slot in self._live():
            self._finish(slot, exc)
        while self._queue:
            self._queue.popleft().done.set_exception(exc)

    def _finish(self, slot: _Slot, exc: BaseException | None = None) -> None:
        job, slot.job = slot.job, None
        assert job is not None
        # generated cells go; the prompt's stay for the next prompt that shares them
        self._lib.llama_memory_seq_rm(self._memory, slot.seq, len(slot.cached), -1)
        if exc is None:
            job.done.set_result(job.gen.result())
        else:
            job.done.set_exception(exc)

    def _logits(self, row: int) -> np.ndarray:
        ptr = self._lib.llama_get_logits_ith(self._ctx, row)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    def _advance(self, slot: _Slot) -> None:
        """Choose the slot's next token from its logits; finish it when it is over."""
        job = slot.job
        assert job is not None
        row, end = slot.row, slot.end
        read = (lambda: self._logits(row)) if row >= 0 else (lambda: end)
        try:
            over = job.gen.take(job.gen.choose(read))  # type: ignore[arg-type]
        except EngineError as e:
            self._finish(slot, e)
            return
        if over:
            self._finish(slot)

    def _choose(self) -> None:
        for slot in self._live():
            self._advance(slot)

    def _decode_rows(self) -> None:
        """One token of every live sequence in one decode. llama.cpp splits a batch at a
        gap in its sequence ids (a KV stream per sequence), so a free slot between two
        live ones gets a padding row, whose cell is removed again."""
        live = self._live()
        if not live:
            return
        first, last = live[0].seq, live[-1].seq
        rows = self._slots[first:last + 1]
        batch = self._batch
        batch.n_tokens = len(rows)
        for i, slot in enumerate(rows):
            job = slot.job
            batch.token[i] = job.gen.tokens[-1] if job is not None else 0
            batch.pos[i] = slot.pos if job is not None else len(slot.cached)
            batch.seq_id[i][0] = slot.seq
            batch.n_seq_id[i] = 1
            batch.logits[i] = job is not None
        self._call_decode()
        for i, slot in enumerate(rows):
            if slot.job is not None:  # llama_get_logits_ith takes the batch position
                slot.row, slot.pos = i, slot.pos + 1
            else:
                self._lib.llama_memory_seq_rm(self._memory, slot.seq, len(slot.cached), -1)
        self.steps += 1
        self.rows += len(live)
        self.padded += len(rows) - len(live)

    def _call_decode(self) -> None:
        code = self._lib.llama_decode(self._ctx, self._batch)
        if code != 0:
            raise EngineError(f"llama_decode returned {code} (batch.sequences="
                              f"{self.sequences}: the KV cache may be full)")

    # -- joining the batch ---------------------------------------------------------------

    def _admit(self, job: _Job) -> None:
        """Give the job a free slot, bring its cells to the prompt, take its first token."""
        slot = self._slot_for(job.prompt)
        self._tick += 1
        slot.used, slot.job, slot.row = self._tick, job, -1
        job.gen.start = time.perf_counter()
        try:
            self._prefill(slot, job.prompt)
        except EngineError as e:
            self._lib.llama_memory_seq_rm(self._memory, slot.seq, -1, -1)
            slot.cached, slot.end = (), None
            self._finish(slot, e)
            return
        self._advance(slot)

    def _slot_for(self, prompt: Sequence[int]) -> _Slot:
        """The free slot whose cells hold most of the prompt, else the least recently
        used (a prompt just freed is the likeliest prefix of its item's next one)."""
        free = [s for s in self._slots if s.job is None]
        return max(free, key=lambda s: (common_prefix(s.cached, prompt) if self.reuse
                                        else 0, -s.used))

    def _prefill(self, slot: _Slot, tokens: list[int]) -> None:
        """Bring the slot's cells to `tokens`. A whole prompt held by a slot is shared with
        its end logits: in place, or by copying that slot's stream (llama.cpp copies a
        stream only whole; cells past the prompt are dropped); a prefix the slot itself
        holds is kept under the exact-reuse rule."""
        lib, mem, seq = self._lib, self._memory, slot.seq
        whole = self._holder(slot, tokens)
        if whole is not None:
            if whole is not slot:
                lib.llama_memory_seq_rm(mem, seq, -1, -1)
                lib.llama_memory_seq_cp(mem, whole.seq, seq, -1, -1)
                slot.cached, slot.end = whole.cached, whole.end
            lib.llama_memory_seq_rm(mem, seq, len(tokens), -1)
            slot.pos = len(tokens)
            return
        keep = common_prefix(slot.cached, tokens) if self.reuse else 0
        keep = max(0, min(keep, len(tokens) - 2))
        lib.llama_memory_seq_rm(mem, seq, keep if keep > 0 else -1, -1)
        for start, end in prompt_chunks(keep, len(tokens), self.n_batch):
            self._decode_prompt(seq, tokens, start, end)
        self.prompt_tokens += len(tokens) - keep
        slot.cached = tuple(tokens) if len(tokens) > 1 else ()
        slot.end = self._logits(-1).copy()
        slot.pos = len(tokens)

    def _holder(self, slot: _Slot, tokens: list[int]) -> _Slot | None:
        """A slot whose cells hold exactly this whole prompt, with its end logits (the
        taking slot itself first)."""
        if not self.reuse:
            return None
        want = tuple(tokens)
        for other in [slot, *self._slots]:
            if other.end is not None and other.cached == want:
                return other
        return None

    def _decode_prompt(self, seq: int, tokens: Sequence[int], start: int, end: int) -> None:
        fill_prompt(self._batch, tokens[start:end], start, seq)
        self._call_decode()

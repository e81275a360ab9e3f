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
from vbw.generate.decode import fill_prompt, fill_row, prompt_chunks
from vbw.generate.slots import Slot, Slots


# llama.cpp's CPU flash attention tiles a stream's rows from this many (GGML_FA_TILE_Q)
FA_TILE = 64
# KV streams beyond `sequences`: a free one always exists to keep the cells of a slot
# taken or overwritten by a move (vbw.generate.slots.Slots._spare)
SPARE = 1


@dataclass
class _Job:
    prompt: list[int]
    gen: Completion
    done: Future[Decoded]


def batch_context(lib: Any, llm: Any, n_ctx: int, sequences: int,
                  flash_attn: bool = False) -> Any:
    """A second llama.cpp context on `llm`'s loaded weights for `sequences` sequences at
    once, `n_ctx` tokens each, each in a KV stream of its own (and SPARE more streams),
    with flash attention if `flash_attn` (else off, as in `llm`'s); every other setting
    copied from `llm`'s."""
    own = llm.context_params
    params = type(own)()
    ctypes.memmove(ctypes.byref(params), ctypes.byref(own), ctypes.sizeof(own))
    params.n_ctx = n_ctx * (sequences + SPARE)
    params.n_seq_max = sequences + SPARE
    params.kv_unified = False
    params.flash_attn_type = (lib.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn
                              else lib.LLAMA_FLASH_ATTN_TYPE_DISABLED)
    ctx = lib.llama_init_from_model(llm.model, params)
    if not ctx:
        raise EngineError(f"cannot create a context for batch.sequences={sequences} "
                          f"(n_ctx {n_ctx} per sequence): out of memory?")
    return ctx


class BatchDecoder:
    """Owns a context of `sequences` sequences (a KV stream each, and SPARE more) and the
    thread that decodes them; `run` is called from any thread and blocks until its
    sequence ends."""

    def __init__(self, lib: Any, ctx: Any, n_vocab: int, n_batch: int,
                 is_eog: Callable[[int], bool], sequences: int, reuse: bool = True,
                 flash_attn: bool = False) -> None:
        self._lib = lib
        self._ctx = ctx
        self._memory = lib.llama_get_memory(ctx)
        self.n_vocab = n_vocab
        self.n_batch = n_batch
        self.is_eog = is_eog
        self._batch = lib.llama_batch_init(max(n_batch, sequences), 0, 1)
        # flash attention (a context made with it): llama.cpp's CPU kernel walks each row
        # over its cells one by one (a row's result then depends on its own cells only)
        # except for a single stream's single row, split in chunks of its cells, and a
        # stream's chunk of FA_TILE rows or more, tiled: lone rows get a padding row, and
        # prompts are evaluated in chunks below the tile (docs/design.md)
        self.flash_attn = flash_attn
        self.prompt_chunk = min(n_batch, FA_TILE - 1) if flash_attn else n_batch
        self.sequences = sequences
        self.slots = Slots(lib, self._memory, sequences + SPARE, reuse,
                           keep_generated=flash_attn)
        self._queue: deque[_Job] = deque()
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._broken: BaseException | None = None  # the bug that stopped the thread
        self.record = True  # interventions (as vbw.generate.decode.Decoder.record)
        self.record_tax = True
        # what the benchmark and the tests read: prompt tokens evaluated, decode steps of
        # generated tokens and the rows they carried (rows / steps: the mean batch)
        self.prompt_tokens = 0
        self.steps = 0
        self.rows = 0
        self.padded = 0  # steps given a padding row (flash attention, one live sequence)

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
            for slot in self.slots.free():
                self.slots.forget(slot)

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
                while not self._closed and not self._queue and not self.slots.live():
                    self._cv.wait()
                if self._closed:
                    self._fail_all(EngineError("the batch decoder was closed"))
                    return
                jobs = self._waiting(self.sequences - len(self.slots.live()))
            pending = deque(jobs)
            try:
                self._choose()
                while pending:
                    self._admit(pending.popleft())
                self.slots.close_gaps()
                self._decode_rows()
            except BaseException as e:  # every caller hears it: none waits forever
                for job in pending:
                    job.done.set_exception(e)
                with self._cv:  # under the lock: no job is queued past the failure
                    if not isinstance(e, EngineError):  # vbw's own bug: no more decoding
                        self._broken = e
                    self._fail_all(e)
                if self._broken is not None:
                    return

    def _waiting(self, n: int) -> list[_Job]:
        """Up to `n` queued jobs to admit: first those whose prompt continues what a free
        slot holds (all of its last prompt: a twin of that prompt, or
        reason_then_constrain after its free text), which would be lost to the next job
        taking the slot, then the rest in the order queued."""
        if not n or not self._queue:
            return []
        held = [list(s.cached[:s.end_at]) for s in self.slots.free() if s.end_at]
        first = [job for job in self._queue if any(
            job.prompt[:len(prompt)] == prompt for prompt in held)][:n]
        for job in first:
            self._queue.remove(job)
        return first + [self._queue.popleft() for _ in range(min(n - len(first),
                                                                 len(self._queue)))]

    def _fail_all(self, exc: BaseException) -> None:
        for slot in self.slots.live():
            self._finish(slot, exc)
        while self._queue:
            self._queue.popleft().done.set_exception(exc)

    def _finish(self, slot: Slot, exc: BaseException | None = None) -> None:
        job = slot.job
        self.slots.release(slot, [*job.prompt, *job.gen.tokens] if exc is None else ())
        if exc is None:
            job.done.set_result(job.gen.result())
        else:
            job.done.set_exception(exc)

    def _logits(self, row: int) -> np.ndarray:
        ptr = self._lib.llama_get_logits_ith(self._ctx, row)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    def _advance(self, slot: Slot) -> None:
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
        for slot in self.slots.live():
            self._advance(slot)

    def _decode_rows(self) -> None:
        """One token of every live sequence in one decode (their slots are contiguous:
        vbw.generate.slots.Slots.close_gaps; rows in increasing sequence ids, which
        llama.cpp needs to keep a non-unified batch in one ubatch)."""
        live = self.slots.live()
        if not live:
            return
        pad = self._pad(live)
        rows: list[tuple[int, int, int, Slot | None]] = [
            (s.seq, s.pos, s.job.gen.tokens[-1], s) for s in live]  # type: ignore[union-attr]
        if pad is not None:
            rows.append((*pad, live[0].job.gen.tokens[-1], None))  # type: ignore[union-attr]
        rows.sort(key=lambda r: r[0])
        batch = self._batch
        batch.n_tokens = len(rows)
        for i, (seq, pos, token, slot) in enumerate(rows):
            fill_row(batch, i, token, pos, seq, logits=slot is not None)
        self._call_decode()
        if pad is not None:
            self._lib.llama_memory_seq_rm(self._memory, *pad, -1)
        for i, (_, _, _, slot) in enumerate(rows):  # llama_get_logits_ith: batch position
            if slot is not None:
                slot.row, slot.pos = i, slot.pos + 1
        self.steps += 1
        self.rows += len(live)

    def _pad(self, live: list[Slot]) -> tuple[int, int] | None:
        """With flash attention, a lone live sequence gets a padding row in the stream next
        to it (its row's kernel path is then the one it has in company); returns the
        (sequence, position) of the padding cell, to drop after the step."""
        if not self.flash_attn or len(live) != 1:
            return None
        seq = live[0].seq + 1 if live[0].seq + 1 < len(self.slots.all) else live[0].seq - 1
        self.padded += 1
        return seq, int(self._lib.llama_memory_seq_pos_max(self._memory, seq)) + 1

    def _call_decode(self) -> None:
        code = self._lib.llama_decode(self._ctx, self._batch)
        if code != 0:
            raise EngineError(f"llama_decode returned {code} (batch.sequences="
                              f"{self.sequences}: the KV cache may be full)")

    # -- joining the batch ---------------------------------------------------------------

    def _admit(self, job: _Job) -> None:
        """Give the job a free slot, bring its cells to the prompt, take its first token."""
        slot = self.slots.take(job.prompt, job)
        job.gen.start = time.perf_counter()
        try:
            self._prefill(slot, job.prompt)
        except EngineError as e:
            self.slots.forget(slot)
            self._finish(slot, e)
            return
        self._advance(slot)

    def _prefill(self, slot: Slot, tokens: list[int]) -> None:
        """Bring the slot's cells to `tokens` from the slot that holds most of them
        (vbw.generate.slots): a whole prompt with its end logits is not evaluated again;
        past a prefix, the rest is evaluated in chunks under the exact-reuse rule."""
        source, keep = self.slots.source(slot, tokens)
        self.slots.bring(slot, source, keep)
        slot.pos = len(tokens)
        if keep == len(tokens):
            return
        for start, end in prompt_chunks(keep, len(tokens), self.prompt_chunk):
            self._decode_prompt(slot.seq, tokens, start, end)
        self.prompt_tokens += len(tokens) - keep
        slot.cached = tuple(tokens) if len(tokens) > 1 else ()
        slot.end, slot.end_at = self._logits(-1).copy(), len(slot.cached)

    def _decode_prompt(self, seq: int, tokens: Sequence[int], start: int, end: int) -> None:
        fill_prompt(self._batch, tokens[start:end], start, seq)
        self._call_decode()

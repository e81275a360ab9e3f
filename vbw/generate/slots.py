"""The KV streams of a batch (vbw.generate.batched): which stream a sequence takes, what
each one's cells hold, and the cells moved between them.

llama.cpp gives each sequence of a non-unified context a KV stream of its own, copies
between streams only whole, and splits a batch at a gap in its sequence ids. So a
prompt's cells come from the stream holding most of them (copied whole, the cells past
the reused part dropped), live sequences are kept contiguous by moving the highest one
down into a gap, and cells a slot is about to lose go first to the free slot used
longest ago. Why: docs/design.md, section vbw.generate.batched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vbw.generate.decode import common_prefix


@dataclass
class Slot:
    """One llama.cpp sequence id: the prompt whose cells it holds, and its job if live."""

    seq: int
    cached: tuple[int, ...] = ()  # the tokens its cells hold (see Slots.release)
    end: np.ndarray | None = None  # the logits at the end of its last prompt, when held
    end_at: int = 0  # that prompt's length (its tokens: cached[:end_at])
    job: Any = None  # the live sequence (vbw.generate.batched's job), None when free
    row: int = -1  # its row in the last decode; -1: its first step reads `end`
    pos: int = 0  # the position of its next token
    used: int = 0  # when it last took or left a job (least recently used: taken first)


class Slots:
    """The `sequences` streams of one context and the moves between them."""

    # a stream copy (every layer's K and V of the stream, its whole n_ctx) costs about as
    # much as evaluating a few prompt tokens (docs/design.md): another slot's prefix is
    # taken when it spares at least this many
    COPY_WORTH = 8

    def __init__(self, lib: Any, memory: Any, sequences: int, reuse: bool = True,
                 keep_generated: bool = False) -> None:
        self._lib = lib
        self._memory = memory
        self.reuse = reuse
        self.keep_generated = keep_generated
        self.all = [Slot(seq) for seq in range(sequences)]
        # what the benchmark reads: live sequences moved down into a gap, and cells copied
        # away from a slot taken (Slots._spare)
        self.moved = 0
        self.spared = 0
        self._tick = 0

    def live(self) -> list[Slot]:
        return [s for s in self.all if s.job is not None]

    def free(self) -> list[Slot]:
        return [s for s in self.all if s.job is None]

    def take(self, prompt: Sequence[int], job: Any) -> Slot:
        """Give `job` the free slot that leaves the fewest gaps between live ones (each
        is closed by a move: `close_gaps`), then whose cells hold most of the prompt
        (another slot's come by a stream copy), then the least recently used (a prompt
        just freed is the likeliest prefix of its item's next)."""
        live = [s.seq for s in self.live()]

        def gaps(slot: Slot) -> int:
            if not live:
                return 0
            return max(live[-1], slot.seq) - min(live[0], slot.seq) - len(live)

        slot = min(self.free(), key=lambda s: (gaps(s), -(common_prefix(s.cached, prompt)
                                                          if self.reuse else 0), s.used))
        self._spare(slot, prompt)
        slot.used, slot.job, slot.row = self._next(), job, -1
        return slot

    def _spare(self, slot: Slot, prompt: Sequence[int]) -> None:
        """Before `prompt` cuts the slot's cells, copy them into the free slot whose cells
        were used longest ago, when that is longer ago than these: the prompt the slot
        held (or the text it just generated) stays for its item's next arm, and the
        least recently used cells go instead."""
        if not self.reuse or len(slot.cached) - common_prefix(slot.cached, prompt) < \
                self.COPY_WORTH:
            return
        spare = min((s for s in self.free() if s is not slot), key=lambda s: s.used,
                    default=None)
        if spare is not None and spare.used < slot.used:
            self.bring(spare, slot, None)
            spare.used = slot.used
            self.spared += 1

    def _next(self) -> int:
        self._tick += 1
        return self._tick

    def source(self, slot: Slot, tokens: Sequence[int]) -> tuple[Slot, int]:
        """(the slot to take cells from, how many tokens they serve): a slot holding
        exactly this whole prompt with its end logits (the taking slot first), else the
        longest prefix the exact-reuse rule keeps (never the last two tokens), from the
        taking slot unless another's spares COPY_WORTH tokens more."""
        if not self.reuse:
            return slot, 0
        want = tuple(tokens)
        for other in [slot, *self.all]:
            if other.end is not None and other.end_at == len(want) and \
                    other.cached[:len(want)] == want:
                return other, len(tokens)

        def reusable(other: Slot) -> int:
            return max(0, min(common_prefix(other.cached, tokens), len(tokens) - 2))

        best = max(self.all, key=reusable)
        if reusable(best) - reusable(slot) >= self.COPY_WORTH:
            return best, reusable(best)
        return slot, reusable(slot)

    def bring(self, slot: Slot, source: Slot, keep: int | None) -> None:
        """Leave in `slot` the first `keep` cells of `source`'s (its own when the same;
        None: all of them)."""
        lib, mem = self._lib, self._memory
        if source is not slot:
            lib.llama_memory_seq_rm(mem, slot.seq, -1, -1)
            lib.llama_memory_seq_cp(mem, source.seq, slot.seq, -1, -1)
            slot.cached, slot.end, slot.end_at = source.cached, source.end, source.end_at
        if keep is not None:
            lib.llama_memory_seq_rm(mem, slot.seq, keep if keep > 0 else -1, -1)
            slot.cached = slot.cached[:keep]
            if slot.end_at > keep:
                slot.end = None

    def forget(self, slot: Slot) -> None:
        """Drop every cell of the slot and what it held."""
        self._lib.llama_memory_seq_rm(self._memory, slot.seq, -1, -1)
        slot.cached, slot.end, slot.end_at = (), None, 0

    def release(self, slot: Slot, tokens: Sequence[int] = ()) -> Any:
        """Free the slot; returns its job. Its prompt's cells stay for the next prompt
        that shares them. With `keep_generated` (flash attention: a decoded row's cells
        are bitwise the cells a prompt evaluation gives, docs/design.md) so do the cells
        of the tokens it generated: `tokens` is its prompt and output, of which the first
        `slot.pos` are in its cells; else they are dropped (the exact-reuse rule)."""
        job, slot.job, slot.used = slot.job, None, self._next()
        if self.keep_generated and slot.cached and len(slot.cached) < slot.pos <= len(tokens):
            slot.cached = tuple(tokens[:slot.pos])
        self._lib.llama_memory_seq_rm(self._memory, slot.seq, len(slot.cached), -1)
        return job

    def close_gaps(self) -> None:
        """Move the highest live sequence into the lowest free slot below it until the
        live ones are contiguous. A padding row would cost a row's compute at every step;
        the stream copy costs a few prompt tokens once and is bitwise (same cells, same
        positions): the sequence decodes on unchanged."""
        while True:
            live = self.live()
            holes = [s for s in self.all[live[0].seq:live[-1].seq] if s.job is None] \
                if live else []
            if not holes:
                return
            top, hole = live[-1], holes[0]
            self._spare(hole, top.cached)
            self.bring(hole, top, None)
            hole.used, hole.job, hole.row, hole.pos = top.used, top.job, top.row, top.pos
            self.release(top)
            self.moved += 1

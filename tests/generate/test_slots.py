"""The KV streams of a batch (vbw.generate.slots): a prefix another stream holds is copied
when it spares COPY_WORTH tokens, and a gap between live sequences is closed by moving
the highest one down, with every record the one-sequence loop gives."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import numpy as np
import pytest

from tests.generate.fakellama import N_VOCAB, record, script, scripted_model
from tests.generate.fakellama import runtime as fake_runtime
from vbw.generate.batched import _Job
from vbw.generate.slots import Slots


@pytest.mark.parametrize("shared", [7, 8])
def test_a_prefix_another_slot_holds_is_copied_when_it_spares_enough(shared: int) -> None:
    """Two prompts queued together take two slots; the second reuses the first's prefix
    by copying its stream when that spares at least COPY_WORTH (8) tokens."""
    assert Slots.COPY_WORTH == 8
    wanted, _ = script(8, steps=30)
    first = list(range(1, 13))  # 12 tokens
    second = first[:shared] + [40] * (12 - shared)
    scripted = scripted_model(wanted, 12, 8)

    def model(context):  # type: ignore[no-untyped-def]  # a chunk's logits: not read
        return scripted(context) if len(context) >= 12 else np.zeros(N_VOCAB, np.float32)
    rt = fake_runtime(model, sequences=2)
    out = rt.complete_many([(first, 6, None, True, None), (second, 6, None, True, None)])
    copied = shared >= 8
    assert rt.batcher.prompt_tokens == 12 + (12 - shared if copied else 12)
    alone = [fake_runtime(model).complete(p, max_tokens=6) for p in (first, second)]
    assert [record(g) for g in out] == [record(g) for g in alone]
    rt.batcher.close()


def test_a_gap_between_live_slots_is_closed_by_moving_the_highest_sequence() -> None:
    """Slots 0, 1 and 2 live, slot 1 ends first: llama.cpp would split a batch at the gap
    in sequence ids (the fake refuses one), so slot 2's sequence moves into slot 1, once,
    and decodes on with its cells; slot 2 keeps only its prompt."""
    rt = fake_runtime(scripted_model([4] * 20, 2, 0), sequences=3)
    b = rt.batcher
    jobs = [_Job(list(p), b._completion(cap, None, True, None), Future())
            for p, cap in (([1, 9], 12), ([2, 9], 2), ([3, 9], 12))]
    b._queue.extend(jobs)  # admitted in this order, into slots 0, 1, 2
    b._thread = threading.Thread(target=b._loop, daemon=True)
    b._thread.start()
    out = [job.done.result(timeout=10) for job in jobs]
    assert [d.tokens for d in out] == [[4] * 12, [4] * 2, [4] * 12]
    assert b.slots.moved == 1 and b.rows == 12 + 2 + 12 - 3  # the first tokens need no row
    assert rt._lib.rows[3:] == [3, 2] + [2] * 9  # after three prompts: no padding row
    assert rt._lib.seqs[1] == [3, 9] and rt._lib.seqs[2] == [3, 9]
    b.close()


@pytest.mark.parametrize("flash_attn", [True, False])
def test_a_prompt_extending_a_finished_text_reuses_its_cells_under_flash_attention(
        flash_attn: bool) -> None:
    """With flash attention a finished sequence's stream keeps its generated tokens'
    cells (bitwise a prompt evaluation's there: the SmolLM2 test in test_batched.py), so a
    prompt extending its text (reason_then_constrain's extends the free text) evaluates
    only what is new; without it only the prompt's cells are kept (the exact-reuse rule)."""
    wanted, _ = script(3, steps=30)
    prompt = [1, 9, 4, 4]
    rt = fake_runtime(scripted_model(wanted, 4, 3), sequences=2, flash_attn=flash_attn)
    b = rt.batcher
    done = b.run(prompt, 6)
    decoded = prompt + done.tokens[:-1]  # the last token chosen is never decoded
    assert rt._lib.seqs[0] == (decoded if flash_attn else prompt)
    assert b.slots.all[0].cached == tuple(rt._lib.seqs[0])
    before = b.prompt_tokens
    extended = decoded + [done.tokens[-1], 7, 7]
    b.run(extended, 4)
    assert b.prompt_tokens - before == (3 if flash_attn else len(done.tokens) + 2)
    before = b.prompt_tokens
    b.run(prompt, 6)  # its last two tokens again; the longer cells go to slot 1 first
    assert b.prompt_tokens - before == 2 and b.slots.spared == 1
    b.run(extended, 4)  # slot 1 holds it whole, with its end logits
    assert b.prompt_tokens - before == 2
    b.close()


@pytest.mark.parametrize("lost", [7, 8])
def test_a_slot_taken_gives_its_cells_to_the_least_recently_used_one(lost: int) -> None:
    """A prompt that would cut COPY_WORTH (8) or more of a slot's cells first copies them
    into the free slot used longest ago: the prompt held before is then not evaluated
    again. Fewer are simply cut."""
    wanted, _ = script(9, steps=30)
    first = list(range(1, 13))  # 12 tokens
    second = first[:12 - lost] + [40] * lost
    scripted = scripted_model(wanted, 12, 9)

    def model(context):  # type: ignore[no-untyped-def]  # a chunk's logits: not read
        return scripted(context) if len(context) >= 12 else np.zeros(N_VOCAB, np.float32)
    rt = fake_runtime(model, sequences=2)
    b = rt.batcher
    rt.complete(first, max_tokens=6)  # slot 0
    rt.complete(second, max_tokens=6)  # slot 0 again: it holds most of the prompt
    assert b.slots.spared == (lost >= 8)
    assert rt._lib.seqs.get(1, []) == (first if lost >= 8 else [])
    before = b.prompt_tokens
    rt.complete(first, max_tokens=6)
    assert b.prompt_tokens - before == (0 if lost >= 8 else lost)
    b.close()

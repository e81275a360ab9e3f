"""Several sequences in one decode (vbw.generate.batched): each sequence's record is the
one the one-sequence loop gives it (tokens, interventions, tax), on scripted models and
rules and on the real SmolLM2; rows share llama_decode calls; a prompt a slot holds is
evaluated once; a failing sequence fails alone."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import pytest

from tests.generate.fakellama import EOG, N_VOCAB, ScriptedRule, record, script, scripted_model
from tests.generate.fakellama import runtime as fake_runtime
from vbw.errors import EngineError
from vbw.generate.batched import _Job
from vbw.generate.backend import Generation, Sampling

PROMPTS = [[1, 9, 4], [1, 9, 5, 5], [3, 4, 4, 8, 1], [9, 9]]


def _script(seed: int) -> tuple[list[int], list[set[int]]]:
    return script(seed, steps=30)


def _model_of(prompts: list[list[int]], seed: int):  # type: ignore[no-untyped-def]
    """One scripted model per prompt, told apart by the prompt's first tokens."""
    scripts = {tuple(p): scripted_model(_script(seed + i)[0], len(p), seed + i)
               for i, p in enumerate(prompts)}

    def logits(context):  # type: ignore[no-untyped-def]
        for prompt, model in scripts.items():
            if tuple(context[:len(prompt)]) == prompt:
                return model(context)
        if any(tuple(p[:len(context)]) == tuple(context) for p in scripts):
            return np.zeros(N_VOCAB, np.float32)  # a prompt's chunk: logits not read
        raise AssertionError(f"no script for {context}")
    return logits


def _complete(rt, i: int, seed: int, sampling: Sampling | None = None) -> Generation:  # type: ignore[no-untyped-def]
    rule = ScriptedRule(_script(seed + i)[1])
    return rt.complete(PROMPTS[i], max_tokens=100, rule=rule, sampling=sampling)


@pytest.mark.parametrize("sampled", [False, True])
@pytest.mark.parametrize("sequences", [2, 4])
def test_every_sequence_of_a_batch_records_what_it_records_alone(sequences: int,
                                                                 sampled: bool) -> None:
    seed = 7
    model = _model_of(PROMPTS, seed)
    sampling = (lambda i: Sampling(temperature=0.8, top_k=0, top_p=1.0, min_p=0.0,
                                   seed=100 + i)) if sampled else (lambda i: None)
    alone = [_complete(fake_runtime(model), i, seed, sampling(i)) for i in range(4)]
    rt = fake_runtime(model, sequences=sequences)
    with ThreadPoolExecutor(4) as pool:
        batched = list(pool.map(lambda i: _complete(rt, i, seed, sampling(i)), range(4)))
    assert [record(g) for g in batched] == [record(g) for g in alone]
    assert all(g.interventions and g.tax is not None and g.tax > 0 for g in batched)
    assert max(rt._lib.rows) >= 2  # sequences did share decode calls
    rt.batcher.close()


def test_a_one_sequence_batch_records_the_same_as_the_loop() -> None:
    seed = 3
    model = _model_of(PROMPTS, seed)
    for i in range(4):
        rt = fake_runtime(model, sequences=2)
        rt.batcher.slots.all = rt.batcher.slots.all[:1]  # one slot: one sequence at a time
        assert record(_complete(rt, i, seed)) == record(_complete(fake_runtime(model), i,
                                                                    seed))
        rt.batcher.close()


@pytest.mark.parametrize("first", [0, 1])
def test_with_flash_attention_a_lone_sequence_decodes_beside_a_padding_row(first: int) -> None:
    """batch.flash_attn: a step with one live sequence carries a padding row in the next
    stream (so the row takes the kernel path it has in company), whose cell is dropped
    after the step: the record is unchanged and the stream left as it was (the lone
    sequence's stream keeps its prompt and generated cells: flash attention). The rows go
    in increasing sequence ids (the fake, as llama.cpp, would split the batch otherwise,
    and the lone row would be alone again), the padding row first below the top slot."""
    seed = 4
    model = _model_of(PROMPTS, seed)
    rt = fake_runtime(model, sequences=2, flash_attn=True)
    if first:  # slot 0 now holds prompt 2's cells: prompt 0 takes slot 1, the top one
        _complete(rt, 2, seed)
    steps_before, other = rt.batcher.steps, list(rt._lib.seqs.get(1 - first, []))
    assert len(other) > len(PROMPTS[2]) if first else not other
    gen = _complete(rt, 0, seed)
    assert record(gen) == record(_complete(fake_runtime(model), 0, seed))
    steps = rt.batcher.steps - steps_before
    assert steps > 1 and rt.batcher.padded == rt.batcher.steps
    assert rt._lib.rows[-steps:] == [2] * steps  # every generated-token decode: two rows
    assert rt._lib.seqs.get(1 - first, []) == other
    kept = rt.batcher.slots.all[first].cached
    assert kept[:len(PROMPTS[0])] == tuple(PROMPTS[0]) and len(kept) == len(PROMPTS[0]) + steps
    assert rt._lib.seqs[first] == list(kept)
    rt.batcher.close()


@pytest.mark.parametrize("length, chunks", [(63, [63]), (64, [62, 2]), (127, [63, 62, 2]),
                                            (128, [63, 63, 2])])
def test_with_flash_attention_a_prompt_is_evaluated_in_chunks_below_the_tile(
        length: int, chunks: list[int]) -> None:
    """llama.cpp's CPU flash attention tiles a stream's chunk of 64 rows or more (its
    result then depends on where the cells sit); below that each row is walked over its
    own cells: a prompt goes in chunks of at most 63, the last never a lone token."""
    prompt = [1 + i % 7 for i in range(length)]
    model = _model_of([prompt], 5)
    rt = fake_runtime(model, n_batch=512, sequences=2, flash_attn=True)
    rt.complete(prompt, max_tokens=6)
    assert rt._lib.rows[:len(chunks)] == chunks
    assert rt.batcher.prompt_tokens == length
    rt.batcher.close()
    rt = fake_runtime(model, n_batch=512, sequences=2)  # off: chunks of n_batch
    rt.complete(prompt, max_tokens=6)
    assert rt._lib.rows[0] == length
    rt.batcher.close()


def test_with_flash_attention_a_shared_prefix_is_reused() -> None:
    """Every row walked over its own cells, a prefix's cells are the same wherever reuse
    cut the prompt: only the part past it is evaluated, as without flash attention."""
    wanted, _ = _script(5)
    rt = fake_runtime(scripted_model(wanted, 4, 5), sequences=3, flash_attn=True)
    rt.complete([1, 9, 4, 4], max_tokens=6)
    rt.complete([1, 9, 4, 4], max_tokens=6)
    assert rt.batcher.prompt_tokens == 4
    rt.complete([1, 9, 4, 5], max_tokens=6)  # shares 3 tokens: the last two evaluated again
    assert rt.batcher.prompt_tokens == 4 + 2
    rt.batcher.close()


def test_a_whole_prompt_held_by_a_slot_is_evaluated_once() -> None:
    wanted, _ = _script(5)
    rt = fake_runtime(scripted_model(wanted, 4, 5), sequences=3)
    texts = {rt.complete([1, 9, 4, 4], max_tokens=6).text for _ in range(5)}
    assert len(texts) == 1 and rt.batcher.prompt_tokens == 4
    rt.complete([1, 9, 4, 5], max_tokens=6)  # shares 3 tokens: the last two evaluated again
    assert rt.batcher.prompt_tokens == 4 + 2
    rt.batcher.close()


def test_a_prompt_queued_k_times_at_once_is_evaluated_once() -> None:
    """Five completions of one prompt queued together land in five slots: the first
    evaluates it, the others copy its stream (whole, as llama.cpp copies streams)."""
    wanted, _ = _script(6)
    rt = fake_runtime(scripted_model(wanted, 4, 6), sequences=5)
    request = ([1, 9, 4, 4], 6, None, True, None)
    out = rt.complete_many([request] * 5)
    assert len({g.text for g in out}) == 1 and rt.batcher.prompt_tokens == 4
    assert max(rt._lib.rows) == 5  # the five decoded side by side
    rt.batcher.close()


def test_a_job_continuing_what_a_free_slot_holds_joins_first() -> None:
    """Admission takes first the queued jobs whose prompt starts with a free slot's whole
    last prompt (reason_then_constrain after its free text, a twin of that prompt): the
    next job into that slot would cut its cells. The rest keep their queue order."""
    wanted, _ = _script(5)
    rt = fake_runtime(scripted_model(wanted, 4, 5), sequences=2)
    b = rt.batcher
    rt.complete([1, 9, 4, 4], max_tokens=6)
    jobs = [_Job(p, b._completion(4, None, True, None), Future())
            for p in ([2, 9, 4, 4], [1, 9, 4], [3, 3, 3, 3], [1, 9, 4, 4, 8, 8], [1, 9, 4, 4])]
    b._queue.extend(jobs)
    assert b._waiting(0) == []
    assert b._waiting(1) == [jobs[3]]
    assert b._waiting(3) == [jobs[4], jobs[0], jobs[1]]
    assert list(b._queue) == [jobs[2]]
    b._queue.clear()
    b.close()


def test_a_failing_constraint_fails_its_sequence_alone() -> None:
    seed = 11
    model = _model_of(PROMPTS, seed)
    rt = fake_runtime(model, sequences=4)

    class Broken(ScriptedRule):
        def accept(self, token: int) -> None:
            if self.k == 2:
                raise ValueError("boom")
            super().accept(token)

    def one(i: int) -> Generation | str:
        try:
            if i == 1:
                return rt.complete(PROMPTS[i], max_tokens=100,
                                   rule=Broken(_script(seed + i)[1]))
            return _complete(rt, i, seed)
        except EngineError as e:
            return str(e)

    with ThreadPoolExecutor(4) as pool:
        out = list(pool.map(one, range(4)))
    assert out[1] == "constraint failed after 2 tokens: ValueError: boom"
    alone = [_complete(fake_runtime(model), i, seed) for i in (0, 2, 3)]
    assert [record(out[i]) for i in (0, 2, 3)] == [record(g) for g in alone]  # type: ignore[arg-type]
    rt.batcher.close()


def test_waiting_sequences_join_as_others_finish() -> None:
    """Continuous batching: 2 slots, 4 completions of different lengths; never more than
    two live rows, a gap between live slots padded, every cell of a finished sequence's
    output removed."""
    wanted = [4] * 50
    rt = fake_runtime(scripted_model(wanted, 2, 0), sequences=2)
    caps = [3, 9, 5, 2]
    with ThreadPoolExecutor(4) as pool:
        out = list(pool.map(lambda c: rt.complete([c + 1, 9], max_tokens=c), caps))
    assert [g.n_tokens for g in out] == caps
    generated = [n for n in rt._lib.rows if n <= 2]
    assert max(rt._lib.rows[1:]) <= 2 and len(generated) >= max(caps)
    assert all(len(cells) <= 2 for cells in rt._lib.seqs.values())  # prompts kept only
    rt.batcher.close()


def test_a_bug_in_the_loop_reaches_every_caller_and_later_ones() -> None:
    """A failure that is not an EngineError (vbw's own bug) ends the batch thread; every
    waiting completion and every later one gets it, none waits forever."""
    rt = fake_runtime(scripted_model([4] * 9, 2, 0), sequences=2)

    def broken(slot, tokens):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("bug")

    rt.batcher._prefill = broken  # type: ignore[method-assign]
    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(rt.complete, [i + 1, 9], max_tokens=3) for i in range(3)]
        for f in futures:
            with pytest.raises(ZeroDivisionError):
                f.result(timeout=10)
    with pytest.raises(ZeroDivisionError):
        rt.complete([1, 9], max_tokens=3)
    rt.batcher.close()


def test_a_closed_batch_refuses_work() -> None:
    rt = fake_runtime(scripted_model([EOG], 2, 0), sequences=2)
    rt.batcher.close()
    with pytest.raises(EngineError, match="closed"):
        rt.complete([1, 9], max_tokens=3)


# -- the real model ------------------------------------------------------------------

LIVE_CAPS = {"free": 64, "json": 64, "package": 64}


def _items(task_name: str, n: int):  # type: ignore[no-untyped-def]
    from tests.conftest import TASK_CONF
    from vbw.task.arms import task_arms
    from vbw.task.runner import load_task

    task = load_task(TASK_CONF / f"{task_name}.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema,
                     ["unconstrained", "prompt_json", "constrained", "reason_then_constrain"])
    return task, task.items(n), arms


def _arm_records(rec) -> dict:  # type: ignore[no-untyped-def]
    return {k: (a.text, a.n_tokens, a.finish_reason, a.tax,
                [i.model_dump() for i in a.interventions or []])
            for k, a in rec.arms.items()}


@pytest.mark.live
@pytest.mark.parametrize("engine", ["outlines", "llguidance", "llamacpp"])
def test_a_batch_of_real_items_gives_each_arm_its_one_sequencerecord(runtime, smollm2_file,
                                                                      engine: str) -> None:
    """Four items in flight on SmolLM2, every arm of each: the same texts, interventions
    and tax as the one-sequence loop (each sequence has a KV stream of its own; prefixes
    copied from other streams and sequences moved into gaps change nothing)."""
    from tests.generate.conftest import THREADS
    from vbw.config import MaxTokens
    from vbw.generate.engines import make_engine
    from vbw.generate.items import generate_item
    from vbw.generate.live import in_order
    from vbw.generate.local import LocalBackend
    from vbw.generate.runtime import Runtime

    caps = MaxTokens.model_validate(LIVE_CAPS)
    batched_rt = Runtime(smollm2_file.path, n_ctx=2048, n_threads=THREADS, sequences=4)
    try:
        for task_name, n in (("bfcl_simple", 3), ("gsm8k", 2)):
            task, items, arms = _items(task_name, n)
            one = LocalBackend(runtime, make_engine(engine, runtime))
            alone = [generate_item(task, it, arms, one, caps) for it in items]
            many = LocalBackend(batched_rt, make_engine(engine, batched_rt))
            together = list(in_order(items, lambda it: generate_item(task, it, arms, many,
                                                                     caps), 4))
            assert [_arm_records(r) for r in together] == [_arm_records(r) for r in alone]
            assert any(a.interventions for r in together for a in r.arms.values())
        assert batched_rt.batcher.rows > batched_rt.batcher.steps  # batches of several
        assert batched_rt.batcher.slots.moved > 0  # sequences moved into gaps, unchanged
    finally:
        batched_rt.close()


@pytest.mark.live
def test_with_flash_attention_a_record_does_not_depend_on_its_batch(smollm2_file) -> None:
    """batch.flash_attn=true (the default): other kernels than the one-sequence loop's, but
    an arm's record is the same whichever sequences share its decode, however many, and
    whatever the streams held before (what resume, shards and merge rely on): every arm of
    3 BFCL items (prompts of several chunks, prefixes reused, lone sequences padded) at 3
    sequences per decode in a fresh context, and at 2 after another item."""
    from tests.generate.conftest import THREADS
    from vbw.config import MaxTokens
    from vbw.generate.engines import make_engine
    from vbw.generate.items import generate_item
    from vbw.generate.live import in_order
    from vbw.generate.local import LocalBackend
    from vbw.generate.runtime import Runtime

    caps = MaxTokens.model_validate(LIVE_CAPS)
    task, items, arms = _items("bfcl_simple", 4)
    records, padded = [], []
    for sequences, before in ((3, []), (2, items[3:])):
        rt = Runtime(smollm2_file.path, n_ctx=2048, n_threads=THREADS, sequences=sequences,
                     flash_attn=True)
        try:
            backend = LocalBackend(rt, make_engine("outlines", rt))
            for todo in (before, items[:3]):
                done = [_arm_records(r) for r in in_order(
                    todo, lambda it: generate_item(task, it, arms, backend, caps), sequences)]
            records.append(done)
            assert rt.batcher.rows > rt.batcher.steps
            padded.append(rt.batcher.padded)
        finally:
            rt.close()
    assert records[0] == records[1]
    assert min(padded) > 0  # lone sequences decoded beside a padding row


@pytest.mark.live
def test_with_flash_attention_generated_cells_are_a_prompt_s(smollm2_file) -> None:
    """Why a finished sequence keeps its generated tokens' cells under flash attention: a
    prompt extending a generated text (decoded in company, then alone beside a padding
    row) evaluates only what is new, and gets bitwise the end logits that evaluating the
    whole prompt in a fresh context gives."""
    from tests.generate.conftest import THREADS
    from vbw.generate.runtime import Runtime

    rt = Runtime(smollm2_file.path, n_ctx=2048, n_threads=THREADS, sequences=2,
                 flash_attn=True)
    b = rt.batcher
    try:
        for question in ("A train goes 60 miles an hour for 3 hours. How far does it go?",
                         "Explain what a JSON Schema is in two sentences."):
            prompt = rt.chat_tokens(question)
            first = b.submit(prompt, 48)
            b.run(rt.chat_tokens("Say hello."), 12)
            done = first.result()
            extended = prompt + done.tokens + rt.tokenize(" Now answer in JSON.")
            cells = max(len(s.cached) for s in b.slots.all if s.cached[:len(prompt)] ==
                        tuple(prompt))  # its output but a last token that ended it
            assert cells >= len(prompt) + len(done.tokens) - 1
            ends = []
            for fresh in (False, True):
                if fresh:
                    rt.clear_kv()
                before = b.prompt_tokens
                b.run(extended, 1)
                held = [s for s in b.slots.all
                        if s.end is not None and s.end_at == len(extended)]
                ends.append((b.prompt_tokens - before, held[0].end))
            assert [n for n, _ in ends] == [len(extended) - cells, len(extended)]
            assert np.array_equal(ends[0][1], ends[1][1])
            rt.clear_kv()
        assert b.padded > 0
    finally:
        rt.close()


@pytest.mark.live
@pytest.mark.parametrize("flash_attn", [True, False])
def test_k_samples_evaluate_an_arm_s_prompt_once(smollm2_file, flash_attn: bool) -> None:
    """decoding.samples=5: the five samples of unconstrained, prompt_json and constrained
    (prompt_json's very prompt) take the slot that holds it: each prompt is evaluated once,
    with flash attention (the default) and without."""
    from tests.generate.conftest import THREADS
    from vbw.config import DecodingConfig, MaxTokens
    from vbw.generate.engines import make_engine
    from vbw.generate.items import generate_item
    from vbw.generate.local import LocalBackend
    from vbw.generate.runtime import Runtime

    rt = Runtime(smollm2_file.path, n_ctx=2048, n_threads=THREADS, sequences=2,
                 flash_attn=flash_attn)
    evaluated: dict[tuple[int, ...], int] = {}
    inner = rt.batcher._decode_prompt

    def counted(seq: int, tokens, start: int, end: int) -> None:  # type: ignore[no-untyped-def]
        evaluated[tuple(tokens)] = evaluated.get(tuple(tokens), 0) + end - start
        inner(seq, tokens, start, end)

    rt.batcher._decode_prompt = counted  # type: ignore[method-assign]
    try:
        task, items, arms = _items("gsm8k", 1)
        backend = LocalBackend(rt, make_engine("outlines", rt))
        rec = generate_item(task, items[0], arms, backend, MaxTokens.model_validate(LIVE_CAPS),
                            decoding=DecodingConfig(temperature=0.8, samples=5))
        assert rec.samples is not None and len(rec.samples) == 4
        shared = [a for a in arms if a.kind in ("unconstrained", "prompt_json", "constrained")]
        prompts = {a.key: tuple(rt.chat_tokens(task.messages(items[0], a))) for a in shared}
        for arm in shared:
            assert evaluated.get(prompts[arm.key], 0) <= len(prompts[arm.key]), arm.key
            if arm.kind == "constrained":
                twin = prompts[arm.key.replace("constrained", "prompt_json")]
                assert prompts[arm.key] == twin and evaluated.get(twin, 0) <= len(twin)
        assert prompts and sum(evaluated.values()) < sum(5 * len(p) for p in prompts.values())
    finally:
        rt.close()


def test_the_in_process_default_is_the_benchmark_s_best() -> None:
    """batch.sequences null means BatchConfig.IN_PROCESS: what the committed bench_batched
    run found best, and batch.flash_attn defaults to what was faster there
    (docs/performance.md says so from the same figures)."""
    import json

    from tests.benchmarks.batched_table import BATCHED, best_flash_attn, best_sequences
    from vbw.config import BatchConfig

    measured = json.loads(BATCHED.read_text())
    assert BatchConfig.IN_PROCESS == best_sequences(measured)
    assert BatchConfig().flash_attn == best_flash_attn(measured)

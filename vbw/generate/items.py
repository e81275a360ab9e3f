"""One item through every arm, on any backend.

The arms run in the order that lets a prompt cache serve shared prefixes: unconstrained,
then reason_then_constrain (it extends that conversation), then for each schema
prompt_json and constrained (same prompt); a backend that decodes several at once runs
the arms that do not read the free text beside it. A schema the backend cannot enforce
is recorded for the item (which scoring then excludes), never generated around.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from vbw.config import DecodingConfig, MaxTokens
from vbw.errors import UnsupportedSchema
from vbw.generate.backend import Backend, GenerateConfig, Generation, Tool
from vbw.generate.sampling import request_sampling
from vbw.generate.tools import wire_name
from vbw.replay import ArmRecord, ItemRecord, ToolCall
from vbw.task.arms import Arm
from vbw.task.runner import Item, Task

FREE = Arm("unconstrained", None)
_ORDER = {"unconstrained": 0, "reason_then_constrain": 1}


def cap(caps: MaxTokens, arm: Arm) -> int:
    """The token cap of the arm's phase: free text, a JSON answer, or the packaging turn."""
    return {"unconstrained": caps.free, "prompt_json": caps.json_, "constrained": caps.json_,
            "tool_call": caps.json_, "reason_then_constrain": caps.package}[arm.kind]


def prompt_hash(task: Task, item: Item, arms: list[Arm]) -> str:
    """sha256 of every first-turn prompt of the item (see Task.prompt_hash)."""
    return task.prompt_hash(item, arms)


def _record(gen: Generation, reuses: str | None = None,
            tool: ToolCall | None = None) -> ArmRecord:
    """The arm's record. A tool_call arm whose reply called no function, or first called
    another one, records no text (scored invalid), whatever the message content says."""
    ttft = round(gen.ttft_seconds, 4) if gen.ttft_seconds is not None else None
    text: str | None = gen.text
    if tool is not None:
        tool = tool.model_copy(update={"called": list(gen.called or [])})
        if tool.called[:1] != [tool.sent]:
            text = None
    return ArmRecord(text=text, seconds=round(gen.seconds, 4),
                     compile_seconds=round(gen.compile_seconds, 5), n_tokens=gen.n_tokens,
                     ttft_seconds=ttft, finish_reason=gen.finish_reason, reuses=reuses,
                     redacted=gen.redacted or None, tool=tool, message=gen.message,
                     interventions=gen.interventions, tax=gen.tax)


def _unsupported(task: Task, item: Item, arms: list[Arm], reasons: dict[str, str],
                 k: int = 1) -> ItemRecord:
    """The item's record when a schema cannot be enforced (every sample says why)."""
    recs = {a.key: ArmRecord(unsupported_schema=reasons.get(a.key, reasons.get(a.schema or ""))
                             if a.enforced else None) for a in arms}
    return ItemRecord(id=item.id, arms=recs, samples=[recs] * (k - 1) or None,
                      item_seconds=0.0, prompt_hash=prompt_hash(task, item, arms))


def _no_mark(step: str) -> None:
    """Where nobody watches the steps (vbw.generate.crashguard's child does)."""


def _compile_all(item: Item, arms: list[Arm], backend: Backend,
                 mark: Callable[[str], None] = _no_mark) -> tuple[dict, dict]:
    """Compile every enforced schema first: (seconds spent now, unsupported reasons)."""
    seconds: dict[str, float] = {}
    reasons: dict[str, str] = {}
    for arm in arms:
        if arm.enforced and arm.schema not in seconds:
            mark(f"compiling schema {arm.schema} for item {item.id}")
            try:
                seconds[arm.schema] = backend.compile(item.schemas[arm.schema])  # type: ignore[index]
            except UnsupportedSchema as e:
                reasons[arm.schema] = str(e)  # type: ignore[index]
                seconds[arm.schema] = 0.0  # type: ignore[index]
    return seconds, reasons


def _tools(task: Task, item: Item, arms: list[Arm]) -> tuple[dict, dict]:
    """The function each tool_call arm offers, as recorded and as sent: ({arm key:
    (ToolCall, Tool)}, {arm key: why the function's name cannot be sent})."""
    tools: dict[str, tuple[ToolCall, Tool]] = {}
    refused: dict[str, str] = {}
    for arm in arms:
        if arm.tool:
            name, description = task.tool(item, arm.schema or "")
            try:
                sent = wire_name(name)
            except UnsupportedSchema as e:
                refused[arm.key] = str(e)
                continue
            tools[arm.key] = (ToolCall(name=name, sent=sent, called=[]),
                              Tool(name=sent, description=description))
    return tools, refused


def generate_item(task: Task, item: Item, arms: list[Arm], backend: Backend,
                  caps: MaxTokens, mark: Callable[[str], None] = _no_mark,
                  decoding: DecodingConfig = DecodingConfig()) -> ItemRecord:
    """All arms of one item, `decoding.samples` times (sample i under its own seeds,
    vbw.generate.sampling). A schema's compile time is charged to its first user in the
    first sample: constrained[S], or reason_then_constrain[S] when constrained[S] is not
    run. `mark` is told each step before it starts ("generating item 3, arm
    constrained[answer]")."""
    start = time.perf_counter()
    compiled, reasons = _compile_all(item, arms, backend, mark)
    tools, refused = _tools(task, item, arms)
    reasons.update(refused)
    k = decoding.samples
    if reasons:
        return _unsupported(task, item, arms, reasons, k)
    try:
        done = _samples(task, item, arms, backend, caps, mark, decoding, compiled, tools)
    except UnsupportedSchema as e:  # a server refused the schema when it was sent
        reasons = {a.schema: str(e) for a in arms if a.enforced and a.schema is not None}
        return _unsupported(task, item, arms, reasons, k)
    return ItemRecord(id=item.id, arms=done[0], samples=done[1:] or None,
                      item_seconds=round(time.perf_counter() - start, 3),
                      prompt_hash=prompt_hash(task, item, arms))


def _samples(task: Task, item: Item, arms: list[Arm], backend: Backend, caps: MaxTokens,
             mark: Callable[[str], None], decoding: DecodingConfig, compiled: dict[str, float],
             tools: dict[str, tuple[ToolCall, Tool]]) -> list[dict[str, ArmRecord]]:
    """Every sample of every arm: the free text (unconstrained, which
    reason_then_constrain extends) and what extends it, and the other arms, arm by arm in
    the order that lets a prompt cache serve shared prefixes (an arm's k samples one after
    another share its whole prompt). One by one: the free text, reason_then_constrain,
    the rest. A backend that decodes several at once starts the free text and the rest
    together and reason_then_constrain as soon as the free text ends."""
    k = decoding.samples
    out: list[dict[str, ArmRecord]] = [{} for _ in range(k)]
    free_text: list[str | None] = [None] * k
    ordered = sorted(arms, key=lambda a: _ORDER.get(a.kind, 2))
    extends = [(arm, i) for arm in ordered if arm.kind == "reason_then_constrain"
               for i in range(k)]
    rest = [(arm, i) for arm in ordered if arm != FREE and arm.kind != "reason_then_constrain"
            for i in range(k)]
    free = [(FREE, i) for i in range(k)] if FREE in arms or extends else []

    def request(arm: Arm, i: int) -> tuple[list, GenerateConfig]:
        schema = item.schemas[arm.schema] if arm.enforced else None  # type: ignore[index]
        return task.messages(item, arm, free_text=free_text[i] if arm != FREE else None), \
            GenerateConfig(max_tokens=cap(caps, arm), schema=schema,
                           tool=tools.get(arm.key, (None, None))[1],
                           sampling=request_sampling(decoding, item.id, arm.key, i))

    def chain() -> list[Generation]:
        gens = _round(backend, mark, item, free, k, request)
        free_text[:len(gens)] = [g.text for g in gens]
        return gens + _round(backend, mark, item, extends, k, request)

    if backend.sequences > 1 and rest and free:
        with ThreadPoolExecutor(1, thread_name_prefix="vbw-arms") as pool:
            others = pool.submit(_round, backend, mark, item, rest, k, request)
            gens = chain()
            gens += others.result()
    else:
        gens = chain()
        gens += _round(backend, mark, item, rest, k, request)
    for (arm, i), gen in zip(free + extends + rest, gens):
        if arm == FREE and FREE not in arms:
            continue
        charged = arm.enforced and (arm.kind == "constrained" or
                                    Arm("constrained", arm.schema) not in arms)
        gen = gen.model_copy(update={"compile_seconds": compiled.pop(arm.schema, 0.0)
                                     if charged else 0.0})
        out[i][arm.key] = _record(gen, "unconstrained" if arm.kind == "reason_then_constrain"
                                  else None, tools.get(arm.key, (None, None))[0])
    return [{a.key: sample[a.key] for a in arms} for sample in out]


def _round(backend: Backend, mark: Callable[[str], None], item: Item,
           todo: list[tuple[Arm, int]], k: int,
           request: Callable[[Arm, int], tuple[list, GenerateConfig]]) -> list[Generation]:
    """The generations of `todo` ((arm, sample index) pairs): one by one, each `mark`ed,
    or started together on a backend that decodes several at once."""
    def label(arm: Arm, i: int) -> str:
        return f"arm {arm.key}" + (f", sample {i + 1} of {k}" if k > 1 else "")

    if backend.sequences == 1:
        gens = []
        for arm, i in todo:
            mark(f"generating item {item.id}, {label(arm, i)}")
            gens.append(backend.generate(*request(arm, i)))
        return gens
    if todo:
        mark(f"generating item {item.id}, {len(todo)} together: "
             + "; ".join(label(arm, i) for arm, i in todo))
    return backend.generate_many([request(arm, i) for arm, i in todo])

"""Arm keys: `unconstrained`, `prompt_json[S]`, `constrained[S]`, `tool_call[S]`,
`reason_then_constrain[S]`.

The order is part of the contract: unconstrained; for each schema in declared order
prompt_json, constrained, then tool_call (S offered as the parameters of one function,
forced through the backend's native tool calling); reason_then_constrain of the answer
schema last.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from vbw.errors import ConfigError

ArmKind = Literal["unconstrained", "prompt_json", "constrained", "tool_call",
                  "reason_then_constrain"]
# The kinds every backend runs (the `standard` preset); tool_call needs native tool
# calling (a server), so it is selectable (ALL_ARM_KINDS) but not among them.
ARM_KINDS: tuple[ArmKind, ...] = ("unconstrained", "prompt_json", "constrained",
                                  "reason_then_constrain")
ALL_ARM_KINDS: tuple[ArmKind, ...] = ("unconstrained", "prompt_json", "constrained",
                                      "tool_call", "reason_then_constrain")
_KEY = re.compile(r"^(prompt_json|constrained|tool_call|reason_then_constrain)\[([^\[\]]+)\]$")


class Arm(NamedTuple):
    kind: ArmKind
    schema: str | None

    @property
    def key(self) -> str:
        return self.kind if self.schema is None else f"{self.kind}[{self.schema}]"

    @property
    def has_contract(self) -> bool:
        """Arms that promise JSON under a schema (all but unconstrained) have a validity."""
        return self.schema is not None

    @property
    def enforced(self) -> bool:
        """Arms decoded under the schema's grammar: constrained, reason_then_constrain and
        tool_call (the schema bound as a forced function's parameters; the canary's tool
        check proves a server binds it)."""
        return self.kind in ("constrained", "reason_then_constrain", "tool_call")

    @property
    def tool(self) -> bool:
        """The schema travels as a forced function's parameters, not as response_format."""
        return self.kind == "tool_call"


def parse_arm(key: str) -> Arm:
    if key == "unconstrained":
        return Arm("unconstrained", None)
    m = _KEY.match(key)
    if m is None:
        raise ValueError(f"not an arm key: {key!r}")
    return Arm(m.group(1), m.group(2))  # type: ignore[arg-type]


def task_arms(schemas: list[str], answer_schema: str, kinds: list[str],
              only: list[str] | None = None) -> list[Arm]:
    """The arms a task runs, in contract order, restricted to the arm kinds selected and,
    with `only` (arms.schemas), to the arms of those schema labels: `unconstrained` has no
    schema and stays; reason_then_constrain[answer] goes with the answer schema."""
    if only is not None:
        schemas = [s for s in schemas if s in only]
    arms: list[Arm] = []
    if "unconstrained" in kinds:
        arms.append(Arm("unconstrained", None))
    for s in schemas:
        for kind in ("prompt_json", "constrained", "tool_call"):
            if kind in kinds:
                arms.append(Arm(kind, s))  # type: ignore[arg-type]
    if "reason_then_constrain" in kinds and answer_schema in schemas:
        arms.append(Arm("reason_then_constrain", answer_schema))
    return arms


def select_arms(task: str, schemas: list[str], answer_schema: str, kinds: list[str],
                only: list[str] | None) -> list[Arm]:
    """task_arms, with `only` (arms.schemas) checked first: a label the task does not
    declare is refused in one line that lists those it does."""
    unknown = [s for s in only or [] if s not in schemas]
    if unknown:
        raise ConfigError(f"arms.schemas: {unknown[0]!r} is not a schema of task {task} "
                          f"(its schemas: {', '.join(schemas)})")
    return task_arms(schemas, answer_schema, kinds, only)

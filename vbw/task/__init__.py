"""Tasks: the pure-YAML task format (spec) and the runner that interprets it.

The names below are loaded on first use (PEP 562), not when the package is: a light module
of the package (vbw.task.locate's path test, say) is imported by the process that composes
the config, which must not pay for the whole task stack (see vbw.cli.warm_worker)."""

from __future__ import annotations

from vbw.lazy import lazy_exports

_WHERE = {
    "ARM_KINDS": "vbw.task.arms", "Arm": "vbw.task.arms", "parse_arm": "vbw.task.arms",
    "task_arms": "vbw.task.arms", "CHECKER_KINDS": "vbw.task.check",
    "COERCION_KINDS": "vbw.task.coerce", "STEP_KINDS": "vbw.task.extract",
    "first_json_object": "vbw.task.extract", "Item": "vbw.task.itemset",
    "Task": "vbw.task.runner", "load_task": "vbw.task.runner", "DIALECTS": "vbw.task.schema.sources",
    "SCHEMA_KINDS": "vbw.task.schema.sources", "TaskSpec": "vbw.task.spec",
}

__all__ = ["ARM_KINDS", "CHECKER_KINDS", "COERCION_KINDS", "DIALECTS", "SCHEMA_KINDS",
           "STEP_KINDS", "Arm", "Item", "Task", "TaskSpec", "first_json_object", "load_task",
           "parse_arm", "task_arms"]

__getattr__ = lazy_exports(__name__, _WHERE)

"""Tasks: the pure-YAML task format (spec) and the runner that interprets it."""

from vbw.task.arms import ARM_KINDS, Arm, parse_arm, task_arms
from vbw.task.check import CHECKER_KINDS
from vbw.task.coerce import COERCION_KINDS
from vbw.task.extract import STEP_KINDS, first_json_object
from vbw.task.runner import Item, Task, load_task
from vbw.task.schemas import DIALECTS, SCHEMA_KINDS
from vbw.task.spec import TaskSpec

__all__ = ["ARM_KINDS", "CHECKER_KINDS", "COERCION_KINDS", "DIALECTS", "SCHEMA_KINDS",
           "STEP_KINDS", "Arm", "Item", "Task", "TaskSpec", "first_json_object", "load_task",
           "parse_arm", "task_arms"]

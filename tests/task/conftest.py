"""Fixtures shared by the task-layer tests."""

from __future__ import annotations

import pytest

from tests.conftest import TASK_CONF
from vbw.task.runner import load_task


@pytest.fixture(scope="module")
def gsm8k():
    """The bundled GSM8K task and its first item."""
    task = load_task(TASK_CONF / "gsm8k.yaml")
    return task, task.items(1)[0]

"""A YAML syntax error in a task or config file is one line naming the file, the line at
fault and its usual cause with the fix (a tab, an indentation, an unquoted colon), in
place of PyYAML's words over several lines."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import one_line_error, run_vbw, yaml_error
from vbw.validation import load_yaml

TAB = "a tab character: YAML indents with spaces only; replace the tab with spaces"
DEEPER = ("indentation: this key is indented deeper than the line above it (line {n}), whose "
          "value is already given; line it up with its siblings, or quote the value above "
          "if the colon belongs to it")
ASTRAY = ("indentation: this line does not fit the block it is in (from line {n}); indent it "
          "as far as its siblings, with spaces (a list's `- ` items and `key:`s do not mix at "
          "one level)")


def _error(tmp_path: Path, text: str) -> str:
    return yaml_error(tmp_path, text).removeprefix(f"{tmp_path / 't.yaml'}")


@pytest.mark.parametrize(("text", "line"), [
    ("name: t\nschema:\n\ttype: object\n", f":3: invalid YAML: {TAB}"),
    ("name: t\nschema:\n  type: object\n   properties: {}\n",
     f":4: invalid YAML: {DEEPER.format(n=3)}"),
    ("name: t\ndescription: some text\n  continued: more\n",
     f":3: invalid YAML: {DEEPER.format(n=2)}"),
    ("name: t\nschema:\n  type: object\n properties: {}\n",
     f":4: invalid YAML: {ASTRAY.format(n=1)}"),
    ("items:\n  - a: 1\n   b: 2\n", f":3: invalid YAML: {ASTRAY.format(n=2)}"),
    ("items:\n  - a\n  b: 1\n", f":3: invalid YAML: {ASTRAY.format(n=2)}"),
    ("q: \"What: is this\nx: 1\n", ":1: invalid YAML: a quote opened on this line is never "
     "closed"),
    ("question: What: is this\n", ":1: invalid YAML: an unquoted ': ' inside the value of "
     "'question'; quote the value: question: \"What: is this\""),
    ("items:\n  - question: What: is this\n", ":2: invalid YAML: an unquoted ': ' inside "
     "the value of 'question'; quote the value: - question: \"What: is this\""),
    ("q: Say \"hi\": twice\n", ":1: invalid YAML: an unquoted ': ' inside the value of 'q'; "
     "quote the value: q: 'Say \"hi\": twice'"),
    ("name: t\noops\nx: 1\n", ":2: invalid YAML: a line that is neither `key: value` nor a "
     "list item `- ...` (a missing ':' after a key, or a value's continuation indented too "
     "little?)"),
])
def test_the_usual_causes_are_named_with_their_line_and_fix(tmp_path: Path, text: str,
                                                            line: str) -> None:
    assert _error(tmp_path, text) == line


@pytest.mark.parametrize("fixed", [
    "name: t\nschema:\n  type: object\n",
    "name: t\nschema:\n  type: object\n  properties: {}\n",
    "question: \"What: is this\"\n",
    "q: 'Say \"hi\": twice'\n",
])
def test_each_named_fix_loads(tmp_path: Path, fixed: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(fixed, encoding="utf-8")
    assert load_yaml(path) == yaml.safe_load(fixed)


def test_another_error_keeps_pyyaml_s_one_line_problem(tmp_path: Path) -> None:
    assert _error(tmp_path, "a: [1\n") == (":2: invalid YAML: expected ',' or ']', but got "
                                           "'<stream end>' (while parsing a flow sequence, "
                                           "from line 1)")


def test_a_task_file_with_a_tab_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("name: t\ndataset:\n\tpath: d.jsonl\n", encoding="utf-8")
    line = one_line_error(run_vbw(f"task.files=[{path}]", "mode=check", cwd=tmp_path))
    assert line == f"vbw: error: {path}:3: invalid YAML: {TAB}"

"""A scored replay's header decides its task's selection (vbw.modes.selection): its arms
and n unless the command line gives them; an override it cannot satisfy is one line
naming both values, and arms it holds that are not scored are named in one warning."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.conftest import REPLAYS, TASK_CONF
from vbw.cli.job import run
from vbw.config import RunConfig
from vbw.errors import ReplayError
from vbw.modes.selection import select
from vbw.task.runner import load_task

SOURCE = REPLAYS / "gsm8k/smollm2_135m/outlines.jsonl"
HEADLINE = ["prompt_json[answer]", "constrained[answer]"]
STANDARD = ["unconstrained", "prompt_json", "constrained", "reason_then_constrain"]


def _replay(tmp_path: Path, arms: list[str], n: int | None, items: int = 5,
            extra: dict | None = None) -> Path:
    """The bundled SmolLM2 GSM8K replay's first `items` items, only `arms`, header n=`n`
    (None: not recorded); `extra` arm texts are added to the header and every item."""
    lines = SOURCE.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    head["meta"].pop("n", None)
    if n is not None:
        head["meta"]["n"] = n
    head["meta"]["arms"] = arms + list(extra or {})
    out = [json.dumps(head)]
    for line in lines[1:1 + items]:
        rec = json.loads(line)
        rec["arms"] = {k: rec["arms"][k] for k in arms} | \
            {k: {"text": v} for k, v in (extra or {}).items()}
        out.append(json.dumps(rec))
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _cfg(n: int | None = None, kinds: list[str] = STANDARD, schemas: list[str] | None = None,
         **more) -> RunConfig:
    return RunConfig.model_validate({
        "model": {"name": "smollm2_135m"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": kinds, "schemas": schemas,
                 "max_tokens": {"free": 1, "json": 1, "package": 1}},
        "n": n, "outputs": ["json", "md"], **more})


TASK = load_task(TASK_CONF / "gsm8k.yaml")


def _select(replay: Path | None, arms_given: bool, first_given: bool = False,
            **cfg) -> tuple[list[str], int | None, str]:
    """The selection's arm keys, n or (n null) the replay's own n it counts within, and
    what it printed."""
    err = io.StringIO()
    arms, n, made_for = select(_cfg(**cfg), TASK, replay, arms_given, err, first_given)
    return [a.key for a in arms], n if n is not None else made_for, err.getvalue()


def test_the_header_decides_arms_and_n_when_the_command_line_does_not(tmp_path: Path) -> None:
    replay = _replay(tmp_path, HEADLINE, n=5)
    assert _select(replay, arms_given=False) == (HEADLINE, 5, "")
    # no replay to score (a live run): the config's selection, as before
    keys, n, said = _select(None, arms_given=False)
    assert keys[0] == "unconstrained" and len(keys) == 6 and n is None and said == ""


def test_arms_the_replay_lacks_are_one_line_naming_both_and_the_fix(tmp_path: Path) -> None:
    replay = _replay(tmp_path, HEADLINE, n=5)
    with pytest.raises(ReplayError) as e:
        _select(replay, arms_given=True)
    line = str(e.value)
    assert "\n" not in line and line.startswith(f"{replay}: ")
    assert "include unconstrained, prompt_json[reasoning]" in line  # what was asked
    assert "(its meta.arms: prompt_json[answer], constrained[answer])" in line  # what it holds
    assert line.endswith("drop the arms override to score the arms it holds")
    assert _select(replay, arms_given=False)[0] == HEADLINE  # the fix it names works


def test_arms_held_but_not_selected_are_named_in_one_warning(tmp_path: Path) -> None:
    replay = _replay(tmp_path, HEADLINE, n=5)
    keys, n, said = _select(replay, arms_given=True, kinds=["constrained"], schemas=["answer"])
    assert keys == ["constrained[answer]"] and n == 5
    assert said.splitlines() == [
        f"vbw: warning: {replay} holds arm(s) this run does not score: prompt_json[answer] "
        "(not selected by the arms override; drop it to score every arm the replay holds)"]


def test_an_arm_the_task_does_not_have_is_named_and_the_others_scored(tmp_path: Path) -> None:
    replay = _replay(tmp_path, HEADLINE, n=5, extra={"constrained[other]": "{}"})
    keys, _, said = _select(replay, arms_given=False)
    assert keys == HEADLINE
    assert said.splitlines() == [f"vbw: warning: {replay} holds arm(s) this run does not "
                                 "score: constrained[other] (not an arm of task gsm8k)"]


def test_a_header_with_no_arm_of_the_task_is_refused_in_one_line(tmp_path: Path) -> None:
    replay = _replay(tmp_path, [], n=5, extra={"constrained[other]": "{}"})
    with pytest.raises(ReplayError, match=r"meta.arms lists no arm of task gsm8k "
                                          r"\(constrained\[other\]; its arms: unconstrained, "):
        _select(replay, arms_given=False)


def test_n_beyond_the_replay_is_scored_and_said_with_both_values(tmp_path: Path) -> None:
    replay = _replay(tmp_path, HEADLINE, n=5)
    assert _select(replay, arms_given=False, n=3) == (HEADLINE, 3, "")  # a part: nothing said
    keys, n, said = _select(replay, arms_given=False, n=10)
    assert n == 10
    assert said.splitlines() == [
        f"vbw: note: n=10, but {replay} was made for n=5 (meta.n): scoring the task's first "
        "10 items, those it lacks reported missing"]
    # the task's `first` set on the command line selects the items, not the header's n
    assert select(_cfg(), TASK, replay, False, io.StringIO(), True).made_for is None
    # a header without n leaves the config's n
    assert _select(_replay(tmp_path, HEADLINE, n=None), arms_given=False)[1] is None


def test_another_tasks_replay_is_left_to_its_own_refusal(tmp_path: Path) -> None:
    replay = _replay(tmp_path, HEADLINE, n=5)
    lines = replay.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    head["meta"]["task"] = "bfcl_simple"
    replay.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n", encoding="utf-8")
    keys, n, said = _select(replay, arms_given=False)
    assert len(keys) == 6 and n is None and said == ""


def test_a_rescored_run_of_five_items_says_nothing_of_missing_items(tmp_path: Path) -> None:
    """The whole run (vbw.cli.job.run, as the command line calls it with no arms given):
    the replay's five items and two arms are scored, and nothing is printed on stderr."""
    replay = _replay(tmp_path, HEADLINE, n=5)
    err = io.StringIO()
    code = run(_cfg(mode="replay", replay=str(replay)), [TASK], tmp_path / "o", tmp_path,
               io.StringIO(), err, arms_given=False)
    rep = json.loads((tmp_path / "o/report.json").read_text(encoding="utf-8"))
    assert code == 0 and err.getvalue() == ""
    assert (rep["n"], rep["n_task"], rep["missing"]["n"]) == (5, 5, 0)
    assert list(rep["arms"]) == HEADLINE


def test_items_held_past_the_replays_own_n_are_scored_not_dropped(tmp_path: Path) -> None:
    """A header whose n is below the items it holds (a run resumed with a larger n): every
    held item is scored, and only items within its n or before its last are missing."""
    replay = _replay(tmp_path, HEADLINE, n=2, items=6)
    lines = replay.read_text(encoding="utf-8").splitlines()
    replay.write_text("\n".join(lines[:3] + lines[4:]) + "\n", encoding="utf-8")  # no item 2
    err = io.StringIO()
    assert run(_cfg(mode="replay", replay=str(replay)), [TASK], tmp_path / "o", tmp_path,
               io.StringIO(), err, arms_given=False) == 0
    rep = json.loads((tmp_path / "o/report.json").read_text(encoding="utf-8"))
    assert (rep["n"], rep["n_task"], rep["missing"]["ids"]) == (5, 6, ["gsm8k_test_2"])
    assert "1 of 6 task item(s) are not in" in err.getvalue()

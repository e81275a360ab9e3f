"""One verdict everywhere (vbw.report.verdict): a paired difference is an effect when the
exact McNemar test rejects at alpha 0.05, whatever its bootstrap CI says.

The case that once split the reports: N=5, every item invalid -> valid. The CI is
[+100, +100] and clear of 0, but five discordant items all one way give McNemar p=0.0625,
so the +100 points observed are not distinguishable from zero at this N. report.md,
report.json, report.html, mode=compare and the sweep summary must all say so, the observed
change first.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLE, load_json, run_vbw
from vbw.report.verdict import mde_text, p_value, verdict
from vbw.score.results import Delta

CITIES = [("cap_france", "France", "Paris"), ("cap_japan", "Japan", "Tokyo"),
          ("cap_italy", "Italy", "Rome"), ("cap_spain", "Spain", "Madrid"),
          ("cap_peru", "Peru", "Lima")]
ARMS = ["prompt_json[answer]", "constrained[answer]"]
PAIR = "prompt_json[answer] → constrained[answer]"
NONE_AT_5 = "+100.0 pts observed; not distinguishable from zero at N=5"
WHY_5 = "(p=0.062, MDE none: 5 discordant items, too few for p<0.05)"


def _replay(path: Path, before: str) -> Path:
    """A replay of the 5 items: prompt_json[answer] writes `before` (per city), constrained
    always the right JSON."""
    head = {"meta": {"format": "vbw-replay/1", "task": "caps5", "arms": ARMS}}
    lines = [head] + [{"id": i, "arms": {"prompt_json[answer]": {"text": before.format(c)},
                                         "constrained[answer]": {"text": f'{{"city": "{c}"}}'}}}
                      for i, _, c in CITIES]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return path


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 5-item task, replay A (prompt_json all invalid, constrained all valid and right),
    replay B (prompt_json valid too); a one-job sweep scoring A, and mode=compare A vs B."""
    tmp = tmp_path_factory.mktemp("small_n")
    (tmp / "conf/task").mkdir(parents=True)
    rows = [{"id": i, "question": f"What is the capital of {k}?", "answer": c}
            for i, k, c in CITIES]
    (tmp / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    task = yaml.safe_load((EXAMPLE / "task/capitals.yaml").read_text("utf-8"))
    task["name"] = "caps5"
    task["dataset"]["path"] = str(tmp / "rows.jsonl")
    (tmp / "conf/task/caps5.yaml").write_text(yaml.safe_dump(task), "utf-8")
    a = _replay(tmp / "a.jsonl", "The capital is {}.")
    b = _replay(tmp / "b.jsonl", '{{"city": "{}"}}')
    common = ["--config-dir", str(tmp / "conf"), "task=caps5", "arms=headline"]
    sweep = run_vbw("-m", *common, f"replay={a}", f"hydra.sweep.dir={tmp}/sweep", cwd=tmp)
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    comp = run_vbw(*common, "mode=compare", f"replays=[{a},{b}]", f"hydra.run.dir={tmp}/cmp",
                   cwd=tmp)
    assert comp.returncode == 0, comp.stderr[-3000:]
    return {"run": tmp / "sweep/0", "sweep": tmp / "sweep", "compare": tmp / "cmp"}


def test_report_json_records_mcnemars_verdict(small: dict[str, Path]) -> None:
    r = load_json(small["run"] / "report.json")
    [c] = r["comparisons"]
    d = c["deltas"]["schema_validity"]
    assert (d["delta"], d["ci95"], d["n10"], d["n01"]) == (1.0, [1.0, 1.0], 0, 5)
    assert d["excludes_0"] is True  # the CI leaves out 0 ...
    assert d["mcnemar_p"] == 0.0625 and d["mde"] is None
    assert d["effect"] is False  # ... but that is no effect: McNemar decides


def test_report_md_states_the_change_then_not_distinguishable(small: dict[str, Path]) -> None:
    md = (small["run"] / "report.md").read_text("utf-8")
    line = next(x for x in md.splitlines() if x.startswith("- schema validity:"))
    assert line == f"- schema validity: {NONE_AT_5} {WHY_5}; 95% CI [+100.0, +100.0] pts"
    assert "+100.0 pts (" not in md  # never worded as an effect
    assert "no effect" not in md and "no detectable" not in md


def test_report_html_shows_the_verdict_p_mde_and_the_forest(small: dict[str, Path]) -> None:
    html = (small["run"] / "report.html").read_text("utf-8")
    row = re.search(r"<td>schema validity</td>(.*?)</tr>", html, re.S)
    assert row, "no schema validity row"
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells[:4] == [NONE_AT_5, "+100.0 [+100.0, +100.0]", "p=0.062",
                         "none: 5 discordant items, too few for p&lt;0.05"]
    forest = re.search(r'<svg xmlns="http://www.w3.org/2000/svg" class="forest".*?</svg>',
                       html, re.S)
    assert forest, "no forest plot"
    rows = re.findall(r'<g class="(effect|none)">', forest.group(0))
    assert rows == ["none"] * 3  # validity, accuracy, wrong-but-valid: none detectable
    assert f"{PAIR}, schema validity: {NONE_AT_5}" in forest.group(0)


def test_compare_says_the_same(small: dict[str, Path]) -> None:
    r = load_json(small["compare"] / "report.json")
    d = r["comparisons"][0]["arms"]["prompt_json[answer]"]["metrics"]["schema_validity"]["delta"]
    assert (d["n10"], d["n01"], d["mcnemar_p"], d["effect"]) == (0, 5, 0.0625, False)
    md = (small["compare"] / "report.md").read_text("utf-8")
    row = next(x for x in md.splitlines()
               if x.startswith("| `prompt_json[answer]` | schema validity |"))
    assert ("| +100.0 pts [+100.0, +100.0] observed; not distinguishable from zero | 0 / 5 | "
            "p=0.062 | none: 5 discordant items, too few for p<0.05 |") in row


def test_sweep_summary_says_the_same(small: dict[str, Path]) -> None:
    data = load_json(small["sweep"] / "summary.json")
    [h] = data["rows"][0]["headlines"]
    assert (h["from"], h["to"], h["effect"], h["mcnemar_p"]) == \
        ("prompt_json[answer]", "constrained[answer]", False, 0.0625)
    md = (small["sweep"] / "summary.md").read_text("utf-8")
    assert f"Δ accuracy `{PAIR}`" in md  # the column names its comparison
    cell = f"+100.0 pts [+100.0, +100.0] observed; not distinguishable from zero at N=5 {WHY_5}"
    assert f"| {cell} |" in md  # the observed change beside its CI
    html = (small["sweep"] / "summary.html").read_text("utf-8")
    assert f"<th>Δ accuracy <code>{PAIR}</code></th>" in html
    assert f"<td>{cell.replace('<', '&lt;')}</td>" in html


def _delta(n10: int, n01: int, p: float, mde: float | None, n: int = 200) -> Delta:
    return Delta(delta=(n01 - n10) / n, ci95=(-0.1, 0.2), excludes_0=False, n10=n10,
                 n01=n01, mcnemar_p=p, mde=mde)


def test_the_wordings() -> None:
    """An effect is its size; anything else the observed change first, then not
    distinguishable from zero, with p and the MDE (or why there is none)."""
    assert verdict(_delta(1, 12, 0.0034, 0.05)) == "+5.5 pts (p=0.0034)"
    assert verdict(_delta(1, 12, 0.0034, 0.05), ci=True, stats=False) == \
        "+5.5 pts [-10.0, +20.0]"
    assert verdict(_delta(10, 21, 0.071, 0.08), 200) == \
        "+5.5 pts observed; not distinguishable from zero at N=200 (p=0.071, MDE ±8.0 pts)"
    assert verdict(_delta(0, 3, 0.25, None, n=3), 3) == \
        "+100.0 pts observed; not distinguishable from zero at N=3 (p=0.25, MDE none: 3 " \
        "discordant items, too few for p<0.05)"
    assert verdict(_delta(0, 2, 0.5, None), 200, ci=True, stats=False) == \
        "+1.0 pts [-10.0, +20.0] observed; not distinguishable from zero at N=200"
    assert verdict(_delta(0, 0, 1.0, None)) == \
        "+0.0 pts observed; not distinguishable from zero (p=1, MDE none: no discordant item)"
    assert mde_text(_delta(0, 0, 1.0, None)) == "MDE none: no discordant item"
    assert p_value(0.0499) == "p=0.0499"  # never rounded across alpha


def test_effect_follows_the_p_value_and_never_contradicts_it() -> None:
    assert _delta(1, 12, 0.0034, 0.05).effect is True
    assert _delta(10, 21, 0.071, 0.08).effect is False
    with pytest.raises(ValueError, match="effect=True but mcnemar_p=0.071"):
        Delta(delta=0.055, ci95=(0.005, 0.11), excludes_0=True, n10=10, n01=21,
              mcnemar_p=0.071, mde=0.08, effect=True)

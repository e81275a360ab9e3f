"""tool_call arms through a real server: llama-cpp-python's, on SmolLM2, started with
`--chat_format chatml-function-calling` (its documented tool-calling format, which binds a
forced function's parameters as a grammar). Both bundled tasks score all three JSON arms;
a replay re-scores to the same report; a server killed mid-run stops the run in one line
and `resume=true` finishes it, as for the other arms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import load_json, run_vbw
from tests.generate.conftest import LlamaServer, kill_server_after_first_item

pytestmark = pytest.mark.live

ARMS = "arms.kinds=[prompt_json,constrained,tool_call]"


@pytest.fixture(scope="module")
def tool_server(smollm2_file, tmp_path_factory):
    server = LlamaServer(Path(smollm2_file.path),
                         tmp_path_factory.mktemp("tool_server") / "server.log",
                         chat_format="chatml-function-calling")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _args(srv, task: str, n: int) -> list[str]:
    # arms.schemas names the one schema of each task (gsm8k: answer; bfcl: arguments)
    schema = "answer" if task == "gsm8k" else "arguments"
    return [f"task={task}", "mode=live", f"n={n}", ARMS, f"arms.schemas=[{schema}]",
            "arms.max_tokens.json=32", "backend=openai", f"backend.base_url={srv.base_url}",
            f"backend.model={srv.model}", "backend.dialect=llama_cpp_python",
            "backend.max_retries=1", "backend.timeout=600"]


def _records(replay: Path) -> dict[str, dict]:
    lines = [json.loads(x) for x in replay.read_text(encoding="utf-8").splitlines()]
    return {r["id"]: r["arms"] for r in lines if "id" in r}


@pytest.mark.parametrize("task, schema", [("bfcl_simple", "arguments"), ("gsm8k", "answer")])
def test_all_three_json_arms_score_through_the_server(tool_server, tmp_path: Path, task: str,
                                                      schema: str) -> None:
    live = run_vbw(*_args(tool_server, task, 2), f"hydra.run.dir={tmp_path}/live",
                   cwd=tmp_path, timeout=900)
    assert live.returncode == 0, live.stderr
    report = load_json(tmp_path / "live/report.json")
    tool = f"tool_call[{schema}]"
    assert list(report["arms"]) == [f"prompt_json[{schema}]", f"constrained[{schema}]", tool]
    assert report["arms"][tool]["schema_validity"] is not None and report["n"] == 2
    pairs = {(c["from"], c["to"]) for c in report["comparisons"] if c["kind"] == "headline"}
    assert {(f"constrained[{schema}]", tool), (f"prompt_json[{schema}]", tool)} <= pairs
    records = _records(tmp_path / "live/replay.jsonl")
    for arms in records.values():
        rec = arms[tool]
        assert rec["tool"]["called"] == [rec["tool"]["sent"]]  # the forced call was made
        assert rec["text"] == rec["message"]["tool_calls"][0]["function"]["arguments"]
    if task == "bfcl_simple":  # the item's own function; BFCL's name mapping recorded
        assert records["simple_1"][tool]["tool"] == {
            "name": "math.factorial", "sent": "math_factorial", "called": ["math_factorial"]}
    again = run_vbw(f"task={task}", f"replay={tmp_path}/live/replay.jsonl", "n=2", ARMS,
                    f"arms.schemas=[{schema}]", f"hydra.run.dir={tmp_path}/re", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    rescored = load_json(tmp_path / "re/report.json")
    assert rescored["arms"] == report["arms"] and rescored["ledger"] == report["ledger"]


def test_server_killed_mid_run_then_resumed(tool_server, tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    args = [*_args(tool_server, "gsm8k", 3), f"replay={replay}"]
    proc = kill_server_after_first_item(tool_server, args, replay, tmp_path / "a",
                                        timeout=600)
    err = proc.stderr
    assert proc.returncode == 2, err
    errors = [ln for ln in err.splitlines() if ln.startswith("vbw: error:")]
    assert len(errors) == 1 and "Traceback" not in err and "resume=true" in errors[0]
    done = _records(replay)
    assert 1 <= len(done) < 3
    tool_server.start()
    resumed = run_vbw(*args, "resume=true", f"hydra.run.dir={tmp_path}/b", cwd=tmp_path,
                      timeout=900)
    assert resumed.returncode == 0, resumed.stderr
    full = _records(replay)
    assert list(full) == [f"gsm8k_test_{i}" for i in range(3)]
    assert all(full[i] == done[i] for i in done)  # finished items kept as they were
    assert all("tool_call[answer]" in arms for arms in full.values())

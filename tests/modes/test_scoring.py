"""A task's reports (vbw.modes.scoring): report.html's item data is built in a forked
worker while the other files are written, where scoring would split (split.Ahead); the
files are the bytes of the run that builds it in process."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPLAYS, run_vbw
from vbw.score import split

REPLAY = REPLAYS / "gsm8k" / "qwen2_5_0_5b" / "outlines.jsonl"


def _files(tmp_path: Path, processes: str) -> tuple[int, str, dict[str, bytes]]:
    run_dir = tmp_path / f"run{processes}"
    proc = run_vbw("task=gsm8k", f"replay={REPLAY}", f"hydra.run.dir={run_dir}",
                   cwd=tmp_path, env={split.ENV: processes})
    files = {p.name: p.read_bytes() for p in sorted(run_dir.iterdir()) if p.is_file()}
    return proc.returncode, proc.stdout.replace(str(run_dir), "RUN"), files


def test_the_item_data_built_ahead_writes_the_same_files(tmp_path: Path) -> None:
    one, two = _files(tmp_path, "1"), _files(tmp_path, "2")
    assert one[0] == 0 and "report.html" in one[2] and len(one[2]["report.html"]) > 10_000
    assert two == one

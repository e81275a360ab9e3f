"""A plain run is composed once and run by Hydra's job runner (vbw.cli.hydra_run): what it writes
must be what `@hydra.main`'s own path writes for the same command line."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import EXAMPLE, run_vbw

# on the command line, hydra.verbose sends a run through @hydra.main (vbw.cli.compose._plain_run)
HYDRAS_PATH = "hydra.verbose=false"


def _run(args: list[str], run_dir: Path) -> tuple[str, dict]:
    """stdout and stderr (run folder replaced by RUN) and the .hydra/ files, folder made RUN
    too."""
    proc = run_vbw(*args, f"hydra.run.dir={run_dir}", cwd=run_dir.parent)
    assert proc.returncode == 0, proc.stderr
    # stderr holds the note on the replay re-scored, nothing else
    assert [x.split(": re-scoring")[0] for x in proc.stderr.splitlines()] == \
        ["vbw: capitals"], proc.stderr
    files = {name: yaml.safe_load((run_dir / ".hydra" / name).read_text(encoding="utf-8"))
             for name in ("config.yaml", "hydra.yaml", "overrides.yaml")}
    h = files["hydra.yaml"]["hydra"]
    assert h["run"]["dir"] == h["runtime"]["output_dir"] == str(run_dir)
    h["run"]["dir"] = h["runtime"]["output_dir"] = "RUN"
    h["overrides"]["hydra"] = [o for o in h["overrides"]["hydra"]
                               if o not in (f"hydra.run.dir={run_dir}", HYDRAS_PATH)]
    return (proc.stdout + proc.stderr).replace(str(run_dir), "RUN"), files


def test_a_plain_run_writes_what_hydras_own_path_writes(tmp_path: Path) -> None:
    args = ["--config-dir", str(EXAMPLE), "task=capitals", "model=smollm2_135m",
            f"replays_dir={EXAMPLE / 'recorded'}", "n=4"]
    out, files = _run(args, tmp_path / "once")
    hydras_out, hydras_files = _run([*args, HYDRAS_PATH], tmp_path / "hydra")
    assert out == hydras_out and "Reports written to RUN" in out
    assert files == hydras_files
    h = files["hydra.yaml"]["hydra"]
    assert h["job"]["name"] == "cli" and h["mode"] == "RUN"
    assert h["overrides"]["hydra"] == ["hydra.mode=RUN"]  # as Hydra records a plain run
    assert files["overrides.yaml"] == args[2:]

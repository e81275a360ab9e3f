"""A live run spread over shards on the real SmolLM2 (vbw.modes.merge.write, end to end): two
shard jobs under the joblib launcher, merged at the end of the sweep, give the report of
the same run done in one job. Loads the model (marked live; run under
`flock /tmp/vbw-cpu.lock` on a shared machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import load_json, run_vbw
from tests.generate.conftest import HAVE_LLAMA, LIVE_REASON

pytestmark = [pytest.mark.live, pytest.mark.skipif(not HAVE_LLAMA, reason=LIVE_REASON)]
RUN = ["mode=live", "model=smollm2_135m", "engine=llamacpp", "task=bfcl_simple", "n=3",
       "threads=1", "arms=headline"]
# what differs between two runs of the same generations: where and when they ran, and
# their timings (`cost`: its token counts are compared apart)
PROVENANCE = ("meta", "source", "provenance", "mode", "cost")


def _substance(path: Path) -> dict:
    return {k: v for k, v in load_json(path).items() if k not in PROVENANCE}


def test_two_shards_under_joblib_merge_to_the_unsharded_report(tmp_path: Path) -> None:
    sweep = run_vbw("-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", *RUN,
                    "shard.index=0,1", "shard.count=2", f"hydra.sweep.dir={tmp_path}/s",
                    cwd=tmp_path, timeout=600)
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    whole = run_vbw(*RUN, f"hydra.run.dir={tmp_path}/whole", cwd=tmp_path, timeout=600)
    assert whole.returncode == 0, whole.stderr[-3000:]
    assert _substance(tmp_path / "s/merged/report.json") == _substance(tmp_path / "whole/report.json")
    tokens = [{k: c["output_tokens"] for k, c in load_json(p)["cost"].items()}
              for p in (tmp_path / "s/merged/report.json", tmp_path / "whole/report.json")]
    assert tokens[0] == tokens[1]  # the same texts: the same token counts
    rows = load_json(tmp_path / "s/summary.json")["rows"]
    assert [r["job"] for r in rows] == ["job 0", "job 1", "merged"]
    assert [r["n"] for r in rows] == [2, 1, 3]
    assert "== merged: 2 shard(s) of" in sweep.stdout

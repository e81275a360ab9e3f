"""No credential in any file a run or a sweep writes, nor on stdout/stderr: Hydra's own
`.hydra/*.yaml` and multirun.yaml (vbw.cli.hydra_redact), status and summary files, the replay
and the reports. Whole CLI runs against the scripted fake backend served over HTTP
(tests/generate/standin.EchoServer), with a base URL carrying a user, a password and a
key-like query parameter, and an API key that the fake model echoes in its answers."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.conftest import run_vbw
from tests.generate.standin import EchoServer
from vbw.cli.hydra_redact import redact_file, redact_job_files

PASSWORD = "pw-S3CRET-4471"
QUERY_KEY = "QK-SECRET-9235"
API_KEY = "sk-apikey-SECRET-58213"
SECRETS = [PASSWORD, QUERY_KEY, API_KEY, "ann:pw"]
ENV = {"VBW_TEST_KEY": API_KEY}
CAPS = ["arms.max_tokens.free=40", "arms.max_tokens.json=40", "arms.max_tokens.package=40"]


def _server(srv: EchoServer, model: str = "m") -> list[str]:
    url = srv.base_url.replace("http://", f"http://ann:{PASSWORD}@")
    return ["backend=openai", f"backend.base_url='{url}?api-key={QUERY_KEY}&api-version=1'",
            f"backend.model={model}", "backend.dialect=llama_cpp_python",
            "backend.api_key_env=VBW_TEST_KEY", "backend.max_retries=0", *CAPS]


def _assert_clean(folder: Path, proc) -> list[Path]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    for p in files:
        data = p.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in data, (p, secret)
    for secret in SECRETS:
        assert secret not in proc.stdout + proc.stderr, secret
    return files


def test_a_run_writes_no_credential_anywhere(tmp_path: Path) -> None:
    with EchoServer(leak=f"my key is {API_KEY}") as srv:
        proc = run_vbw("task=gsm8k", "mode=live", "n=2", *_server(srv),
                       f"hydra.run.dir={tmp_path}/o", cwd=tmp_path, env=ENV, timeout=300)
        posts = srv.posts
    assert proc.returncode == 0, proc.stderr
    files = _assert_clean(tmp_path / "o", proc)
    names = {p.relative_to(tmp_path / "o").as_posix() for p in files}
    assert {".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml",
            "replay.jsonl", "report.html", "report.json"} <= names, names
    # the run really used the credentials: Bearer key, key-like query parameter kept
    assert all(p["headers"]["Authorization"] == f"Bearer {API_KEY}" for p in posts)
    assert all(f"api-key={QUERY_KEY}" in p["path"] for p in posts)
    hydra_cfg = (tmp_path / "o/.hydra/config.yaml").read_text()
    assert "http://***@127.0.0.1" in hydra_cfg and "api-key=***&api-version=1" in hydra_cfg
    # the echoed key is masked in the replay, flagged, and the report says so
    lines = [json.loads(x) for x in (tmp_path / "o/replay.jsonl").read_text().splitlines()]
    arms = [a for r in lines if "id" in r for a in r["arms"].values()]
    free = [a for a in arms if a["text"] and "my key is" in a["text"]]
    assert free and all(a["text"].endswith("my key is ***") and a["redacted"] for a in free)
    assert all("redacted" not in a for a in arms if a not in free)
    head = lines[0]["meta"]
    assert "VBW_TEST_KEY" in head["backend"]["masked"]
    assert "masked" in json.loads((tmp_path / "o/report.json").read_text())["provenance"]


def _sweep(tmp_path: Path, *launcher: str):
    with EchoServer(leak=f"Authorization: Bearer {API_KEY} for {PASSWORD}") as srv:
        proc = run_vbw("-m", *launcher, "task=gsm8k", "mode=live", "n=1",
                       *_server(srv, "m,fail"), f"hydra.sweep.dir={tmp_path}/s",
                       cwd=tmp_path, env=ENV, timeout=300)
    assert proc.returncode == 2, proc.stderr  # the `fail` job: HTTP 401, exit 2
    files = _assert_clean(tmp_path / "s", proc)
    names = {p.relative_to(tmp_path / "s").as_posix() for p in files}
    assert {"multirun.yaml", "summary.json", "summary.md", "summary.html", "0/status.json",
            "1/status.json", "0/.hydra/overrides.yaml", "1/.hydra/hydra.yaml",
            "0/replay.jsonl"} <= names, names
    status = json.loads((tmp_path / "s/1/status.json").read_text())
    assert "HTTP 401" in status["reason"] and "***" in status["reason"]
    assert "http://***@127.0.0.1" in (tmp_path / "s/multirun.yaml").read_text()
    assert "== job 0: " in proc.stdout and "api-key=***" in proc.stdout


def test_a_sweep_writes_no_credential_anywhere(tmp_path: Path) -> None:
    _sweep(tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("hydra_plugins.hydra_joblib_launcher") is None,
                    reason="hydra-joblib-launcher is not installed (the launchers extra)")
def test_a_joblib_sweep_writes_no_credential_anywhere(tmp_path: Path) -> None:
    _sweep(tmp_path, "hydra/launcher=joblib")


def test_redact_job_files_rewrites_what_hydra_wrote(tmp_path: Path) -> None:
    job = tmp_path / "sweep" / "3"
    (job / ".hydra").mkdir(parents=True)
    (tmp_path / "sweep/multirun.yaml").write_text(f"- x=http://a:{PASSWORD}@h/v1\n")
    (job / ".hydra/overrides.yaml").write_text(f"- u=https://h/v1?token={QUERY_KEY}\n")
    (job / ".hydra/config.yaml").write_text("plain: 1\n")
    redact_job_files(job, ".hydra", multirun=False)
    assert PASSWORD in (tmp_path / "sweep/multirun.yaml").read_text()  # a run's: not looked for
    redact_job_files(job, ".hydra", multirun=True)
    assert (tmp_path / "sweep/multirun.yaml").read_text() == "- x=http://***@h/v1\n"
    assert (job / ".hydra/overrides.yaml").read_text() == "- u=https://h/v1?token=***\n"
    assert (job / ".hydra/config.yaml").read_text() == "plain: 1\n"
    assert not redact_file(tmp_path / "absent.yaml")
    assert sorted(p.name for p in (job / ".hydra").iterdir()) == \
        ["config.yaml", "overrides.yaml"]  # no temporary file left behind


def test_the_rewritten_yaml_still_parses(tmp_path: Path) -> None:
    """hydra.yaml holds `hydra/launcher: basic` under `hydra/sweeper: basic`: no token
    there; and a mask that would start a YAML value (`authorization: ***`) is quoted."""
    import yaml

    text = ("choices:\n  hydra/sweeper: basic\n  hydra/launcher: basic\n"
            f"headers:\n  authorization: Bearer {API_KEY}\n  Authorization: {API_KEY}\n"
            f"url: http://ann:{PASSWORD}@h/v1?api_key={QUERY_KEY}\n")
    path = tmp_path / "hydra.yaml"
    path.write_text(text)
    assert redact_file(path)
    out = yaml.safe_load(path.read_text())
    assert out["choices"] == {"hydra/sweeper": "basic", "hydra/launcher": "basic"}
    assert out["url"] == "http://***@h/v1?api_key=***"
    assert out["headers"] == {"authorization": "Bearer ***", "Authorization": "***"}


def test_cfg_prints_no_credential(tmp_path: Path) -> None:
    url = f"http://ann:{PASSWORD}@127.0.0.1:9/v1?api-key={QUERY_KEY}"
    proc = run_vbw("--cfg", "job", "backend=openai", f"backend.base_url='{url}'",
                   "backend.model=m", "backend.dialect=vllm", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "base_url: http://***@127.0.0.1:9/v1?api-key=***" in proc.stdout, proc.stdout
    for secret in SECRETS:
        assert secret not in proc.stdout + proc.stderr

"""The command line is composed with Hydra's own loader before Hydra runs: user config
folders count like bundled ones, sweeps are expanded, every failure is one line, exit 2."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLE, TASK_CONF, load_json, one_line_error, portable_task, run_vbw


def test_unknown_task_lists_bundled_and_user_options(tmp_path: Path) -> None:
    line = one_line_error(run_vbw("--config-dir", str(EXAMPLE), "task=capitls", cwd=tmp_path))
    assert "task=capitls: no such task config" in line
    assert "did you mean 'capitals'" in line
    assert all(name in line for name in ("bfcl_simple", "gsm8k", "capitals"))
    assert str(EXAMPLE) in line  # says where it looked


def test_unknown_option_in_a_sweep_fails_before_any_job(tmp_path: Path) -> None:
    line = one_line_error(run_vbw("-m", "task=gsm8k,nope", f"hydra.sweep.dir={tmp_path}/s",
                                  cwd=tmp_path))
    assert "task=nope" in line and "gsm8k" in line
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("args,expect", [
    (["gate.wrong_valid_abve=0.2"], ["gate.wrong_valid_abve=0.2: no such config key",
                                     "did you mean 'gate.wrong_valid_above'",
                                     "write gate.wrong_valid_above=0.2;"]),
    (["task=gsm8k,bfcl_simple"], ["task=gsm8k,bfcl_simple", "-m/--multirun"]),
    (["task.files=x.yaml"], ["task.files", "task.files=[x.yaml]", "brackets"]),
    (["task=gsm8k", "task.files=[x.yaml]"], ["task.files=[x.yaml]", "drop one"]),
    (["model=nope"], ["model=nope: no such model config", "smollm2_135m"]),
    (["--config-dir", "/nonexistent/dir"], ["--config-dir /nonexistent/dir: not a directory"]),
    (["n=="], ["n==", "cannot parse"]),
    (["--bogus-flag"], ["command line: unrecognized arguments: --bogus-flag"]),
    (["--info", "badarg"], ["command line: argument --info", "invalid choice"]),
    (["-m", "task=range(1,3)"], ["task=1", "must be a string"]),
    (["hydra/launcher=nope"], ["hydra/launcher=nope: no such hydra/launcher config",
                               "valid: basic"]),
    (["--config-name", "nope"], ["--config-name nope: no such primary config"]),
    (["mode=live", "decoding.samples=101"], ["decoding.samples", "less than or equal to 100",
                                             "(got 101)"]),
    (["mode=live", "decoding.samples=0"], ["decoding.samples", "greater than or equal to 1"]),
])
def test_command_line_errors_are_one_line_exit_2(tmp_path: Path, args: list[str],
                                                 expect: list[str]) -> None:
    line = one_line_error(run_vbw(*args, f"hydra.run.dir={tmp_path}/o", cwd=tmp_path))
    for text in expect:
        assert text in line, (text, line)


def test_duplicate_key_in_a_config_file_names_file_line_and_key(tmp_path: Path) -> None:
    conf = tmp_path / "conf" / "task"
    conf.mkdir(parents=True)
    text = (EXAMPLE / "task/capitals.yaml").read_text(encoding="utf-8")
    text = text.replace("label: exact-match accuracy\n",
                        "label: exact-match accuracy\nlabel: again\n")
    (conf / "dup.yaml").write_text(text, encoding="utf-8")
    line = one_line_error(run_vbw("--config-dir", str(tmp_path / "conf"), "task=dup",
                                  cwd=tmp_path))
    lineno = text.splitlines().index("label: again") + 1
    assert f"dup.yaml:{lineno}: duplicate key 'label'" in line


def test_model_and_arms_options_from_a_user_folder(tmp_path: Path) -> None:
    for group in ("model", "arms"):
        (tmp_path / "c" / group).mkdir(parents=True)
    model = yaml.safe_load((TASK_CONF.parent / "model/smollm2_135m.yaml").read_text())
    model["name"] = "mine"
    (tmp_path / "c/model/mine.yaml").write_text(yaml.safe_dump(model))
    (tmp_path / "c/arms/pair.yaml").write_text(
        "name: pair\nkinds: [prompt_json, constrained]\n"
        "max_tokens: {free: 64, json: 64, package: 64}\n")
    proc = run_vbw("--config-dir", str(tmp_path / "c"), "model=mine", "arms=pair",
                   "--cfg", "job", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    job = yaml.safe_load(proc.stdout)
    assert job["model"]["name"] == "mine" and job["arms"]["name"] == "pair"


def test_hydra_searchpath_works_like_config_dir(tmp_path: Path) -> None:
    proc = run_vbw(f"hydra.searchpath=[file://{EXAMPLE}]", "task=capitals", "mode=check",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "capitals: 12 items" in proc.stdout


def test_task_fields_are_overridable(tmp_path: Path) -> None:
    proc = run_vbw("task=gsm8k", "task.dataset.first=5", "task.check.tolerance=0.5",
                   "--cfg", "job", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    job = yaml.safe_load(proc.stdout)
    assert job["task"]["dataset"]["first"] == 5 and job["task"]["check"]["tolerance"] == 0.5
    check = run_vbw("task=gsm8k", "task.dataset.first=5", "mode=check", cwd=tmp_path)
    assert check.returncode == 0 and "gsm8k: 5 items" in check.stdout


def test_bad_task_field_override_names_the_override(tmp_path: Path) -> None:
    line = one_line_error(run_vbw("task=gsm8k", "task.check.tolerance=abc", "mode=check",
                                  cwd=tmp_path))
    assert "gsm8k.yaml" in line and "task.check.tolerance=abc" in line
    assert "check.numeric.tolerance" in line or "check.tolerance" in line


def test_task_path_shorthand_and_canonical_form(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(portable_task("gsm8k"),
                                                       sort_keys=False))
    short = run_vbw("task=./mine.yaml", "mode=check", "n=3", cwd=tmp_path)
    assert short.returncode == 0, short.stderr
    # a note on stderr names the canonical form; stdout keeps the report alone
    assert short.stderr.splitlines()[0] == ("vbw: note: task=./mine.yaml is read as "
                                            "task.files=[./mine.yaml] (task.files is the "
                                            "canonical form)")
    assert "vbw: note" not in short.stdout and short.stdout.startswith("# vbw check: gsm8k")
    canonical = run_vbw("task.files=[mine.yaml]", "mode=check", "n=3", cwd=tmp_path)
    assert canonical.returncode == 0, canonical.stderr
    assert "gsm8k: 3 items" in canonical.stdout and "note:" not in canonical.stdout


def test_glob_sweep_covers_user_and_bundled_tasks(tmp_path: Path) -> None:
    proc = run_vbw("-m", "--config-dir", str(EXAMPLE), "task=glob(*,exclude=demo)",
                   "mode=check", "n=2", f"hydra.sweep.dir={tmp_path}/s", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in ("bfcl_simple", "capitals", "gsm8k"):
        assert f"{name}: 2 items" in proc.stdout


def test_sweep_over_a_user_and_a_bundled_task_in_replay_mode(tmp_path: Path) -> None:
    proc = run_vbw("-m", "--config-dir", str(EXAMPLE), "task=gsm8k,capitals",
                   "model=smollm2_135m", f"replays_dir={EXAMPLE / 'recorded'}", "mode=replay",
                   f"hydra.sweep.dir={tmp_path}/s", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    reports = {load_json(p)["task"]: load_json(p) for p in (tmp_path / "s").glob("*/report.json")}
    assert set(reports) == {"gsm8k", "capitals"}
    assert reports["capitals"]["n"] == 12 and reports["gsm8k"]["n"] == 200


def test_a_selection_cannot_be_a_task_file(tmp_path: Path) -> None:
    shutil.copy(TASK_CONF / "demo.yaml", tmp_path / "demo_copy.yaml")
    line = one_line_error(run_vbw("task.files=[demo_copy.yaml]", "mode=check", cwd=tmp_path))
    assert "is a selection of tasks" in line


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
GUARD_BOUND_S = 30


def _timed(*args: str, cwd: Path) -> tuple[object, float]:
    start = time.perf_counter()
    proc = run_vbw(*args, cwd=cwd, timeout=GUARD_BOUND_S * 4)
    return proc, time.perf_counter() - start


def test_a_bomb_among_10000_config_files_is_caught(tmp_path: Path) -> None:
    """No file count caps the guard: it reads what composition reads."""
    conf = tmp_path / "conf"
    shutil.copytree(EXAMPLE, conf)
    filler = conf / "filler"
    filler.mkdir()
    for i in range(10_000):
        (filler / f"f{i:05d}.yaml").write_text("x: 1\n")
    (conf / "task" / "zzz.yaml").write_text(BOMB)
    for args in (["--config-dir", str(conf)], [f"hydra.searchpath=[file://{conf}]"]):
        proc, took = _timed(*args, "task=zzz", "mode=check", cwd=tmp_path)
        line = one_line_error(proc)  # type: ignore[arg-type]
        assert "zzz.yaml" in line and "alias" in line and took < GUARD_BOUND_S, (line, took)


def test_a_bomb_under_config_path_is_caught(tmp_path: Path) -> None:
    conf = tmp_path / "primary"
    conf.mkdir()
    (conf / "config.yaml").write_text(BOMB)
    proc, took = _timed("--config-path", str(conf), "--config-name", "config",
                        cwd=tmp_path)
    line = one_line_error(proc)  # type: ignore[arg-type]
    assert "config.yaml" in line and "alias" in line and took < GUARD_BOUND_S, (line, took)


def test_a_config_pulled_in_by_defaults_is_checked(tmp_path: Path) -> None:
    """A selected config's defaults list pulls in another file: that one is read too."""
    conf = tmp_path / "conf"
    shutil.copytree(EXAMPLE, conf)
    (conf / "extra").mkdir()
    (conf / "extra" / "deep.yaml").write_text("a: " + "[" * 500 + "]" * 500 + "\n")
    text = (conf / "task/capitals.yaml").read_text()
    (conf / "task/pulls.yaml").write_text("defaults:\n  - /extra: deep\n" + text)
    proc, took = _timed("--config-dir", str(conf), "task=pulls", "mode=check", cwd=tmp_path)
    line = one_line_error(proc)  # type: ignore[arg-type]
    assert "deep.yaml" in line and "nested deeper" in line and took < GUARD_BOUND_S


def test_broken_sibling_files_block_no_task_that_does_not_use_them(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    shutil.copytree(EXAMPLE, conf)
    (conf / "task/latin1.yaml").write_bytes(b"name: caf\xe9\n")
    (conf / "task/syntax.yaml").write_text("name: [unclosed\n")
    (conf / "task/dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (conf / "loop").symlink_to(conf)                      # a folder link loop
    (conf / "task/bomb.yaml").write_text(BOMB)
    proc, took = _timed("--config-dir", str(conf), "task=capitals", "mode=check",
                        cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr  # type: ignore[attr-defined]
    assert "capitals: 12 items" in proc.stdout and took < GUARD_BOUND_S  # type: ignore
    proc, _ = _timed("--config-dir", str(conf), "task=syntax", "mode=check", cwd=tmp_path)
    assert "syntax.yaml:" in one_line_error(proc)  # type: ignore[arg-type]


def test_version_names_vbw_and_hydra(tmp_path: Path) -> None:
    import hydra

    import vbw

    for flag in ("--version", "--vers"):  # argparse's prefix of it, as Hydra's parser takes
        proc = run_vbw(flag, cwd=tmp_path)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        assert proc.stdout == f"vbw {vbw.__version__} (hydra-core {hydra.__version__})\n"

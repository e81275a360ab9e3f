"""Every config in conf/ composes and validates as the CLI would take it: the run config
as a RunConfig, the task node as tasks (a task config is itself a task; demo selects)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from vbw.config import RunConfig
from vbw.resources import bundled
from vbw.task.locate import select_tasks

CONF = bundled("conf")
GROUPS = {g: sorted(p.stem for p in (CONF / g).glob("*.yaml"))
          for g in ("model", "engine", "arms", "task")}


def _validated(overrides: list[str]) -> tuple[RunConfig, list[str]]:
    cfg = compose(config_name="config", overrides=overrides)
    rest = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "task"])
    run_cfg = RunConfig.model_validate(OmegaConf.to_container(rest, resolve=True))
    choice = dict(o.split("=", 1) for o in overrides).get("task", "demo")
    tasks = select_tasks(OmegaConf.to_container(cfg.task, resolve=False), choice, [CONF],
                         Path.cwd())
    return run_cfg, [t.name for t in tasks]


def test_every_group_has_options() -> None:
    assert all(GROUPS.values()), GROUPS
    assert {"qwen2_5_0_5b", "smollm2_135m"} <= set(GROUPS["model"])
    assert set(GROUPS["engine"]) == {"outlines", "llamacpp", "llguidance"}
    assert {"standard", "headline"} <= set(GROUPS["arms"])
    assert {"gsm8k", "bfcl_simple", "demo"} <= set(GROUPS["task"])


@pytest.mark.parametrize("group,option", [(g, o) for g, opts in GROUPS.items() for o in opts])
def test_each_option_composes(group: str, option: str) -> None:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        rc, tasks = _validated([f"{group}={option}"])
    if group == "task":
        assert tasks == (["bfcl_simple", "gsm8k"] if option == "demo" else [option])
    else:
        assert getattr(rc, group).name == option


def test_full_cross_product_composes() -> None:
    """Every model x engine x arms combination composes and validates. The task group
    composes only the `task` key, which no other group reads or writes, so each task is
    composed with every other group's default (the per-option test above) rather than
    multiplied in: the same coverage at a sixth of the compositions."""
    groups = {g: o for g, o in GROUPS.items() if g != "task"}
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        for combo in itertools.product(*groups.values()):
            _validated([f"{g}={o}" for g, o in zip(groups, combo)])


def test_hydra_and_plain_yaml_read_a_task_alike() -> None:
    """A task composed by Hydra (OmegaConf's YAML loader) is the same data as the file read
    by vbw's own loader (task.files), so both routes give the same task and task hash."""
    from vbw.task.runner import load_task

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        for name in ("gsm8k", "bfcl_simple"):
            cfg = compose(config_name="config", overrides=[f"task={name}"])
            composed = select_tasks(OmegaConf.to_container(cfg.task, resolve=False), name,
                                    [CONF], Path.cwd())[0]
            direct = load_task(CONF / "task" / f"{name}.yaml")
            assert composed.spec == direct.spec
            assert composed.generation_hash() == direct.generation_hash()


def test_the_excluded_parallel_multiple_94_is_described_as_its_data_is() -> None:
    """bfcl_parallel_multiple leaves out item 94 because its gold gives strings where the
    function declares an array of integers (`sort_list.elements`); the task file's comment
    and docs/bfcl.md say so, read against the data (they once said it the other way round)."""
    import json

    from tests.conftest import DATA, ROOT

    def row(name: str) -> dict:
        lines = (DATA / "bfcl_v4" / name).read_text(encoding="utf-8").splitlines()
        return next(json.loads(x) for x in lines if '"parallel_multiple_94"' in x)

    sort_list = next(f for f in row("BFCL_v4_parallel_multiple.jsonl")["function"]
                     if f["name"] == "sort_list")
    assert sort_list["parameters"]["properties"]["elements"]["items"] == {"type": "integer"}
    gold = row("BFCL_v4_parallel_multiple_possible_answer.jsonl")["ground_truth"]
    first_sort = next(c["sort_list"] for c in gold if "sort_list" in c)
    assert all(isinstance(v, str) for allowed in first_sort["elements"] for v in allowed)
    said = {"conf": (CONF / "task" / "bfcl_parallel_multiple.yaml").read_text(encoding="utf-8"),
            "docs": (ROOT / "docs" / "bfcl.md").read_text(encoding="utf-8")}
    for where, text in said.items():
        flat = " ".join(text.replace("#", " ").split())
        assert "strings for an array of integers" in flat, where
        assert "integers for an array of strings" not in flat, where

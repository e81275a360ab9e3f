"""Every config in conf/ composes and validates as a RunConfig."""

from __future__ import annotations

import itertools

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from vbw.config import RunConfig
from vbw.resources import bundled

CONF = bundled("conf")
GROUPS = {g: sorted(p.stem for p in (CONF / g).glob("*.yaml"))
          for g in ("model", "engine", "arms", "task")}


def test_every_group_has_options() -> None:
    assert all(GROUPS.values()), GROUPS
    assert {"qwen2_5_0_5b", "smollm2_135m"} <= set(GROUPS["model"])
    assert set(GROUPS["engine"]) == {"outlines", "llamacpp"}
    assert {"standard", "headline"} <= set(GROUPS["arms"])


@pytest.mark.parametrize("group,option", [(g, o) for g, opts in GROUPS.items() for o in opts])
def test_each_option_composes(group: str, option: str) -> None:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"{group}={option}"])
    data = OmegaConf.to_container(cfg, resolve=True)
    rc = RunConfig.model_validate(data)
    assert getattr(rc, group) is not None


def test_full_cross_product_composes() -> None:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        for combo in itertools.product(*GROUPS.values()):
            overrides = [f"{g}={o}" for g, o in zip(GROUPS, combo)]
            RunConfig.model_validate(OmegaConf.to_container(
                compose(config_name="config", overrides=overrides), resolve=True))

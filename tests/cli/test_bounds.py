"""vbw/cli/bounds.py: what a command line may make Hydra and OmegaConf do is bounded
(issue 30 item 6): override nesting, sweep size, interpolation expansion and chains."""

from __future__ import annotations

import time

import pytest
from omegaconf import OmegaConf

from vbw.cli.bounds import (MAX_CHAIN, MAX_JOBS, MAX_RESOLVED, MAX_STEPS, OVERRIDE_DEPTH,
                        check_interpolations, check_overrides, check_sweep)
from vbw.errors import ConfigError


def _nested(depth: int) -> str:
    return "+a=" + "[" * depth + "]" * depth


def test_an_override_nests_at_most_override_depth() -> None:
    check_overrides([_nested(OVERRIDE_DEPTH), "+b=" + "{a:" * OVERRIDE_DEPTH + "1" +
                     "}" * OVERRIDE_DEPTH])
    with pytest.raises(ConfigError, match=rf"nested {OVERRIDE_DEPTH + 1} levels deep; an "
                       rf"override may nest {OVERRIDE_DEPTH}$"):
        check_overrides([_nested(OVERRIDE_DEPTH + 1)])
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="nested 3000 levels deep"):
        check_overrides([_nested(3000)])
    assert time.perf_counter() - start < 0.1


def _parsed(*overrides: str) -> list:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create().parse_overrides(list(overrides))


def test_a_sweep_runs_at_most_max_jobs_counted_before_expansion() -> None:
    check_sweep(_parsed(f"n=range(0,{MAX_JOBS})"))
    check_sweep(_parsed("seed=1,2", f"n=range(0,{MAX_JOBS // 2})", "x=3"))
    with pytest.raises(ConfigError, match=rf"more than {MAX_JOBS:,} jobs \(the largest "
                       rf"sweep: n=range\(0,{MAX_JOBS + 1}\)\)"):
        check_sweep(_parsed(f"n=range(0,{MAX_JOBS + 1})"))
    with pytest.raises(ConfigError, match="more than"):
        check_sweep(_parsed("seed=1,2", f"n=range(0,{MAX_JOBS // 2 + 1})"))
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="more than"):  # counted, never expanded
        check_sweep(_parsed("n=range(1,3000000000000)", "t=range(0.0,1.0,0.0000001)"))
    assert time.perf_counter() - start < 0.5


def _doubling(levels: int, seed: str = "x") -> dict:
    cfg = {"b0": seed}
    for i in range(1, levels + 1):
        cfg[f"b{i}"] = f"${{b{i - 1}}}${{b{i - 1}}}"
    return cfg


def test_interpolations_expand_to_at_most_max_resolved_characters() -> None:
    """b_k resolves to 2^k times b0: 2^16 characters doubled 4 times is MAX_RESOLVED
    itself (allowed), 5 times is not."""
    assert MAX_RESOLVED == 1 << 20
    wide = "x" * (1 << 16)
    check_interpolations(OmegaConf.create(_doubling(4, wide)))
    with pytest.raises(ConfigError, match=r"^b5: its interpolations expand beyond "
                       r"1,048,576 characters"):
        check_interpolations(OmegaConf.create(_doubling(5, wide)))


def test_interpolations_take_at_most_max_steps_to_resolve() -> None:
    """OmegaConf caches no interpolation: b_k costs 2^(k+1) - 2 resolutions, so a config
    of b0..b7 (2^9 - 18 = 494 in all) is allowed, b0..b8 (1,004) not, though its text
    is short (the error names the key that tips it); a bomb of 60 doublings, of lists or
    of selecting resolvers is refused at once."""
    assert MAX_STEPS == 1_000
    start = time.perf_counter()
    check_interpolations(OmegaConf.create(_doubling(7)))
    with pytest.raises(ConfigError, match=r"^b8: its interpolations take more than "
                       r"1,000 steps to resolve"):
        check_interpolations(OmegaConf.create(_doubling(8)))
    with pytest.raises(ConfigError, match=r"^b8: its interpolations take more than 1,000 "
                       r"steps to resolve"):
        check_interpolations(OmegaConf.create(_doubling(60)))
    lists = {"c0": [1, 2]} | {f"c{i}": [f"${{c{i - 1}}}", f"${{c{i - 1}}}"] for i in range(1, 80)}
    with pytest.raises(ConfigError, match="^c8: .* steps"):
        check_interpolations(OmegaConf.create(lists))
    selected = {"d0": "x"} | {f"d{i}": f"${{oc.select:d{i - 1}}}${{oc.select:d{i - 1},z}}"
                              for i in range(1, 60)}
    with pytest.raises(ConfigError, match="^d8: .* steps"):
        check_interpolations(OmegaConf.create(selected))
    assert time.perf_counter() - start < 5


def test_an_interpolation_chain_is_at_most_max_chain_deep_either_way_it_is_walked() -> None:
    def chain(length: int, backwards: bool) -> dict:
        keys = [f"k{i}" for i in range(length + 1)]
        cfg = {keys[0]: "x"} | {keys[i]: f"${{{keys[i - 1]}}}" for i in range(1, length + 1)}
        return dict(reversed(cfg.items())) if backwards else cfg

    for backwards in (False, True):
        check_interpolations(OmegaConf.create(chain(MAX_CHAIN, backwards)))
        with pytest.raises(ConfigError, match=f"chained more than {MAX_CHAIN} deep"):
            check_interpolations(OmegaConf.create(chain(MAX_CHAIN + 1, backwards)))
        with pytest.raises(ConfigError, match=f"chained more than {MAX_CHAIN} deep"):
            check_interpolations(OmegaConf.create(chain(3000, backwards)))


def test_a_cycle_or_a_resolver_error_is_one_line_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"^a: its interpolation refers to itself "
                       r"\(a -> b -> a\)$"):
        check_interpolations(OmegaConf.create({"a": "${b}", "b": "x${.a}"}))
    with pytest.raises(ConfigError, match=r"^a: cannot resolve its interpolation "
                       r"\(GrammarParseError"):
        check_interpolations(OmegaConf.create({"a": '${oc.decode:"{"}'}))
    with pytest.raises(ConfigError, match=r"^a: cannot resolve its interpolation "
                       r"\(Interpolation key 'nope' not found\)$"):
        check_interpolations(OmegaConf.create({"a": "${nope}"}))


def test_the_task_node_is_text_never_interpolated() -> None:
    check_interpolations(OmegaConf.create({"task": {"prompts": {"free": "costs ${price}"},
                                                    "bomb": _doubling(60)}, "n": 3}))

"""Bounds on what a command line may make Hydra and OmegaConf do before any job starts.

vbw.cli.compose checks them first: override depth (OVERRIDE_DEPTH), jobs in a
multirun (MAX_JOBS) and what interpolations resolve to (MAX_RESOLVED, MAX_STEPS,
MAX_CHAIN, no self-reference); each refusal is one line, exit 2.

How it works and why: docs/design.md, section vbw.cli.bounds.
"""

from __future__ import annotations

import math
import re
from typing import Any

from vbw.errors import ConfigError, one_line

OVERRIDE_DEPTH = 64         # a config needs about 5
MAX_JOBS = 1_000            # jobs in one multirun; split a larger one
MAX_RESOLVED = 1 << 20      # characters a config value's interpolations may expand to
MAX_STEPS = 1_000           # interpolations resolved in all (OmegaConf caches none)
MAX_CHAIN = 40              # interpolations followed one inside another (OmegaConf's
                            # recursion gives out at ~60)

_OPEN, _CLOSE = frozenset("[{("), frozenset("]})")
# `${a.b}`, `${.sibling}`, and the key a selecting resolver takes (`${oc.select:a.b,x}`)
_REF = re.compile(r"\$\{\s*(?:oc\.(?:select|dict\.keys|dict\.values)\s*:\s*)?"
                  r"([\w.\-\[\]]+)\s*[,}]")


def check_overrides(overrides: list[str]) -> None:
    """Refuse an override nested deeper than OVERRIDE_DEPTH before Hydra parses it."""
    for text in overrides:
        depth = deepest = 0
        for c in text:
            if c in _OPEN:
                depth += 1
                deepest = max(deepest, depth)
            elif c in _CLOSE:
                depth -= 1
        if deepest > OVERRIDE_DEPTH:
            raise ConfigError(f"{text[:60]}...: nested {deepest} levels deep; an override "
                              f"may nest {OVERRIDE_DEPTH}")


def _sweep_size(o: Any) -> int:
    from hydra.core.override_parser.types import RangeSweep

    value = o.value()
    if not isinstance(value, RangeSweep):
        return sum(1 for _ in o.sweep_string_iterator())
    start, stop, step = value.start, value.stop, value.step
    if not step:
        return 0
    if all(isinstance(v, int) for v in (start, stop, step)):
        return len(range(start, stop, step))
    return max(0, math.ceil((stop - start) / step))


def check_sweep(parsed: list[Any]) -> None:
    """Refuse a discrete sweep of more than MAX_JOBS jobs, before it is expanded."""
    sizes: dict[str, tuple[int, str]] = {}
    for o in parsed:  # a key given twice: the last one counts, as in Hydra's sweeper
        if o.is_sweep_override() and o.is_discrete_sweep():
            sizes[o.get_key_element()] = (_sweep_size(o), o.input_line)
    total = 1
    for size, _ in sizes.values():
        total *= size
        if total > MAX_JOBS:
            break
    if total > MAX_JOBS:
        biggest = max(sizes.values())[1]
        raise ConfigError(f"-m {' '.join(line for _, line in sizes.values())}: more than "
                          f"{MAX_JOBS:,} jobs (the largest sweep: {biggest}); a multirun "
                          f"runs at most {MAX_JOBS:,}: split it")


def check_interpolations(cfg: Any) -> None:
    """Refuse interpolations that expand too far, chain too deep or cycle (see the module
    docstring); then resolve the config outside `hydra` and `task` once, an error being
    one line naming the key."""
    from omegaconf import OmegaConf

    keys = [k for k in cfg if k != "task"]
    raw: Any = OmegaConf.to_container(OmegaConf.masked_copy(cfg, keys), resolve=False)
    if isinstance(raw.get("hydra"), dict):  # the command line as given, never resolved
        raw["hydra"].pop("overrides", None)
    _Expansion(raw).check()
    mine = OmegaConf.masked_copy(cfg, [k for k in keys if k != "hydra"])
    try:
        OmegaConf.to_container(mine, resolve=True)
    except RecursionError:
        raise ConfigError("config: interpolations nested too deep to resolve") from None
    except Exception as e:  # noqa: BLE001  OmegaConf's and its resolvers' errors alike
        key = getattr(e, "full_key", None)
        msg = one_line(e, typed=False).split(" full_key:")[0]
        raise ConfigError(f"{key or 'config'}: cannot resolve its interpolation ({msg})") \
            from None


class _Expansion:
    """What each key of a plain config tree costs once every `${...}` it holds is
    replaced: the characters it expands to, the interpolations OmegaConf resolves on the
    way (it caches none: `${a}${a}` resolves `a` twice) and how deep they chain; each key
    worked out once."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.done: dict[str, _Cost] = {}
        self.stack: list[str] = []
        self.hops = 0  # interpolations being followed one inside another, now

    def check(self) -> None:
        """Every key, Hydra's last (so an error names the user's key that holds it); the
        resolutions of all but Hydra's are counted together, as vbw resolves them at once
        (each key in bounds, a hundred of them need not be)."""
        steps = 0
        for key in sorted(self.root, key=lambda k: k == "hydra"):
            cost = self.of(str(key), self.root[key])
            steps += cost.steps if key != "hydra" else 0
            _Cost(1, steps, 0).check(str(key))

    def of(self, path: str, node: Any) -> _Cost:
        if path in self.done:
            return self.done[path]
        if path in self.stack:
            cycle = " -> ".join(self.stack[self.stack.index(path):] + [path])
            raise ConfigError(f"{path}: its interpolation refers to itself ({cycle})")
        self.stack.append(path)
        try:
            cost = self._own(path, node)
        finally:
            self.stack.pop()
        cost.check(path)
        self.done[path] = cost
        return cost

    def _own(self, path: str, node: Any) -> _Cost:
        if isinstance(node, dict):
            items: Any = ((f"{path}.{k}", v) for k, v in node.items())
        elif isinstance(node, list):
            items = ((f"{path}[{i}]", v) for i, v in enumerate(node))
        else:
            return self._text(path, node if isinstance(node, str) else "")
        cost = _Cost(1, 0, 0)
        for key, value in items:
            if cost.add(self.of(key, value)):
                break
        return cost

    def _text(self, path: str, text: str) -> _Cost:
        cost = _Cost(len(text) or 1, 0, 0)
        for m in _REF.finditer(text) if "${" in text else ():
            target = self._target(path, m.group(1))
            if target is None:
                continue
            if m.group(0).endswith("}") and "oc." not in m.group(0):
                cost.size -= len(m.group(0))  # `${key}` is replaced by what it names
            self.hops += 1  # (a chain walked from its far end is cut short here)
            try:
                if self.hops > MAX_CHAIN:
                    raise ConfigError(f"{path}: interpolations chained more than "
                                      f"{MAX_CHAIN} deep (one refers to the next)")
                if cost.add(self.of(*target), hop=True):
                    break
            finally:
                self.hops -= 1
        return cost

    def _target(self, path: str, ref: str) -> tuple[str, Any] | None:
        """The (path, node) `${ref}` in the value at `path` names; None if none."""
        if ref.startswith("."):
            parts = path.split(".")
            dots = len(ref) - len(ref.lstrip("."))
            ref = ".".join(parts[:max(0, len(parts) - dots)] + [ref.lstrip(".")])
        node: Any = self.root
        for part in ref.split("."):
            if isinstance(node, dict) and part in node:
                node = node[part]
            else:
                return None
        return ref, node


class _Cost:
    """A key's expansion: characters, interpolations resolved, chain depth."""

    def __init__(self, size: int, steps: int, chain: int) -> None:
        self.size, self.steps, self.chain = size, steps, chain

    def add(self, other: _Cost, hop: bool = False) -> bool:
        """Count `other` in (through one interpolation if `hop`); whether over a bound."""
        self.size += other.size
        self.steps += other.steps + hop
        self.chain = max(self.chain, other.chain + hop)
        return self.size > MAX_RESOLVED or self.steps > MAX_STEPS

    def check(self, path: str) -> None:
        if self.size > MAX_RESOLVED:
            raise ConfigError(f"{path}: its interpolations expand beyond {MAX_RESOLVED:,} "
                              "characters (a value doubled by ${...}${...}, again and "
                              "again?)")
        if self.steps > MAX_STEPS:
            raise ConfigError(f"{path}: its interpolations take more than {MAX_STEPS:,} "
                              "steps to resolve (a value repeated by ${...}${...}, again "
                              "and again?)")
        if self.chain > MAX_CHAIN:
            raise ConfigError(f"{path}: interpolations chained more than {MAX_CHAIN} deep "
                              "(one refers to the next)")

"""vbw.registry: a vocabulary that installed packages extend through entry points, read
only when a tag is unknown or the kinds are listed, and whose union takes a plugin's
model for the plugin's tag while vbw's own kinds validate (and publish) as before."""

from __future__ import annotations

import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ValidationError

from vbw.registry import PluginError, Registry
from vbw.task.base import StrictModel


def install(root: Path, dist: str, group: str, entries: dict[str, str], module: str,
            source: str) -> None:
    """A real installed distribution (a .dist-info beside its module) under `root`."""
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}\n")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("zoo_")]:
        del sys.modules[name]


COW = """
    from typing import Literal
    from vbw.task.base import StrictModel

    class Cow(StrictModel):
        kind: Literal["cow"]
        spots: int = 3
"""


def _animals(group: str) -> Registry[StrictModel]:
    reg: Registry[StrictModel] = Registry("animal", group=group)

    @reg.register
    class Cat(StrictModel):
        kind: Literal["cat"]

    @reg.register
    class Dog(StrictModel):
        kind: Literal["dog"]

    return reg


def test_entry_points_are_read_only_for_an_unknown_tag_or_a_listing(site: Path) -> None:
    install(site, "zoo-cows", "vbw.test_zoo", {"cow": "zoo_cows:Cow"}, "zoo_cows", COW)
    reg = _animals("vbw.test_zoo")
    assert reg.get("cat").__name__ == "Cat" and "zoo_cows" not in sys.modules
    assert reg.get("cow").__name__ == "Cow" and "zoo_cows" in sys.modules
    assert reg.kinds == ("cat", "dog", "cow")
    with pytest.raises(ValueError, match=r"unknown animal kind 'cwo'; did you mean 'cow'\?"):
        reg.get("cwo")


def test_the_union_validates_a_plugin_kind_and_keeps_its_own_schema(site: Path) -> None:
    install(site, "zoo-cows", "vbw.test_zoo2", {"cow": "zoo_cows:Cow"}, "zoo_cows", COW)
    reg = _animals("vbw.test_zoo2")

    class Pen(BaseModel):
        animal: reg.union()  # type: ignore[valid-type]

    schema = Pen.model_json_schema()
    assert set(schema["$defs"]) == {"Cat", "Dog"}  # the published schema: vbw's own kinds
    assert type(Pen(animal={"kind": "cat"}).animal).__name__ == "Cat"
    assert "zoo_cows" not in sys.modules  # vbw's own kinds never read the entry points
    pen = Pen(animal={"kind": "cow", "spots": 5})
    assert type(pen.animal).__name__ == "Cow"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a plugin's model serialises without a warning
        assert pen.model_dump() == {"animal": {"kind": "cow", "spots": 5}}
    assert Pen(animal=pen.animal).animal is pen.animal
    with pytest.raises(ValidationError, match="spots"):
        Pen(animal={"kind": "cow", "spots": "many"})
    with pytest.raises(ValidationError) as e:  # an unknown tag: every kind, the plugin's too
        Pen(animal={"kind": "pig"})
    assert e.value.errors()[0]["type"] == "union_tag_invalid"
    assert e.value.errors()[0]["msg"] == "unknown animal kind 'pig'; valid: cat, dog, cow"


def test_a_broken_plugin_is_one_line_naming_it(site: Path) -> None:
    install(site, "zoo-bad", "vbw.test_zoo3", {"yak": "zoo_bad:Nothing"}, "zoo_bad", "X = 1\n")
    reg = _animals("vbw.test_zoo3")
    with pytest.raises(PluginError, match=r"entry point 'yak' = 'zoo_bad:Nothing' of group "
                       r"'vbw.test_zoo3' \(module 'zoo_bad'\) does not load: AttributeError"):
        reg.get("yak")


def test_a_plugin_that_exits_or_raises_at_import_is_a_usage_error_naming_it(
        site: Path) -> None:
    """Issue 30 item 10: SystemExit at import made vbw exit 0 silently, any other exception
    exit 3; now both are a PluginError (a VbwError: exit 2), one line naming the group,
    the entry point and its module."""
    from vbw.errors import VbwError

    install(site, "zoo_exit", "vbw.test_zoo9", {"gnu": "zoo_exit:Gnu"}, "zoo_exit",
            "import sys\nsys.exit(0)\n")
    install(site, "zoo_raise", "vbw.test_zoo10", {"elk": "zoo_raise:Elk"}, "zoo_raise",
            "raise RuntimeError('no\\nelk')\n")
    for group, entry, why in (("vbw.test_zoo9", "'gnu' = 'zoo_exit:Gnu'", "SystemExit: 0"),
                              ("vbw.test_zoo10", "'elk' = 'zoo_raise:Elk'",
                               "RuntimeError: no elk")):
        with pytest.raises(VbwError) as e:
            _animals(group).get("pig")
        assert str(e.value) == (f"entry point {entry} of group {group!r} (module "
                                f"'{entry.split(chr(39))[3].split(':')[0]}') does not load: "
                                f"{why}")
        assert isinstance(e.value, PluginError) and e.value.exit_code == 2


def test_a_plugin_cannot_take_a_kind_vbw_has(site: Path) -> None:
    install(site, "zoo-cats", "vbw.test_zoo4", {"cat": "zoo_cats:Cat"}, "zoo_cats", """
        from typing import Literal
        from vbw.task.base import StrictModel

        class Cat(StrictModel):
            kind: Literal["cat"]
    """)
    reg = _animals("vbw.test_zoo4")
    with pytest.raises(PluginError, match="claimed by both Cat and Cat"):
        reg.kinds


def test_a_task_uses_a_checker_kind_from_an_installed_package(site: Path) -> None:
    """The real CHECKERS vocabulary (group vbw.checkers), through a task checker field."""
    from vbw.task.check import CHECKERS, Checker

    install(site, "zoo-checker", "vbw.checkers", {"zoo_len": "zoo_checker:SameLength"},
            "zoo_checker", """
        from typing import Any, Literal
        from vbw.task.base import StrictModel

        class SameLength(StrictModel):
            kind: Literal["zoo_len"]

            def check(self, answer: Any, gold: Any) -> bool:
                return len(str(answer)) == len(str(gold))
    """)
    saved = dict(CHECKERS._classes), CHECKERS._plugins_loaded
    CHECKERS._plugins_loaded = False  # the group as a fresh process would read it
    try:
        from pydantic import TypeAdapter

        checker = TypeAdapter(Checker).validate_python({"kind": "zoo_len"})
        assert checker.check("abc", "xyz") and not checker.check("ab", "xyz")
        assert "zoo_len" in CHECKERS.kinds
    finally:
        CHECKERS._classes.clear()
        CHECKERS._classes.update(saved[0])
        CHECKERS._plugins_loaded = saved[1]


def test_a_misspelt_backend_kind_is_one_line_listing_the_installed_ones(site: Path) -> None:
    """The real BACKENDS vocabulary through the run config: a name no kind has is refused
    when the config is validated, naming the value and every kind, a package's included."""
    from vbw.config import BACKENDS, RunConfig
    from vbw.errors import ConfigError
    from vbw.validation import validate

    install(site, "zoo-backend", "vbw.backends", {"zoo_echo": "zoo_backend:Echo"},
            "zoo_backend", """
        from typing import ClassVar, Literal
        from vbw.config import BackendSettings

        class Echo(BackendSettings):
            provider: ClassVar[str] = "zoo_backend:Nothing"
            name: Literal["zoo_echo"]
    """)
    saved = dict(BACKENDS._classes), BACKENDS._plugins_loaded
    BACKENDS._plugins_loaded = False  # the group as a fresh process would read it
    try:
        with pytest.raises(ConfigError) as e:
            validate(RunConfig, {"model": {"name": "m"}, "engine": {"name": "outlines"},
                                 "arms": {"name": "a", "kinds": ["unconstrained"],
                                          "max_tokens": {"free": 1, "json": 1, "package": 1}},
                                 "backend": {"name": "zoo_ecoh"}}, source="config")
        line = str(e.value)
        assert line.startswith("config: backend: unknown backend kind 'zoo_ecoh'; did you "
                               "mean 'zoo_echo'? valid: local, openai, ")  # then any plugged
        assert "zoo_echo" in line.partition("valid: ")[2].split(" (got")[0].split(", ")
    finally:
        BACKENDS._classes.clear()
        BACKENDS._classes.update(saved[0])
        BACKENDS._plugins_loaded = saved[1]


def test_a_replay_run_reads_no_entry_point_group_of_vbw(tmp_path: Path) -> None:
    """The bundled demo re-scored: no vbw.* group is read, no registry loads plugins."""
    import subprocess

    code = textwrap.dedent(f"""
        import importlib.metadata as m, sys
        seen = []
        real = m.entry_points
        def spy(**kw):
            seen.append(kw.get("group"))
            return real(**kw)
        m.entry_points = spy
        sys.argv = ["vbw", "task=demo", "hydra.run.dir={tmp_path}/out"]
        from vbw.cli.command import main
        try:
            main()
        except SystemExit as e:
            assert e.code in (0, None), e.code
        from vbw.config import BACKENDS
        from vbw.generate.engines import ENGINES
        from vbw.modes import MODES
        from vbw.report.writers import OUTPUTS
        from vbw.task.check import CHECKERS
        from vbw.task.extract import STEPS
        live = ("llama_cpp", "outlines", "outlines_core", "llguidance", "numba",
                "huggingface_hub")
        print([g for g in seen if g and g.startswith("vbw.")],
              [r._plugins_loaded for r in (BACKENDS, CHECKERS, STEPS, ENGINES, MODES,
                                           OUTPUTS)],
              sorted(m for m in sys.modules if m.split(".")[0] in live))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300).stdout.strip().splitlines()[-1]
    # the engine, mode and outputs were checked against vbw's own kinds, no group read;
    # knowing the engines' names loaded no engine's library
    assert out == "[] [False, False, False, False, False, False] []"


BIRDS_PKG = """
    from vbw.registry import Registry

    BIRDS = Registry("bird", tag="name", group="vbw.test_birds", package="zoo_birds")
"""


def test_a_kind_of_a_package_registry_is_its_module_alone(site: Path) -> None:
    """vbw.registry's promise for vbw's own kinds (engines, modes): a module dropped into
    the package registers on the first lookup, and no entry point is read for it."""
    pkg = site / "zoo_birds"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(BIRDS_PKG))
    for name in ("robin", "wren"):
        (pkg / f"{name}.py").write_text(textwrap.dedent(f"""
            from zoo_birds import BIRDS

            @BIRDS.register
            class Bird:
                name = "{name}"
        """))
    from zoo_birds import BIRDS  # type: ignore[import-not-found]

    assert "wren" in BIRDS and BIRDS.get("robin").name == "robin"
    assert BIRDS._own_loaded and not BIRDS._plugins_loaded
    assert BIRDS.kinds == ("robin", "wren") and BIRDS._plugins_loaded  # listing reads it


def test_an_engine_module_in_the_engines_package_is_an_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """vbw/generate/engines/__init__.py: "a new engine is one module in this package":
    a module beside vbw's engines (the package's path extended to a temporary folder,
    so no file of vbw is written) is an engine by its name, and nothing else names it."""
    import vbw.generate.engines as pkg
    from vbw.generate.engines import ENGINES, Engine

    (tmp_path / "zoo_module_engine.py").write_text(textwrap.dedent("""
        from vbw.generate.engines.base import ENGINES
        from vbw.generate.engines.outlines import OutlinesEngine

        @ENGINES.register
        class ZooModuleEngine(OutlinesEngine):
            name = "zoo_module"
            requires = ("outlines-core",)
    """))
    monkeypatch.setattr(pkg, "__path__", [*pkg.__path__, str(tmp_path)])
    saved = dict(ENGINES._classes), ENGINES._own_loaded, ENGINES._plugins_loaded
    ENGINES._own_loaded = ENGINES._plugins_loaded = False  # as a fresh process has it
    try:
        assert "zoo_module" in ENGINES and not ENGINES._plugins_loaded
        cls = ENGINES.get("zoo_module")
        assert issubclass(cls, Engine)
        assert cls.__module__ == "vbw.generate.engines.zoo_module_engine"
    finally:
        ENGINES._classes.clear()
        ENGINES._classes.update(saved[0])
        ENGINES._own_loaded, ENGINES._plugins_loaded = saved[1], saved[2]
        sys.modules.pop("vbw.generate.engines.zoo_module_engine", None)


MODE_AND_OUTPUT = """
    from typing import ClassVar
    from vbw.modes import Job, Mode
    from vbw.report.writers import Output, ReportSet

    class Count(Mode):
        name: ClassVar[str] = "zoo_count"

        @staticmethod
        def run(job: Job) -> int:
            for task in job.tasks:
                print(f"{task.name}: {len(task.items(job.cfg.n))} items", file=job.out)
            return 0

    class Verdicts(Output):
        name, file = "zoo_verdicts", "verdicts.txt"

        @staticmethod
        def render(s: ReportSet) -> str:
            return "".join(f"{k} {a.schema_validity.rate:.3f}\\n"
                           for k, a in s.report.arms.items())
"""


def test_a_mode_and_a_report_writer_from_an_installed_package(site: Path,
                                                               tmp_path: Path) -> None:
    """vbw/modes/__init__.py and vbw/report/writers.py: a package adds a mode (group
    vbw.modes) and a report writer (group vbw.outputs); `mode=` and `outputs=` select
    them by name, through vbw.cli.job as a run does."""
    import io

    from tests.conftest import REPLAYS, TASK_CONF
    from vbw.cli.job import run
    from vbw.config import RunConfig
    from vbw.errors import ConfigError
    from vbw.modes import MODES
    from vbw.report.writers import OUTPUTS
    from vbw.task.runner import load_task

    (site / "zoo_modes.py").write_text(textwrap.dedent(MODE_AND_OUTPUT))
    info = site / "zoo_modes-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zoo-modes\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[vbw.modes]\nzoo_count = zoo_modes:Count\n\n"
                                           "[vbw.outputs]\nzoo_verdicts = zoo_modes:Verdicts\n")
    for r in (MODES, OUTPUTS):
        r.load_own()
    saved = [(r, dict(r._classes), r._plugins_loaded) for r in (MODES, OUTPUTS)]
    for r in (MODES, OUTPUTS):
        r._plugins_loaded = False  # the groups as a fresh process would read them
    task = load_task(TASK_CONF / "gsm8k.yaml")
    cfg = RunConfig.model_validate({
        "model": {"name": "qwen2_5_0_5b"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": ["prompt_json", "constrained"],
                 "max_tokens": {"free": 1, "json": 1, "package": 1}},
        "mode": "replay", "n": 5, "outputs": ["json", "zoo_verdicts"],
        "replay": str(REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl")})
    try:
        out = io.StringIO()
        assert run(cfg, [task], tmp_path / "r", tmp_path, out, io.StringIO()) == 0
        assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [
            "answers.csv", "report.json", "verdicts.txt"]
        lines = (tmp_path / "r" / "verdicts.txt").read_text().splitlines()
        assert [x.split()[0] for x in lines] == ["prompt_json[answer]", "constrained[answer]",
                                                 "prompt_json[reasoning]",
                                                 "constrained[reasoning]"]
        out = io.StringIO()
        counted = cfg.model_copy(update={"mode": "zoo_count", "outputs": None})
        assert run(counted, [task], tmp_path / "c", tmp_path, out, io.StringIO()) == 0
        assert out.getvalue() == "gsm8k: 5 items\n"
        with pytest.raises(ConfigError, match=r"^config: mode: unknown mode kind 'zoo_cuont'; "
                           r"did you mean 'zoo_count'\? valid: .*zoo_count$"):
            run(cfg.model_copy(update={"mode": "zoo_cuont"}), [task], tmp_path / "x",
                tmp_path, io.StringIO(), io.StringIO())
    finally:
        for r, classes, loaded in saved:
            r._classes.clear()
            r._classes.update(classes)
            r._plugins_loaded = loaded


def test_the_registry_is_the_base_layer() -> None:
    import ast

    import vbw.registry

    tree = ast.parse(Path(vbw.registry.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in imported if m and m.split(".")[0] == "vbw"} == {"vbw.errors"}


def test_a_kind_plugged_from_outside_joins_a_built_union() -> None:
    """Registry.plug (how the tests add their scripted backend): after the union is
    built, a plugged model validates by its tag; it cannot take a kind vbw has."""
    from pydantic import TypeAdapter

    reg: Registry[StrictModel] = Registry("toy", group="vbw.toys")

    @reg.register
    class Own(StrictModel):
        kind: Literal["own"]

    adapter = TypeAdapter(reg.union())

    class Plugged(StrictModel):
        kind: Literal["plugged"]
        x: int

    with pytest.raises(ValidationError):
        adapter.validate_python({"kind": "plugged", "x": 1})
    assert reg.plug(Plugged) is Plugged
    assert adapter.validate_python({"kind": "plugged", "x": 1}) == Plugged(kind="plugged", x=1)
    assert isinstance(adapter.validate_python({"kind": "own"}), Own)

    class Thief(StrictModel):
        kind: Literal["own"]

    with pytest.raises(ValueError, match="claimed by both Own and Thief"):
        reg.plug(Thief)

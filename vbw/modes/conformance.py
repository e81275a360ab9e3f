"""mode=conformance: does each engine enforce the schemas? Model-free: the tokenizer of
`conformance.tokenizer` (SmolLM2 by default, any GGUF), each engine of
`conformance.engines` in each policy of `conformance.whitespace`, over the task's schemas
(gold-shaped answers, a minimal instance, one-keyword mutations) or the vendored
JSON-Schema-Test-Suite (`conformance.suite=draft2020-12`). Writes report.md/.html/.json
(per task, each in its folder when there are several) and exits 0; a run that cannot
start exits 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from vbw.config import ConformanceConfig
from vbw.errors import ConfigError
from vbw.modes import MODES, Job, Mode
from vbw.report.conformance import conformance_written, write_conformance
from vbw.score.conformance import ConformanceReport
from vbw.task.conformance import Case, suite_cases, task_cases
from vbw.task.runner import Task

if TYPE_CHECKING:  # the live stack is imported by the run only (tests/modes/test_modes.py)
    from vbw.generate.conformance.walk import Tokens

VALIDITY_SUITE = ("the suite's own verdict (Draft 2020-12; format is an annotation, as its "
                  "required tests expect)")
VALIDITY_TASK = "jsonschema as vbw scores validity (Draft 2020-12 unless the schema says)"


def conformance_report(source: str, cases: list[Case], cfg: ConformanceConfig, tok: Tokens,
                       model: dict[str, Any], validity: str, err: TextIO | None
                       ) -> ConformanceReport:
    """Run every engine over `cases` and gather report.json."""
    from vbw.generate.conformance.engines import run_engines
    from vbw.generate.provenance import versions

    engines = run_engines(cases, cfg, tok, err)
    return ConformanceReport(
        source=source, tokenizer=model,
        serialisations="compact under every policy; also spaced (', ' and ': ') under "
                       "flexible whitespace",
        validity=validity, schemas=len(cases),
        instances=sum(len(c.instances) for c in cases), engines=engines,
        versions={k: v or "?" for k, v in versions(("outlines-core", "llguidance",
                                                     "llama-cpp-python")).items()})


def _one(job: Job, source: str, cases: list[Case], validity: str, folder: Path,
         tok: Tokens, model: dict[str, Any]) -> None:
    report = conformance_report(source, cases, job.cfg.conformance, tok, model, validity,
                                job.err)
    md = write_conformance(report, folder, job.cfg.outputs)
    print(md, file=job.out)
    print(conformance_written(folder, job.cfg.outputs), file=job.out)


def _task(job: Job, task: Task, tok: Tokens, model: dict[str, Any]) -> None:
    """One task's reports: in the run folder, or in a folder per task when there are several
    (as scoring writes them)."""
    cases = task_cases(task, task.items(job.n_of(task)))
    folder = job.out_dir / task.name if len(job.tasks) > 1 else job.out_dir
    _one(job, f"task {task.name}", cases, VALIDITY_TASK, folder, tok, model)


@MODES.register
class Conformance(Mode):
    name = "conformance"

    @staticmethod
    def run(job: Job) -> int:
        from vbw.generate.conformance.engines import open_tokenizer
        from vbw.generate.engines import ENGINES

        cfg = job.cfg.conformance
        for name in cfg.engines:  # before the tokenizer loads
            if name not in ENGINES:
                raise ConfigError(f"conformance.engines: unknown engine {name!r}; valid "
                                  f"engines: {', '.join(ENGINES.kinds)}")
        if not cfg.engines:
            raise ConfigError("conformance.engines: empty; name at least one engine")
        tok, model = open_tokenizer(cfg.tokenizer)
        if cfg.suite is not None:
            _one(job, f"suite {cfg.suite}", suite_cases(cfg.suite), VALIDITY_SUITE,
                 job.out_dir, tok, model)
            return 0
        for task in job.tasks:
            _task(job, task, tok, model)
        return 0

    @classmethod
    def only_reads(cls, cfg: Any, tasks: list[Task], cwd: Path) -> bool:
        return False  # it loads a model's tokenizer and the engines

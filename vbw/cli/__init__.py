"""The command line: everything between `vbw ...` and the mode that runs the job.

`console` is the console script's start-up (`python -m vbw`, `vbw`), `warm_worker` the
second process it starts to import the scoring stack meanwhile; `command` is the Hydra app
(`main`, for a caller that imports it: no warm worker, no early exit); `compose` and
`bounds` check the command line before Hydra runs it, `hydra_run` runs a plain run on that
composition, `hydra_internals` holds every use of Hydra's private API, `hydra_redact`
takes credentials out of Hydra's own files; `hydra_job` is the task function's plain run
and sweep job, `job` resolves a job's inputs once and hands it to its mode, `run_folder`
claims the run's folder, `sweep_end` is the multirun-end callback. Nothing is imported
here, so start-up pays for none of it."""

from vbw.lazy import lazy_exports

__getattr__ = lazy_exports("vbw.cli", {"main": "vbw.cli.command"})

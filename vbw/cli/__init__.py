"""The command line: everything between `vbw ...` and the mode that runs the job.

`console` is the console script's start-up (`python -m vbw`, `vbw`); `command` is the Hydra
app (`main`, for a caller that imports it: no warm worker, no early exit); `compose` and
`bounds` check the command line before Hydra runs it, `hydra_run` runs a plain run on that
composition, `hydra_internals` holds every use of Hydra's private API, `hydra_redact`
takes credentials out of Hydra's own files; `jobs` turns a composed config into a job (a
plain run, or one job of a sweep), `dispatch` refuses what no mode could run and hands the
job to its mode, `run_folder` claims the run's folder, `warm_worker` imports the scoring
stack in a second process while the command line is composed, and `sweep_end` is the
multirun-end callback. Nothing is imported here, so start-up pays for none of it."""

from vbw.lazy import lazy_exports

__getattr__ = lazy_exports("vbw.cli", {"main": "vbw.cli.command"})

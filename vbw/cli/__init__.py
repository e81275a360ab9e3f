"""The command line: everything between `vbw ...` and the mode that runs the job.

`console` starts the console script (and `warm_worker`); `command` is the Hydra app;
`compose` and `bounds` check the command line (`hints`: the fixes its errors suggest),
`hydra_run` runs a plain run on that composition; `hydra_internals`, `hydra_redact`:
Hydra's private API and files; `hydra_job`, `job`: the task function and a job's inputs;
`run_folder` claims the run's folder; `sweep_end` is the multirun-end callback. Nothing
is imported here.

How it works and why: docs/design.md, section vbw.cli.
"""

from vbw.lazy import lazy_exports

__getattr__ = lazy_exports("vbw.cli", {"main": "vbw.cli.command"})

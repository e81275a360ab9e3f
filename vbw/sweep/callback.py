"""A shim for the sweep-end callback's first name (conf/config.yaml's, once); configs that still say
`_target_: vbw.sweep.callback.SweepEnd` keep working (vbw.cli.sweep_end)."""

from vbw.cli.sweep_end import SweepEnd  # noqa: F401

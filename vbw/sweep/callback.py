"""The name conf/config.yaml used to give the sweep-end callback; configs that still say
`_target_: vbw.sweep.callback.SweepEnd` keep working (vbw.cli.sweep_end)."""

from vbw.cli.sweep_end import SweepEnd  # noqa: F401

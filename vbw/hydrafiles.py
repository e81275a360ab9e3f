"""The name conf/config.yaml used to give the redacting callback; configs that still say
`_target_: vbw.hydrafiles.RedactHydraFiles` keep working (vbw.cli.hydra_redact)."""

from vbw.cli.hydra_redact import RedactHydraFiles  # noqa: F401

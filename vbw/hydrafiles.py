"""A shim for the redacting callback's first name (conf/config.yaml's, once); configs that still say
`_target_: vbw.hydrafiles.RedactHydraFiles` keep working (vbw.cli.hydra_redact)."""

from vbw.cli.hydra_redact import RedactHydraFiles  # noqa: F401

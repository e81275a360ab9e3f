"""The grammar's tax per enforced arm: the recorded nats per item, over all items that
recorded it and by outcome (right, wrong-but-valid, invalid), as interventions are
grouped (vbw.score.interventions). The tax itself is recorded at generation
(vbw.generate.sampling); an arm none of whose items recorded it has no entry.
"""

from __future__ import annotations

import numpy as np

from vbw.score.results import ArmTax, TaxFigures
from vbw.task.arms import Arm


def new_rows(n: int, arms: int) -> np.ndarray:
    """Tally's tax rows: NaN where not recorded."""
    return np.full((n, arms), np.nan)


def _figures(values: np.ndarray) -> TaxFigures:
    if values.size == 0:
        return TaxFigures(items=0)
    return TaxFigures(items=int(values.size), mean=round(float(values.mean()), 6),
                      median=round(float(np.median(values)), 6),
                      zero=int((values == 0.0).sum()))


def summarise_tax(tax: np.ndarray | None, arms: list[Arm], valid: np.ndarray,
                  right: np.ndarray) -> dict[str, ArmTax]:
    """report.json's `tax`: per enforced arm whose items recorded one ({} when none did).

    Args:
        tax: nats per (item, arm), NaN where not recorded (None: no item recorded any).
        arms: the scored arms, in the columns' order.
        valid: ItemStates.valid.
        right: ItemStates.right.
    Returns:
        Arm key -> its figures.
    """
    if tax is None:
        return {}
    out = {}
    for j, arm in enumerate(arms):
        col = tax[:, j]
        recorded = ~np.isnan(col)
        if not arm.enforced or not recorded.any():
            continue
        ok, good = valid[:, j] == 1, right[:, j]
        groups = {"right": ok & good, "wrong_but_valid": ok & ~good, "invalid": ~ok}
        out[arm.key] = ArmTax(not_recorded=int((~recorded).sum()),
                              all=_figures(col[recorded]),
                              by_outcome={k: _figures(col[recorded & g])
                                          for k, g in groups.items()})
    return out

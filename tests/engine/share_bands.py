"""A share's Wilson interval as the noise warnings print it for few counted rows, computed
with numpy as the roots of the score test's quadratic (never Barb's formula)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from barb.summary_text import value_text


def wilson(share: float, n: float) -> tuple[float, float]:
    """Wilson's interval as the roots of (share − p)² = z² p (1 − p) / n in p: the p a
    score test at 95% does not reject."""
    z2 = stats.norm.ppf(0.975) ** 2
    roots = np.roots([1 + z2 / n, -(2 * share + z2 / n), share * share]).real
    return float(max(0.0, roots.min())), float(min(1.0, roots.max()))


def wilson_band(share: float, n: float) -> str:
    """ "1 (95%: 0.43–1)": the ends rounded outwards to two decimals."""
    low, high = wilson(share, n)
    return (
        f"{value_text(share)} (95%: {math.floor(low * 100 + 1e-9) / 100:g}–"
        f"{math.ceil(high * 100 - 1e-9) / 100:g})"
    )

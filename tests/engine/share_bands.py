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
    return f"{value_text(share)} ({wilson_ends(share, n)})"


def wilson_ends(share: float, n: float) -> str:
    """ "95%: 0.43–1": the ends rounded outwards to two decimals."""
    low, high = wilson(share, n)
    return f"95%: {math.floor(low * 100 + 1e-9) / 100:g}–{math.ceil(high * 100 - 1e-9) / 100:g}"


def few_for_wald(share: float, n: float) -> bool:
    """Whether a share over ``n`` rows is printed with its Wilson interval, not a ±: fewer
    than 5 expected rows on either side's variance, n·p·(1 − p) < 5."""
    return n * share * (1 - share) < 5

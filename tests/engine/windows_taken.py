"""Forward windows taken one at a time, as a trader counts them: the oracle the overlap
tests hold Barb's counts against (a loop, never Barb's code)."""

from __future__ import annotations

import numpy as np


def one_at_a_time(picks: np.ndarray, window: int) -> int:
    """Rows (bar positions ``picks``, in order) taken so that no two ``window``-bar windows
    share a bar: a trade entered only when none is held."""
    taken, free = 0, -1
    for at in picks:
        if at >= free:
            taken, free = taken + 1, at + window
    return taken

"""When rows without a value are worth a line: the one rule the sample-size warnings
(``barb.caveats.sample_sizes``) and the data-start warnings (``barb.caveats.data_start``) share."""

from __future__ import annotations

import numpy as np

# Said when more than one row and at least this share of the rows kept are empty (the
# data's first day, with no previous close, is not worth a line under every mean)…
NOTABLE_SHARE = 0.01
# …or when a single empty row is this share of a few: "January" over 18 monthly bars is a
# mean of 17 returns, and the model had said "over 18 Januaries".
FEW_ROWS_SHARE = 0.05


def notable(empty: np.ndarray | int, rows: np.ndarray | int) -> np.ndarray | bool:
    """Whether ``empty`` of ``rows`` is worth saying; element-wise over arrays of groups."""
    return ((empty > 1) & (empty >= NOTABLE_SHARE * rows)) | (
        (empty > 0) & (empty >= FEW_ROWS_SHARE * rows)
    )

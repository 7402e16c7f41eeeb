"""rank(x, unit) and place(x, unit) over every 1-minute bar: pandas' groupby rank (what the
engine called before ``barb.script.group_ranks``) against ``group_ranks.ranks``, in one
process on the same columns, the CPU time of each (best of --repeat, alternated so both
meet the same load), and whether the two are the same doubles.

    BARB_DATA_DIR=$PWD/data PYTHONPATH=$PWD .venv/bin/python bench/minute_paths.py [-i NQ]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HOW = {
    "place (first, highest first)": {"method": "first", "ascending": False},
    "rank (max, pct)": {"method": "max", "ascending": True, "pct": True},
}


def main() -> None:
    from barb.data.store import data_path
    from barb.frames import period_start
    from barb.script import group_ranks
    from barb.settings import EngineSettings

    parser = argparse.ArgumentParser()
    parser.add_argument("-i", "--instrument", default="NQ")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    bars = pd.read_parquet(data_path(args.instrument, EngineSettings()))
    dates = bars["trading_date"].to_numpy().astype("datetime64[ns]")
    columns = {"volume": bars["volume"], "range": bars["high"] - bars["low"]}
    print(f"{args.instrument}: {len(bars):,} 1m bars")
    for unit in ("daily", "monthly"):
        keys = dates if unit == "daily" else period_start(dates, unit)
        for name, values in columns.items():
            for label, how in HOW.items():
                old, new = [], []
                for _ in range(args.repeat):
                    start = time.process_time()
                    before = values.groupby(keys, sort=False).rank(**how)
                    old.append(time.process_time() - start)
                    start = time.process_time()
                    after = group_ranks.ranks(values, keys, **how)
                    new.append(time.process_time() - start)
                same = np.array_equal(
                    before.to_numpy().view(np.int64), after.to_numpy().view(np.int64)
                )
                print(
                    f"{unit:8} {name:7} {label:29} pandas {min(old):.3f} s  "
                    f"group_ranks {min(new):.3f} s  x{min(old) / min(new):.1f}  same: {same}"
                )


if __name__ == "__main__":
    main()

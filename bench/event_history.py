"""Counts since an event (streak, bars_since, ffill) over a month of 1-minute bars: the
first stage run on rows back to each one's event (``barb.script.event_history``) against
the same plan run on every bar from the data's first (what the engine did before), in one
process, alternated so both meet the same load; the CPU time of each (median of --repeat)
and whether the two results are the same, every value, warning and row.

    BARB_DATA_DIR=$PWD/data PYTHONPATH=$PWD .venv/bin/python bench/event_history.py [-i NQ]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MONTH = {"from": "1m", "session": "ETH", "period": "2024-03"}
QUESTIONS: dict[str, dict[str, Any]] = {
    "longest run of up minutes": {"map": {"run": "streak(close > open)"}, "select": "max(run)"},
    "minutes down 3+ in a row": {
        "map": {"run": "streak(close < prev(close))"},
        "where": "run >= 3",
        "select": "count()",
    },
    "bars since a volume spike": {
        "map": {"b": "bars_since(volume > 2 * rolling_mean(volume, 20))"},
        "select": ["mean(b)", "max(b)"],
    },
    "close against the last wide bar's": {
        "map": {"f": "ffill(if(range > 3 * rolling_mean(range, 50), close, 0 / 0))"},
        "select": "mean(close - f)",
    },
    "run above its 20-bar mean, by day": {
        "map": {"run": "streak(close > rolling_mean(close, 20))"},
        "group_by": "date()",
        "select": "max(run)",
    },
}


def _same(a: Any, b: Any) -> bool:
    """Whether two Results say the same: every field but the time taken, and the rows."""
    left, right = a.to_dict(), b.to_dict()
    for payload in (left, right):
        payload.get("metadata", {}).pop("elapsed_ms", None)
    if json.dumps(left, default=str, sort_keys=True) != json.dumps(
        right, default=str, sort_keys=True
    ):
        return False
    if a.source_rows is None or b.source_rows is None:
        return a.source_rows is None and b.source_rows is None
    return bool(a.source_rows.equals(b.source_rows))


def main() -> None:
    from barb.interpreter import run, run_on
    from barb.period_rows import bars_in_scope
    from barb.planning import plan_query
    from barb.script.query import parse_query
    from barb.settings import default_settings

    parser = argparse.ArgumentParser()
    parser.add_argument("-i", "--instrument", default="NQ")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    settings = default_settings()
    print(f"{args.instrument}, {MONTH}; CPU ms, median of {args.repeat}")
    print(f"{'question':36} {'all history':>12} {'to the event':>13} {'ratio':>7}  same")
    for name, body in QUESTIONS.items():
        query = parse_query({**MONTH, **body}).with_instrument(args.instrument)
        plan = plan_query(query, args.instrument, settings)
        full, narrow = [], []
        old = new = None
        for _ in range(args.repeat):
            start = time.process_time()
            old = run_on(plan, settings, bars_in_scope(plan))
            full.append(time.process_time() - start)
            start = time.process_time()
            new = run(plan, settings)
            narrow.append(time.process_time() - start)
        before, after = statistics.median(full) * 1000, statistics.median(narrow) * 1000
        print(f"{name:36} {before:12.1f} {after:13.1f} {after / before:7.3f}  {_same(old, new)}")


if __name__ == "__main__":
    main()

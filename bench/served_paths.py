"""sar(), supertrend() and obv() on the period's rows (the kept path served at their offset,
``barb.script.path_cache.served_path``) against the same plan run over every bar from the
data's first, on the sample data: NQ, ES and CL; ETH and RTH; 1m, 5m and daily bars; several
periods. Every field of each Result and every row's value must be the same; prints one line
per case and the count of differences (0 expected), then exits 1 if any.

    BARB_DATA_DIR=$PWD/data PYTHONPATH=$PWD .venv/bin/python bench/served_paths.py

Several minutes of CPU: each case runs the plan over all history too.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pandas as pd

from barb.interpreter import run, run_on
from barb.period_rows import bars_in_scope
from barb.planning import plan_query
from barb.result import Result
from barb.script.query import parse_query
from barb.settings import EngineSettings

QUERIES: list[dict[str, Any]] = [
    {"map": {"s": "sar(0.02, 0.2)", "t": "supertrend(10, 3)", "o": "obv()"}},
    {
        "map": {"s": "sar(0.02, 0.2)", "o": "obv()"},
        "where": "close > s and prev(close) <= prev(s)",
        "select": ["count()", "last(o)"],
    },
]
PERIODS = {
    "1m": ["2008-01-03", "2015-06-10", "2024-03-12", "last_30_bars"],
    "5m": ["2016-02", "2025-12-01:2025-12-05"],
    "daily": ["2012", "2024-03", "last_30_bars"],
}


def _said(result: Result) -> str:
    meta = result.metadata.model_dump(exclude={"elapsed_ms"}) if result.metadata else None
    summary = result.summary.model_dump() if result.summary else None
    error = result.error.model_dump() if result.error else None
    return json.dumps([summary, meta, result.focus_columns, error], default=str)


def _differs(narrow: Result, whole: Result) -> list[str]:
    out = [] if _said(narrow) == _said(whole) else ["said"]
    for rows in ("table", "source_rows", "drawn_rows", "run_rows"):
        mine, theirs = getattr(narrow, rows), getattr(whole, rows)
        if (mine is None) != (theirs is None):
            out.append(rows)
        elif mine is not None:
            try:
                pd.testing.assert_frame_equal(mine, theirs)
            except AssertionError:
                out.append(rows)
    return out


def main() -> None:
    settings = EngineSettings()
    failed = cases = 0
    for symbol in ("NQ", "ES", "CL"):
        for session in ("ETH", "RTH"):
            for bars, periods in PERIODS.items():
                for period in periods:
                    for query in QUERIES:
                        asked = {**query, "session": session, "from": bars, "period": period}
                        parsed = parse_query(asked).with_instrument(symbol)
                        plan = plan_query(parsed, symbol, settings)
                        narrow = run(plan, settings)
                        whole = run_on(plan, settings, bars_in_scope(plan))
                        rows = 0 if narrow.table is None else len(narrow.table)
                        differs = _differs(narrow, whole)
                        cases += 1
                        failed += bool(differs)
                        print(symbol, session, bars, period, rows, "rows", differs or "same")
    print(f"{cases} cases, {failed} differ")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

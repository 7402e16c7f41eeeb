"""Questions whose values read the bars before the period: running highs and lows, OBV, SAR
and Supertrend.

    BARB_DATA_DIR=$PWD/data PYTHONPATH=<tree> .venv/bin/python bench/history_reads.py

Run once per code tree (this one, or an older checkout's ``PYTHONPATH``), each in a fresh
process: per question the first call (what it builds once per process included) and the
median of 5 after it, CPU ms of the whole process (``time.process_time``: numpy's threads
too). Compare two trees' lines; the figures of one run alone say little on a busy machine.
"""

from __future__ import annotations

import json
import statistics
import time

from barb import execute

QUESTIONS = [
    (
        "drawdown, NQ 1m ETH 2024-03",
        "NQ",
        {
            "from": "1m",
            "session": "ETH",
            "period": "2024-03",
            "map": {"dd": "close - cummax(close)"},
            "select": "min(dd)",
        },
    ),
    (
        "new highs, NQ 1m ETH 2024-03",
        "NQ",
        {
            "from": "1m",
            "session": "ETH",
            "period": "2024-03",
            "map": {"nh": "high > prev(cummax(high))"},
            "where": "nh",
            "select": "count()",
        },
    ),
    (
        "running low, ES 1m RTH 2024-03-12",
        "ES",
        {
            "from": "1m",
            "session": "RTH",
            "period": "2024-03-12",
            "map": {"lo": "cummin(low)"},
            "select": "last(lo)",
        },
    ),
    (
        "drawdown %, NQ daily RTH 2022",
        "NQ",
        {
            "from": "daily",
            "session": "RTH",
            "period": "2022",
            "map": {"dd": "(close / cummax(close) - 1) * 100"},
            "select": "min(dd)",
        },
    ),
    (
        "OBV, NQ 1m ETH 2024-03",
        "NQ",
        {
            "from": "1m",
            "session": "ETH",
            "period": "2024-03",
            "map": {"o": "obv()"},
            "select": "last(o)",
        },
    ),
    (
        "SAR, NQ 1m ETH 2024-03",
        "NQ",
        {
            "from": "1m",
            "session": "ETH",
            "period": "2024-03",
            "where": "close > sar(0.02, 0.2)",
            "select": "count()",
        },
    ),
    (
        "Supertrend, NQ 1m ETH 2024-03",
        "NQ",
        {
            "from": "1m",
            "session": "ETH",
            "period": "2024-03",
            "where": "close > supertrend(10, 3)",
            "select": "count()",
        },
    ),
    (
        "SAR, ES 1m RTH 2024-03",
        "ES",
        {
            "from": "1m",
            "session": "RTH",
            "period": "2024-03",
            "where": "close > sar(0.02, 0.2)",
            "select": "count()",
        },
    ),
    (
        "OBV, NQ daily RTH 2024",
        "NQ",
        {
            "from": "daily",
            "session": "RTH",
            "period": "2024",
            "map": {"o": "obv()"},
            "select": "last(o)",
        },
    ),
]


def main() -> None:
    for name, symbol, query in QUESTIONS:
        start = time.process_time()
        execute(query, symbol)
        first = time.process_time() - start
        calls = []
        for _ in range(5):
            start = time.process_time()
            execute(query, symbol)
            calls.append(time.process_time() - start)
        warm = statistics.median(calls)
        print(json.dumps({"question": name, "first_ms": first * 1000, "warm_ms": warm * 1000}))


if __name__ == "__main__":
    main()

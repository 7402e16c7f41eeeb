"""What the model reads for results of up to 100 value cells, and beyond, in real tokens.

    .venv/bin/python bench/summary_tokens.py [--instrument NQ]

For each representative result on the sample: its rows, the tokens (o200k, the tokenizer of
GPT-4o and later, via the dev dependency bpe-openai) of the whole text the model reads, of
the listing alone (header and rows), and the floor of that listing: what its cells cost one
by one with one separator each, however they were laid out. A result too big to be listed
whole is measured as it is read: its first and last rows, then each column's extremes.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RET = "(close - prev(close)) / prev(close) * 100"
RESULTS = {
    "monthly OHLC, 25 months": {"session": "RTH", "from": "monthly", "period": "2023-06:2025-06"},
    "25 daily bars: 3 ratios and the range": {
        "session": "RTH",
        "from": "daily",
        "period": "last_25_bars",
        "map": {
            "ret": "close / prev(close) - 1",
            "vol_ratio": "volume / prev(volume)",
            "gap_ret": "open / prev(close) - 1",
        },
        "select": ["ret", "vol_ratio", "gap_ret", "range"],
    },
    "25 15m slots x 4 aggregates, 2024": {
        "session": "RTH",
        "from": "15m",
        "period": "2024",
        "map": {"slot": "hour() * 100 + minute()", "body": "close - open"},
        "where": "hour() * 60 + minute() <= 930",
        "group_by": "slot",
        "select": ["mean(range)", "mean(body)", "max(range)", "count()"],
    },
    "yearly returns, whole years x 4": {
        "session": "ETH",
        "from": "yearly",
        "map": {"ret_pct": RET, "range_pct": "range / open * 100"},
        "select": ["ret_pct", "range_pct", "volume", "close"],
    },
    "per-year table, 18 x 5": {
        "session": "RTH",
        "from": "daily",
        "period": "2008:2025",
        "map": {"ret": RET},
        "group_by": "year()",
        "select": [
            "mean(range) as r",
            "count() as n",
            "std(ret) as v",
            "min(ret) as worst",
            "max(ret) as best",
        ],
    },
    "weekday x hour grid, 40 x 2": {
        "session": "RTH",
        "from": "1h",
        "map": {"wd": "dayname()", "t": "time()"},
        "group_by": ["wd", "t"],
        "select": ["mean(range) as rng", "mean(close > open) as up"],
    },
    "per-year table, 18 x 7": {
        "session": "RTH",
        "from": "daily",
        "period": "2008:2025",
        "map": {"ret": RET, "rp": "range / open * 100"},
        "group_by": "year()",
        "select": [
            "mean(rp) as avg_range_pct",
            "max(rp) as max_range_pct",
            "mean(ret > 0) as up_share",
            "std(ret) as vol",
            "min(ret) as worst",
            "max(ret) as best",
            "mean(volume) as avg_vol",
        ],
    },
    "monthly returns, 216 rows (summarized)": {
        "session": "RTH",
        "from": "monthly",
        "period": "2008:2025",
        "map": {"ret": RET},
        "select": "ret",
    },
    "year x month, 216 x 3 (summarized)": {
        "session": "RTH",
        "from": "daily",
        "period": "2008:2025",
        "map": {"ret": RET},
        "group_by": ["year()", "month()"],
        "select": ["sum(ret) as ret", "std(ret) as vol", "max(range) as max_range"],
    },
    "weekday stats, 5 x 4": {
        "session": "RTH",
        "from": "daily",
        "map": {"weekday": "dayname()", "ret_pct": RET},
        "group_by": "weekday",
        "select": ["mean(range)", "mean(ret_pct)", "std(ret_pct)", "count()"],
    },
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instrument", default="NQ")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the package's importlib use
        import bpe_openai

        encoding = bpe_openai.get_encoding("o200k_base")
    from barb import execute, render_summary

    def tokens(text: str) -> int:
        return len(encoding.encode(text))

    print("| result | rows | tokens read | of them the listing | cells one by one |")
    print("|---|---:|---:|---:|---:|")
    for name, query in RESULTS.items():
        result = execute(query, args.instrument)
        assert result.ok, result.to_dict()
        text = render_summary(result)
        lines = text.splitlines()
        summary = result.summary
        rows = summary.rows or 0
        # The header, the rows listed and, between the first and the last, the gap's marker.
        listed = len(summary.top or []) + len(summary.bottom or []) + (0 if summary.whole else 1)
        listing = "\n".join(lines[1 : listed + 2])
        cells = [cell for line in lines[2 : listed + 2] for cell in line.split(",")]
        floor = sum(tokens(cell) + 1 for cell in cells)
        print(f"| {name} | {rows} | {tokens(text)} | {tokens(listing)} | {floor} |")


if __name__ == "__main__":
    main()

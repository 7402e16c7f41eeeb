"""Chart render cost per kind, and against another checkout of the charts in the same run.

    .venv/bin/python bench/charts.py [--repeat 9] [--baseline DIR] [--write docs/benchmarks.md]

Each chart is rendered in a fresh child process per code tree (this one, and ``--baseline``,
a directory holding an older ``barb/``), alternating, so both see the same machine load; the
table gives the median CPU time of ``--repeat`` renders after a first one. CPU time, not wall
time: on shared cores a render's wall time is mostly waiting.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = [
    (
        "grouped: range by weekday",
        {
            "session": "RTH",
            "from": "daily",
            "map": {"weekday": "dayname()"},
            "group_by": "weekday",
            "select": "mean(range)",
        },
    ),
    (
        "grouped: range and count by year",
        {
            "session": "RTH",
            "from": "daily",
            "group_by": "year()",
            "select": ["mean(range)", "count()"],
        },
    ),
    (
        "table: 4,500 daily bars + RSI",
        {"session": "RTH", "from": "daily", "map": {"rsi14": "rsi(close, 14)"}},
    ),
    (
        "scalar: count of gap days",
        {
            "session": "RTH",
            "from": "daily",
            "map": {"gap": "open - prev(close)"},
            "where": "gap > 60",
            "select": "count()",
        },
    ),
    (
        "scalar: correlation, 4,649 days",
        {
            "session": "RTH",
            "from": "daily",
            "map": {"on_range": "session_high('OVERNIGHT') - session_low('OVERNIGHT')"},
            "select": "correlation(on_range, range)",
        },
    ),
    (
        "table: ATR now (latest first)",
        {
            "session": "RTH",
            "from": "daily",
            "period": "last_2_years",
            "map": {"atr14": "atr(14)"},
            "sort": "timestamp desc",
            "limit": 1,
        },
    ),
    ("table: 5m bars of a month", {"session": "RTH", "from": "5m", "period": "2025-06"}),
]

CHILD = """
import inspect, json, statistics, sys, time
sys.path.insert(0, {tree!r})
from barb import execute
from barb.charts import render_chart
query, repeat, language = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
result = execute(query, "NQ")
assert result.ok, result.to_dict()
accepts = inspect.signature(render_chart).parameters
kwargs = {{"language": language}} if "language" in accepts else {{}}
png = render_chart(result, **kwargs)
samples = []
for _ in range(repeat):
    t0 = time.process_time()
    render_chart(result, **kwargs)
    samples.append((time.process_time() - t0) * 1000)
print(json.dumps({{"ms": statistics.median(samples), "bytes": len(png or b"")}}))
"""


def measure(tree: Path, query: dict, repeat: int, language: str) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD.format(tree=str(tree)),
            json.dumps(query),
            str(repeat),
            language,
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    lines = [
        "| chart | this tree, en (ms CPU) | this tree, ru (ms CPU) | PNG bytes |"
        + (" baseline (ms CPU) |" if args.baseline else ""),
        "|---|---:|---:|---:|" + ("---:|" if args.baseline else ""),
    ]
    for name, query in CASES:
        en = measure(ROOT, query, args.repeat, "en")
        ru = measure(ROOT, query, args.repeat, "ru")
        row = f"| {name} | {en['ms']:.1f} | {ru['ms']:.1f} | {en['bytes']:,} |"
        if args.baseline:
            base = measure(args.baseline, query, args.repeat, "en")
            row += f" {base['ms']:.1f} |"
        print(row, flush=True)
        lines.append(row)
    if args.write:
        sys.path.insert(0, str(ROOT / "bench"))
        from engine import write_section

        body = (
            "Command: `.venv/bin/python bench/charts.py --repeat 9"
            + (" --baseline <old tree>" if args.baseline else "")
            + " --write docs/benchmarks.md`\n\n"
            + "\n".join(lines)
        )
        write_section(args.write, "Charts", body)


if __name__ == "__main__":
    main()

"""Chart of a grouped result by its number of groups, against another checkout in one run.

    BARB_DATA_DIR=$PWD/data .venv/bin/python bench/many_groups.py --baseline DIR \
        [--repeat 3] [--write docs/benchmarks.md]

Each query is answered in a fresh child process per code tree (this one, and ``--baseline``,
a directory holding an older ``barb/``), the trees alternating; after one untimed chart,
``render_chart`` and ``chart_headline`` (a worker ran both for each answer until
``render_answer`` gave it the caption with the chart) are timed
``--repeat`` times and the best of each is kept. Wall time, as a worker waits for it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = [
    (
        "517 dates (RTH daily, 2024-2025)",
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024:2025",
            "group_by": "date()",
            "select": "mean(range)",
        },
    ),
    (
        "4,656 dates (ETH 1h)",
        {"session": "ETH", "from": "1h", "group_by": "date()", "select": "mean(range)"},
    ),
    (
        "47,297 date × hour (ETH 1h, 2018-2025)",
        {
            "session": "ETH",
            "from": "1h",
            "period": "2018:2025",
            "group_by": ["date()", "time()"],
            "select": "mean(range)",
        },
    ),
    (
        "106,436 date × hour (ETH 1h, all data)",
        {
            "session": "ETH",
            "from": "1h",
            "group_by": ["date()", "time()"],
            "select": "mean(range)",
        },
    ),
]

NOTES = """\
- "chart" is `render_chart` (the figure, its headline and the PNG); "headline" is
  `chart_headline`, the photo's caption, which the worker computed again until
  `render_answer` gave it with the chart (the headline once per answer).
- Above 2,000 groups the chart draws about 2,000 of them (each stretch's lowest and highest,
  the extremes the headline names; `barb/charts/many_groups.py`), so its cost stops growing
  with the groups: 47,297 and 106,436 cost about what 4,656 do. What is left grows only
  with vectorised work (ordering, the thinning itself).
- Before, the 106,436 groups were drawn from the engine's even sample of 50,000 rows, and
  the whole answer in a worker (query, CSV, chart, caption) took
  22-25 s: past the 20-second limit the person read "The query took longer than 20 seconds
  and was stopped" and the worker was replaced, though the query itself takes 0.3 s."""

CHILD = """
import json, sys, time
sys.path.insert(0, {tree!r})
from barb import execute
from barb.charts import chart_headline, render_chart
query, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
result = execute(query, "NQ")
assert result.ok, result.to_dict()
png = render_chart(result)
render, headline = [], []
for _ in range(repeat):
    t0 = time.perf_counter()
    render_chart(result)
    t1 = time.perf_counter()
    chart_headline(result)
    render.append(t1 - t0)
    headline.append(time.perf_counter() - t1)
print(json.dumps({{"render": min(render), "headline": min(headline), "bytes": len(png or b"")}}))
"""


def measure(tree: Path, query: dict, repeat: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(tree=str(tree)), json.dumps(query), str(repeat)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    lines = [
        "| groups | before: chart (s) | after: chart (s) | before: headline (s) "
        "| after: headline (s) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, query in CASES:
        before = measure(args.baseline, query, args.repeat)
        after = measure(ROOT, query, args.repeat)
        row = (
            f"| {name} | {before['render']:.2f} | {after['render']:.2f} "
            f"| {before['headline']:.2f} | {after['headline']:.2f} |"
        )
        print(row, flush=True)
        lines.append(row)
    if args.write:
        sys.path.insert(0, str(ROOT / "bench"))
        from engine import write_section

        load = os.getloadavg()[0]
        body = (
            "Command: `BARB_DATA_DIR=$PWD/data .venv/bin/python bench/many_groups.py "
            f"--baseline <tree of the commit before> --repeat {args.repeat} "
            "--write docs/benchmarks.md`\n\n"
            f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other jobs "
            f"(1-minute load average {load:.1f} at the end), Python "
            f"{platform.python_version()}; NQ sample. Best of {args.repeat} wall-clock "
            "times after one untimed chart, each query in its own process, before and after "
            "in the same run. A worker runs both for each answer, under the bot's 20-second "
            "limit (`BARB_QUERY_TIMEOUT_S`) for the whole answer.\n\n"
            + "\n".join(lines)
            + "\n\n"
            + NOTES
        )
        write_section(args.write, "Charts of many groups (`bench/many_groups.py`)", body)


if __name__ == "__main__":
    main()

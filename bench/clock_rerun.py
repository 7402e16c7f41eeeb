"""What the answer counted from the open (``own_clock_caveat``) adds to a question: CPU time
and peak memory of ``execute``, in a process of its own per variant.

    BARB_DATA_DIR=$PWD/data .venv/bin/python bench/clock_rerun.py

Three questions over NQ's 1-minute ETH history whose clock statistic is run again: one that
changes only the then stage (the mean time of each day's high), one whose first stage changes
(the close of each day's earliest minute), one over the bars themselves (the mean minute of
the day). Each is run with the warning and with it switched off; the differences are the
rerun's. CPU time, not wall time: the machine is shared.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLOCK = "hour() * 60 + minute()"
QUESTIONS = {
    "then stage": {
        "map": {"t": CLOCK},
        "group_by": "date()",
        "select": "arg_max(t, high) as hi_t",
        "then": {"select": "mean(hi_t) as mean_hi_t"},
    },
    "first stage": {
        "group_by": "date()",
        "select": f"arg_min(close, {CLOCK}) as first_close",
        "then": {"select": "mean(first_close)"},
    },
    "bars": {"map": {"t": CLOCK}, "select": "mean(t) as avg_t"},
}
ROUNDS = 3

_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import barb.interpreter as interpreter
from barb import execute
query, on = json.loads(sys.argv[1]), sys.argv[2] == "on"
execute({{"from": "1m", "session": "ETH", "period": "2024-01-02", "select": "count()"}}, "NQ")
if not on:
    interpreter.own_clock_caveat = lambda *args, **kwargs: []
best = float("inf")
for _ in range({rounds}):
    start = time.process_time()
    execute(query, "NQ")
    best = min(best, time.process_time() - start)
print(json.dumps([best, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024]))
"""


def _measure(query: dict, on: bool) -> tuple[float, float]:
    child = _CHILD.format(root=str(ROOT), rounds=ROUNDS)
    out = subprocess.run(
        [sys.executable, "-c", child, json.dumps(query), "on" if on else "off"],
        check=True,
        capture_output=True,
        text=True,
    )
    cpu, peak = json.loads(out.stdout.strip().splitlines()[-1])
    return cpu, peak


def main() -> None:
    print("| question | CPU s with | without | peak MB with | without |")
    print("|---|---:|---:|---:|---:|")
    for name, asked in QUESTIONS.items():
        query = {"from": "1m", "session": "ETH", **asked}
        (cpu, peak), (cpu_off, peak_off) = _measure(query, True), _measure(query, False)
        print(f"| {name} | {cpu:.2f} | {cpu_off:.2f} | {peak:.0f} | {peak_off:.0f} |")


if __name__ == "__main__":
    main()

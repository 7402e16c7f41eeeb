"""Old engine against new on the same questions, timed alternately in one run.

    .venv/bin/python bench/compare_engines.py --baseline ../barb-old [--rounds 5] [--repeat 9]

``--baseline`` is a checkout of an earlier commit (``git worktree add ../barb-old <rev>``).
Each engine runs in a process of its own over the same data directory, loaded once; every
question of ``bench/engine.py`` that both accept is then called ``--repeat`` times per round
on each side, one call on one side and the next on the other (the side that goes first
alternating by round), so a burst of load on a shared machine hits both within milliseconds
of each other. The figure per question and side is its fastest call (after a first, warming
one) of all rounds: other jobs on the machine can only add to a call's time, so the fastest
is the closest to the code's own cost (as ``timeit`` advises). The new/old ratio is what the
regression check reads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from barb.process_memory import MMAP_THRESHOLD, TRIM_THRESHOLD  # noqa: E402

# One engine, answering "time this question" requests, one JSON line each, until stdin ends.
CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from barb import execute
print(json.dumps("ready"), flush=True)
for line in sys.stdin:
    query, repeat = json.loads(line)
    result = execute(query, "NQ")
    if not result.ok:
        print(json.dumps(None), flush=True)
        continue
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        execute(query, "NQ")
        samples.append((time.perf_counter() - t0) * 1000)
    print(json.dumps(min(samples)), flush=True)
"""


# malloc's thresholds as a pool worker fixes them (``barb.process_memory``), for both sides:
# a baseline from before it would otherwise let glibc raise its threshold and serve every
# large temporary column from its heap, without the page faults the worker pays by design.
MALLOC_ENV = {
    "MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD),
    "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD),
}


class Engine:
    """An engine's code tree in a process of its own."""

    def __init__(self, code_root: Path) -> None:
        env = {**os.environ, **MALLOC_ENV, "BARB_DATA_DIR": str(ROOT / "data")}
        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(code_root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=code_root,
            env=env,
        )
        assert self._read() == "ready"

    def _read(self) -> object:
        assert self.process.stdout is not None
        return json.loads(self.process.stdout.readline())

    def time(self, query: dict, repeat: int) -> float | None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps([query, repeat]) + "\n")
        self.process.stdin.flush()
        ms = self._read()
        return None if ms is None else float(ms)  # type: ignore[arg-type]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from engine import QUESTIONS

    engines = {"old": Engine(args.baseline.resolve()), "new": Engine(ROOT)}
    best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
    try:
        for round_no in range(args.rounds):
            sides = ("old", "new") if round_no % 2 == 0 else ("new", "old")
            for q in QUESTIONS:
                for _ in range(args.repeat):
                    for side in sides:
                        ms = engines[side].time(q.barb, 1)
                        if ms is not None:
                            best[side][q.name] = min(ms, best[side].get(q.name, float("inf")))
    finally:
        for engine in engines.values():
            engine.close()
    rows = [
        (q.name, best["old"][q.name], best["new"][q.name])
        for q in QUESTIONS
        if q.name in best["old"] and q.name in best["new"]
    ]
    print("| question | old (ms) | new (ms) | new/old |")
    print("|---|---:|---:|---:|")
    for name, old, new in rows:
        print(f"| {name} | {old:.2f} | {new:.2f} | {new / old:.2f} |")
    worst = max(rows, key=lambda r: r[2] / r[1])
    print(f"\nWorst ratio: {worst[2] / worst[1]:.2f} ({worst[0]}); {len(rows)} questions compared.")


if __name__ == "__main__":
    main()

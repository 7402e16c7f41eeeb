"""Old engine against new on the same questions, timed alternately in one run.

    .venv/bin/python bench/compare_engines.py --baseline ../barb-old [--rounds 3] [--repeat 9]

``--baseline`` is a checkout of an earlier commit (``git worktree add ../barb-old <rev>``).
Each round runs every question of ``bench/engine.py`` that both engines accept, first in a
fresh process on the baseline's code, then on this tree's, over the same data directory;
the figure per question is the lowest of the rounds' warm medians, so a burst of load on a
shared machine hits both sides alike. The new/old ratio is what the regression check reads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from barb import execute
try:
    from barb.process_memory import return_freed_memory
except ImportError:  # a baseline from before it
    pass
else:
    return_freed_memory()  # as the pool's workers do
queries = json.loads(sys.stdin.read())
out = {}
for name, query in queries.items():
    result = execute(query, "NQ")
    if not result.ok:
        out[name] = None
        continue
    samples = []
    for _ in range(int(sys.argv[2])):
        t0 = time.perf_counter()
        execute(query, "NQ")
        samples.append((time.perf_counter() - t0) * 1000)
    out[name] = statistics.median(samples)
print(json.dumps(out))
"""


def timings(code_root: Path, queries: dict[str, dict], repeat: int) -> dict[str, float | None]:
    env = {**os.environ, "BARB_DATA_DIR": str(ROOT / "data")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(code_root), str(repeat)],
        input=json.dumps(queries),
        capture_output=True,
        text=True,
        check=True,
        cwd=code_root,
        env=env,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from engine import QUESTIONS

    queries = {q.name: q.barb for q in QUESTIONS}
    best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
    for _ in range(args.rounds):
        for side, root in (("old", args.baseline.resolve()), ("new", ROOT)):
            for name, ms in timings(root, queries, args.repeat).items():
                if ms is not None:
                    best[side][name] = min(ms, best[side].get(name, float("inf")))
    rows = [
        (name, best["old"][name], best["new"][name])
        for name in queries
        if name in best["old"] and name in best["new"]
    ]
    print("| question | old (ms) | new (ms) | new/old |")
    print("|---|---:|---:|---:|")
    for name, old, new in rows:
        print(f"| {name} | {old:.2f} | {new:.2f} | {new / old:.2f} |")
    worst = max(rows, key=lambda r: r[2] / r[1])
    print(f"\nWorst ratio: {worst[2] / worst[1]:.2f} ({worst[0]}); {len(rows)} questions compared.")


if __name__ == "__main__":
    main()

"""Old engine against new on the same questions, timed alternately in one run.

    .venv/bin/python bench/compare_engines.py --baseline ../barb-old [--rounds 5] [--repeat 9]
        [--without-checks]

``--baseline`` is a checkout of an earlier commit (``git worktree add ../barb-old <rev>``).
Each engine runs in a process of its own over the same data directory, loaded once; every
question of ``bench/engine.py`` that both accept is then called ``--repeat`` times per round
on each side, one call on one side and the next on the other (the side that goes first
alternating by round), so a burst of load on a shared machine hits both within milliseconds
of each other. The figure per question and side is its fastest call (after a first, warming
one) of all rounds: other jobs on the machine can only add to a call's time, so the fastest
is the closest to the code's own cost (as ``timeit`` advises). The new/old ratio is what the
regression check reads. ``--without-checks`` adds a third side, the new engine with its
warning checks saying nothing (``bench/checks_switch.py``), taking its turn with the other
two: the work an engine without those checks does, so its ratio to the old is the cost of
the rest of the change (history-aware periods, the compiler's stages) alone. ``--cpu``
times each call by its thread's CPU time (``time.thread_time``), not the wall clock: on a
machine shared with other jobs a call they interrupt is not counted as slower.
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
# With a second argument (the new side under --without-checks) a request also says whether
# the warning checks run: off, each says nothing (bench/checks_switch.py).
CHILD = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
# The calling thread's CPU time (--cpu): what a machine shared with other jobs leaves out.
clock = time.thread_time if os.environ.get("BARB_BENCH_CLOCK") == "cpu" else time.perf_counter
from barb import execute
switch = None
if len(sys.argv) > 2:
    from bench.checks_switch import ChecksSwitch
    from bench.engine import QUESTIONS
    switch = ChecksSwitch(lambda: [execute(q.barb, "NQ") for q in QUESTIONS])
print(json.dumps("ready"), flush=True)
for line in sys.stdin:
    query, repeat, checks = json.loads(line)
    if switch is not None:
        switch.on() if checks else switch.off()
    result = execute(query, "NQ")
    if not result.ok:
        print(json.dumps(None), flush=True)
        continue
    samples = []
    for _ in range(repeat):
        t0 = clock()
        execute(query, "NQ")
        samples.append((clock() - t0) * 1000)
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

    def __init__(self, code_root: Path, switchable: bool = False, cpu: bool = False) -> None:
        env = {**os.environ, **MALLOC_ENV, "BARB_DATA_DIR": str(ROOT / "data")}
        env["BARB_BENCH_CLOCK"] = "cpu" if cpu else "wall"
        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(code_root), *(["switch"] if switchable else [])],
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

    def time(self, query: dict, repeat: int, checks: bool = True) -> float | None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps([query, repeat, checks]) + "\n")
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
    parser.add_argument(
        "--without-checks",
        action="store_true",
        help="also time the new side with its warning checks off: the same work as the old",
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time each call by its thread's CPU time, not the wall clock: on a machine "
        "other jobs load, a call they interrupt is not counted as slower",
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        help="leave out the questions whose name holds this text (a 1-minute question over "
        "all history takes seconds a call: minutes at 15 rounds of 15)",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from engine import QUESTIONS as ALL

    QUESTIONS = [q for q in ALL if not any(text in q.name for text in args.skip)]

    engines = {
        "old": Engine(args.baseline.resolve(), cpu=args.cpu),
        "new": Engine(ROOT, switchable=args.without_checks, cpu=args.cpu),
    }
    # Each timed side: its engine and whether its checks run.
    sides = {"old": ("old", True), "new": ("new", True)}
    if args.without_checks:
        sides["bare"] = ("new", False)
    best: dict[str, dict[str, float]] = {side: {} for side in sides}
    order = list(sides)
    try:
        for _ in range(args.rounds):
            for q in QUESTIONS:
                for _ in range(args.repeat):
                    for side in order:
                        engine, checks = sides[side]
                        ms = engines[engine].time(q.barb, 1, checks)
                        if ms is not None:
                            best[side][q.name] = min(ms, best[side].get(q.name, float("inf")))
            order = order[1:] + order[:1]  # who goes first turns by round
    finally:
        for engine in engines.values():
            engine.close()
    names = [q.name for q in QUESTIONS if all(q.name in best[side] for side in sides)]
    bare = args.without_checks
    print(
        "| question | old (ms) | new (ms) | new/old |"
        + (" new without checks (ms) | without/old |" if bare else "")
    )
    print("|---|---:|---:|---:|" + ("---:|---:|" if bare else ""))
    for name in names:
        old, new = best["old"][name], best["new"][name]
        row = f"| {name} | {old:.2f} | {new:.2f} | {new / old:.2f} |"
        if bare:
            row += f" {best['bare'][name]:.2f} | {best['bare'][name] / old:.2f} |"
        print(row)
    for side in ("new", "bare") if bare else ("new",):
        worst = max(names, key=lambda n: best[side][n] / best["old"][n])
        ratio = best[side][worst] / best["old"][worst]
        over = sum(best[side][n] / best["old"][n] > 1.2 for n in names)
        label = "new" if side == "new" else "new without checks"
        print(
            f"\nWorst {label}/old: {ratio:.2f} ({worst}); {len(names)} questions compared, "
            f"{over} over 1.2x."
        )


if __name__ == "__main__":
    main()

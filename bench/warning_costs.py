"""What the costliest warnings add to each engine benchmark question, measured in one process.

    BARB_DATA_DIR=$PWD/data .venv/bin/python bench/warning_costs.py [name filter ...]

For each question of bench/engine.py (or those whose name holds one of the filters): the
fastest mean over rounds of ``execute`` as it is, without the price-level warning, and
without it and the noise warning too. The two checks are switched off by replacing them in
the modules that call them, for this process only; the answers do not change, only their
warnings. Ratios, not times, are what to compare: the machine is shared.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ROUNDS = 7


def _fastest(
    variants: list[Callable[[], None]], run: Callable[[], object], calls: int
) -> list[float]:
    """Each variant's fastest round, the mean time per call in milliseconds: the variants
    take turns within every round, so a slower stretch of the machine meets them all."""
    best = [float("inf")] * len(variants)
    for _ in range(ROUNDS):
        for i, switch in enumerate(variants):
            switch()
            start = time.perf_counter()
            for _ in range(calls):
                run()
            best[i] = min(best[i], (time.perf_counter() - start) / calls)
    return [b * 1000 for b in best]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only questions whose name holds one of these")
    args = parser.parse_args()

    import barb.interpreter as interpreter
    import barb.stages as stages
    from barb import execute
    from barb.caveats.group_noise import EvenGroups
    from barb.process_memory import return_freed_memory
    from bench.engine import QUESTIONS

    return_freed_memory()  # as a pool worker runs: large temporaries are fresh pages
    level, noise = interpreter.price_level_caveat, stages.even_groups

    def as_is() -> None:
        interpreter.price_level_caveat, stages.even_groups = level, noise

    def without_level() -> None:
        as_is()
        interpreter.price_level_caveat = lambda *_: []

    def neither() -> None:
        without_level()
        stages.even_groups = lambda *_, **__: EvenGroups()

    print("| question | as is (ms) | no price level | neither | price level | noise |")
    print("|---|---:|---:|---:|---:|---:|")
    for question in QUESTIONS:
        if args.names and not any(name in question.name for name in args.names):
            continue
        calls = 3 if "1m" in question.name else 40

        def ask(query: dict = question.barb) -> object:
            return execute(query, "NQ")

        ask()
        full, no_level, bare = _fastest([as_is, without_level, neither], ask, calls)
        as_is()
        print(
            f"| {question.name} | {full:.2f} | {no_level:.2f} | {bare:.2f} | "
            f"{full - no_level:+.2f} | {no_level - bare:+.2f} |"
        )


if __name__ == "__main__":
    main()

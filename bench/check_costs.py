"""What each warning check costs over the engine benchmark's questions, silent or speaking.

    BARB_DATA_DIR=$PWD/data .venv/bin/python bench/check_costs.py [--rounds 20]
    BARB_DATA_DIR=$PWD/data .venv/bin/python bench/check_costs.py --per-question 25 [name ...]

Every warning check (``bench/checks_switch.py`` finds them) is wrapped, for this process
only, to add up the thread CPU time of its calls, split by whether it returned a warning.
The figures are milliseconds per round of all bench/engine.py questions but the 1m volume
by hour (whose bars, not its checks, cost), garbage collection off: a check that says
nothing should cost next to nothing, and this table shows which do not. Answers and
warnings are unchanged; only their cost is read.

``--per-question N``: each question (those whose name holds one of the names given) asked
N times, and for each check its least cost over those runs (its calls in one run added),
"said" when it returned a warning; the question's least total beside the checks' sum.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@dataclass
class Cost:
    silent: float = 0.0
    silent_calls: int = 0
    spoke: float = 0.0
    spoke_calls: int = 0


def _wrap(module: ModuleType, name: str, check: Callable[..., Any], costs: dict[str, Cost]) -> None:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        said = check(*args, **kwargs)
        spent = time.thread_time() - start
        cost = costs.setdefault(name, Cost())
        if said:
            cost.spoke += spent
            cost.spoke_calls += 1
        else:
            cost.silent += spent
            cost.silent_calls += 1
        return said

    setattr(module, name, timed)


def per_question(runs: int, names: list[str], top: int) -> None:
    """Each question's checks by their least cost over ``runs`` runs (see the module's text)."""
    from barb import execute
    from bench.checks_switch import checks
    from bench.engine import QUESTIONS

    spent: dict[str, float] = {}
    said: set[str] = set()

    def wrap(module: ModuleType, name: str, check: Callable[..., Any]) -> None:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            found = check(*args, **kwargs)
            spent[name] = spent.get(name, 0.0) + time.thread_time() - start
            if _spoke(found):
                said.add(name)
            return found

        setattr(module, name, timed)

    for module, name, check in list(checks()):
        wrap(module, name, check)
    skipped = ("volume by hour", "(place, 1m)", "SAR from")
    questions = [q for q in QUESTIONS if not any(s in q.name for s in skipped)]
    questions = [q for q in questions if not names or any(n in q.name for n in names)]
    gc.disable()
    for question in questions:
        execute(question.barb, "NQ")  # warm
        least: dict[str, float] = {}
        total = float("inf")
        for _ in range(runs):
            spent.clear()
            said.clear()
            start = time.thread_time()
            execute(question.barb, "NQ")
            total = min(total, time.thread_time() - start)
            for name, cost in spent.items():
                least[name] = min(least.get(name, float("inf")), cost)
        checked = sum(least.values()) * 1000
        print(f"{question.name}: {total * 1000:.2f} ms, checks {checked:.2f} ms ({len(least)})")
        for name, cost in sorted(least.items(), key=lambda kv: -kv[1])[:top]:
            print(f"    {name:32s} {cost * 1000:6.3f}{'  said' if name in said else ''}")
    gc.enable()


def _spoke(found: Any) -> bool:
    """Whether a check's answer holds a warning (its shapes: a list, a tuple of them, a
    value whose truth says so)."""
    if isinstance(found, tuple):
        return any(_spoke(part) for part in found)
    try:
        return bool(found)
    except (TypeError, ValueError):  # an array's or a frame's truth: a value was given
        return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--per-question", type=int, default=0, metavar="RUNS")
    parser.add_argument("--top", type=int, default=8, help="checks listed per question")
    parser.add_argument("names", nargs="*", help="questions whose name holds one of these")
    args = parser.parse_args()
    if args.per_question:
        per_question(args.per_question, args.names, args.top)
        return

    from barb import execute
    from bench.checks_switch import checks
    from bench.engine import QUESTIONS

    costs: dict[str, Cost] = {}
    for module, name, check in list(checks()):
        _wrap(module, name, check, costs)
    questions = [q for q in QUESTIONS if "volume by hour" not in q.name]
    ask: list[Callable[[], object]] = [lambda q=q: execute(q.barb, "NQ") for q in questions]
    for call in ask:  # warm: data loaded, caches filled
        call()
    costs.clear()
    gc.disable()
    for _ in range(args.rounds):
        gc.collect()
        for call in ask:
            call()
    gc.enable()

    per_round = 1000 / args.rounds
    print(f"{len(questions)} questions, {args.rounds} rounds; ms per round (calls per round)")
    print(f"{'check':34s} {'silent':>14s} {'speaking':>14s}")
    ranked = sorted(costs.items(), key=lambda kv: -(kv[1].silent + kv[1].spoke))
    for name, cost in ranked:
        silent = f"{cost.silent * per_round:6.2f} ({cost.silent_calls // args.rounds:2d})"
        spoke = f"{cost.spoke * per_round:6.2f} ({cost.spoke_calls // args.rounds:2d})"
        print(f"{name:34s} {silent:>14s} {spoke:>14s}")
    silent_total = sum(c.silent for c in costs.values()) * per_round
    spoke_total = sum(c.spoke for c in costs.values()) * per_round
    print(f"{'total':34s} {silent_total:9.2f}      {spoke_total:9.2f}")


if __name__ == "__main__":
    main()

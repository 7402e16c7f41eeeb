"""Memory of worker processes that answered daily, hourly and minute questions on NQ, ES
and CL, and cold start (a fresh process to its first answer) against Polars and DuckDB.

    .venv/bin/python bench/memory.py [--workers 1 2 4] [--baseline ../barb-old]
        [--cold-rounds 5] [--write docs/benchmarks.md]

Memory: N worker processes start together; each answers every question of ``QUESTIONS`` on
each instrument the way a pool worker does (``barb.execute`` in a long-lived process, the
garbage collector frozen after warm-up as in ``bot/pool/runner.py``), then waits while the
parent reads RSS, PSS and USS (private clean + private dirty) of every worker from
``/proc/<pid>/smaps_rollup``. With ``--baseline`` (a checkout of an earlier commit, as in
``bench/compare_engines.py``) the same runs are made on its code first, over the same
data. The mapped Arrow files go to ``BARB_MAPPED_DIR`` (default: a folder in the system's
temporary directory), never into the data directory.

Cold start: for one question (RTH range by weekday, from minute bars) a fresh Python process
is timed from its start to its printed answer, on Barb, on Polars reading the Parquet file,
and on DuckDB reading it; the three run in turn, ``--cold-rounds`` times, and the medians
are compared. Barb's Arrow file exists by then (it is made once per machine, on import).
Timings on a shared machine are noisy: read the ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTRUMENTS = ("NQ", "ES", "CL")
MIB = 1024 * 1024

# Per instrument: daily bars, hourly bars and minute bars of the full session and of part of
# it, over all history and over a year.
QUESTIONS: dict[str, dict] = {
    "daily: RTH range by weekday": {
        "session": "RTH",
        "from": "daily",
        "map": {"weekday": "dayname()"},
        "group_by": "weekday",
        "select": "mean(range)",
    },
    "daily: monthly returns, best 5": {
        "session": "ETH",
        "from": "monthly",
        "map": {"ret": "(close - prev(close)) / prev(close) * 100"},
        "sort": "ret desc",
        "limit": 5,
    },
    "hourly: hour of the RTH high": {
        "session": "RTH",
        "from": "1h",
        "group_by": "date()",
        "select": "arg_max(hour(), high) as high_hour",
    },
    "minute: ETH volume by hour, all data": {
        "session": "ETH",
        "from": "1m",
        "group_by": "hour()",
        "select": "mean(volume)",
    },
    "minute: RTH up bars in 2024": {
        "session": "RTH",
        "from": "1m",
        "period": "2024",
        "where": "close > open",
        "select": "count()",
    },
    "minute: RTH mean 1m range, all data": {
        "session": "RTH",
        "from": "1m",
        "select": "mean(range)",
    },
    "5m: closes above VWAP in 2024": {
        "session": "RTH",
        "from": "5m",
        "period": "2024",
        "map": {"vw": "vwap()"},
        "select": "mean(close > vw)",
    },
}

WORKER = """
import gc, json, sys, time
sys.path.insert(0, sys.argv[1])
from barb import execute
try:
    from barb.process_memory import return_freed_memory
except ImportError:  # a baseline from before it
    pass
else:
    return_freed_memory()  # as bot/pool/runner.py's workers do
questions = json.loads(sys.argv[2])
times = {}
for symbol in sys.argv[3].split(","):
    for name, query in questions.items():
        t0 = time.perf_counter()
        result = execute(query, symbol)
        times[f"{symbol} {name}"] = round((time.perf_counter() - t0) * 1000, 1)
        if not result.ok:
            raise SystemExit(f"{symbol} {name}: {result.to_dict()}")
gc.collect()
gc.freeze()
print(json.dumps(times), flush=True)
sys.stdin.read()  # hold the memory until the parent has measured it
"""

COLD_BARB = """
import sys
sys.path.insert(0, sys.argv[1])
from barb import execute
result = execute({"session": "RTH", "from": "daily", "map": {"weekday": "dayname()"},
                  "group_by": "weekday", "select": "mean(range)"}, sys.argv[2])
assert result.ok, result.to_dict()
print(result.summary)
"""  # the question of COLD_QUERY

# The same question, written by hand: RTH bars (by minute of the day) to daily ranges, their
# mean by weekday.
COLD_POLARS = """
import sys
import polars as pl
lo, hi = int(sys.argv[3]), int(sys.argv[4])
daily = (
    pl.scan_parquet(sys.argv[1])
    .filter((pl.col("minute") >= lo) & (pl.col("minute") < hi))
    .group_by("trading_date")
    .agg((pl.col("high").max() - pl.col("low").min()).alias("range"))
)
answer = (
    daily.group_by(pl.col("trading_date").dt.strftime("%A").alias("weekday"))
    .agg(pl.col("range").mean())
    .sort("weekday")
    .collect()
)
print(sorted((w, round(r, 4)) for w, r in answer.iter_rows()))
"""

COLD_DUCKDB = """
import sys
import duckdb
lo, hi = int(sys.argv[3]), int(sys.argv[4])
rows = duckdb.sql(f'''
    SELECT dayname(trading_date) AS weekday, avg(r) FROM (
        SELECT trading_date, max(high) - min(low) AS r FROM read_parquet('{sys.argv[1]}')
        WHERE minute >= {lo} AND minute < {hi} GROUP BY trading_date)
    GROUP BY 1 ORDER BY 1''').fetchall()
print(sorted((w, round(r, 4)) for w, r in rows))
"""


COLD_QUERY = {
    "session": "RTH",
    "from": "daily",
    "map": {"weekday": "dayname()"},
    "group_by": "weekday",
    "select": "mean(range)",
}


def first_answer(conn: Connection, symbol: str) -> None:
    """In a new pool worker: the cold-start question, its summary sent back."""
    from barb import execute

    result = execute(COLD_QUERY, symbol)
    conn.send(str(result.summary) if result.ok else repr(result.to_dict()))


def forked_cold_start(symbol: str) -> tuple[float, str]:
    """Seconds from asking the bot's fork server for a new worker to that worker's answer
    (the server itself starts once, with the bot)."""
    from bot.pool.runner import worker_context

    context = worker_context()
    parent, child = context.Pipe()
    t0 = time.perf_counter()
    proc = context.Process(target=first_answer, args=(child, symbol))
    proc.start()
    answer = parent.recv()
    elapsed = time.perf_counter() - t0
    proc.join()
    child.close()
    return elapsed, answer


def rollup(pid: int) -> dict[str, float]:
    """RSS, PSS and USS of a process in MiB, from the kernel's per-process summary."""
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value, *_ = line.split()
        fields[key.rstrip(":")] = int(value) * 1024
    uss = fields["Private_Clean"] + fields["Private_Dirty"]
    return {
        "rss": fields["Rss"] / MIB,
        "pss": fields["Pss"] / MIB,
        "uss": uss / MIB,
        "file_backed_rss": (fields["Rss"] - fields["Anonymous"]) / MIB,
    }


def forked_worker(conn: Connection, questions: dict[str, dict], symbols: tuple[str, ...]) -> None:
    """A pool worker as the bot starts it (forked from the fork server, malloc's thresholds
    fixed, the collector frozen after its answers): answers, then holds its memory until
    the parent has measured it."""
    from barb import execute
    from barb.process_memory import return_freed_memory

    return_freed_memory()
    times = {}
    for symbol in symbols:
        for name, query in questions.items():
            t0 = time.perf_counter()
            result = execute(query, symbol)
            times[f"{symbol} {name}"] = round((time.perf_counter() - t0) * 1000, 1)
            if not result.ok:
                raise SystemExit(f"{symbol} {name}: {result.to_dict()}")
    gc.collect()
    gc.freeze()
    conn.send(times)
    conn.recv()


def fork_server_pids() -> list[int]:
    """This process's fork server (a child running multiprocessing.forkserver)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if ppid == os.getpid() and b"multiprocessing.forkserver" in command:
            found.append(int(entry.name))
    return found


def measure_forked_workers(count: int) -> dict:
    """``count`` workers forked from the bot's fork server (``bot.pool.runner``); their
    memory once all answered, and the fork server's, which the machine holds too."""
    from bot.pool.runner import worker_context

    context = worker_context()
    links, procs = [], []
    for _ in range(count):
        parent, child = context.Pipe()
        proc = context.Process(target=forked_worker, args=(child, QUESTIONS, INSTRUMENTS))
        proc.start()
        child.close()
        links.append(parent)
        procs.append(proc)
    try:
        times = [link.recv() for link in links]
        memory = [rollup(proc.pid) for proc in procs]
        server = [rollup(pid) for pid in fork_server_pids()]
    finally:
        for link in links:
            link.send("done")
        for proc in procs:
            proc.join()
    return {
        "workers": count,
        "per_worker": memory,
        "fork_server": server,
        "sum_pss": sum(m["pss"] for m in memory + server),
        "max_uss": max(m["uss"] for m in memory),
        "first_answer_ms": times[0],
    }


def measure_workers(root: Path, count: int, env: dict[str, str]) -> dict:
    """Start ``count`` workers at once on ``root``'s code, each a fresh interpreter (the
    pools of earlier commits spawned them); their memory once all answered."""
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                str(root),
                json.dumps(QUESTIONS),
                ",".join(INSTRUMENTS),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(count)
    ]
    try:
        times = []
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"a worker on {root} failed (exit {proc.wait()})")
            times.append(json.loads(line))
        memory = [rollup(proc.pid) for proc in procs]
    finally:
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
    return {
        "workers": count,
        "per_worker": memory,
        "sum_pss": sum(m["pss"] for m in memory),
        "max_uss": max(m["uss"] for m in memory),
        "first_answer_ms": times[0],
    }


def cold_start(
    root: Path, rounds: int, env: dict[str, str], symbol: str, baseline: Path | None
) -> dict:
    """Median seconds from a fresh process's start to its printed answer, three ways (four
    with the baseline's Barb), taken in turn in each round."""
    sys.path.insert(0, str(root))
    from barb.data.store import data_path
    from barb.instruments import load_instrument
    from barb.settings import EngineSettings

    settings = EngineSettings()
    parquet = str(data_path(symbol, settings))
    rth = load_instrument(symbol, settings).session("RTH")
    lo, hi = str(rth.start_minute), str(rth.end_minute)
    commands = {
        "barb": [sys.executable, "-c", COLD_BARB, str(root), symbol],
        "polars": [sys.executable, "-c", COLD_POLARS, parquet, symbol, lo, hi],
        "duckdb": [sys.executable, "-c", COLD_DUCKDB, parquet, symbol, lo, hi],
    }
    if baseline is not None:
        commands["barb before"] = [sys.executable, "-c", COLD_BARB, str(baseline), symbol]
    # Barb's Arrow file is made once per machine (on import); make sure it exists.
    subprocess.run(commands["barb"], env=env, check=True, capture_output=True)
    forked = "barb, new pool worker"
    forked_cold_start(symbol)  # starts the fork server, as the bot does when it starts
    samples: dict[str, list[float]] = {name: [] for name in [*commands, forked]}
    answers: dict[str, str] = {}
    for _ in range(rounds):
        for name, command in commands.items():
            t0 = time.perf_counter()
            out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
            samples[name].append(time.perf_counter() - t0)
            answers[name] = out.stdout.strip()
        seconds, answers[forked] = forked_cold_start(symbol)
        samples[forked].append(seconds)
    return {
        "median_s": {name: statistics.median(values) for name, values in samples.items()},
        "all_s": samples,
        "answers": answers,
    }


def table(label: str, runs: list[dict]) -> list[str]:
    lines = [
        f"**{label}**",
        "",
        "| workers | RSS per worker (MiB) | PSS per worker | USS per worker | fork server PSS "
        "| sum of PSS |",
        "|---|---|---|---|---|---|",
    ]
    for run in runs:
        per = run["per_worker"]
        server = sum(m["pss"] for m in run.get("fork_server", []))

        def span(key: str, per: list[dict] = per) -> str:
            values = [m[key] for m in per]
            low, high = min(values), max(values)
            return f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}"

        lines.append(
            f"| {run['workers']} | {span('rss')} | {span('pss')} | {span('uss')} "
            f"| {f'{server:.0f}' if 'fork_server' in run else '-'} | {run['sum_pss']:.0f} |"
        )
    return [*lines, ""]


SECTION = "## Memory of workers and cold start (`bench/memory.py`)"


def report(results: dict) -> str:
    lines = [
        SECTION,
        "",
        f"Command: `{results['command']}`  ",
        f"Machine: {results['machine']}; run {results['when']}.",
        "",
        f"Each worker answered {len(QUESTIONS)} questions on each of {', '.join(INSTRUMENTS)} "
        "(daily, hourly, 5-minute and 1-minute bars, over all history and over 2024), then "
        "its memory was read from `/proc/<pid>/smaps_rollup` while all N were alive. USS is "
        "private memory (clean + dirty); PSS shares each page among the processes that map "
        "it. Goals: USS < 250 MiB per worker, sum of PSS < 1536 MiB for 4 workers.",
        "",
    ]
    if "baseline" in results:
        lines += table("Before (Parquet read into each process)", results["baseline"])
    lines += table(
        "Now (Arrow files memory-mapped; workers forked from the fork server, which the sum "
        "counts)",
        results["memory"],
    )
    cold = results["cold"]
    med = cold["median_s"]
    lines += [
        f"Cold start, a fresh process to its first answer (RTH range by weekday on "
        f"{cold['symbol']} from minute bars), median of {results['cold_rounds']} alternating "
        "rounds:",
        "",
        "| engine | seconds | vs Polars |",
        "|---|---|---|",
    ]
    for name in med:
        lines.append(f"| {name} | {med[name]:.2f} | {med[name] / med['polars']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--baseline", type=Path, help="checkout of an earlier commit")
    parser.add_argument("--cold-rounds", type=int, default=5)
    parser.add_argument("--cold-symbol", default="NQ")
    parser.add_argument("--write", type=Path, help="record the results in this Markdown file")
    args = parser.parse_args()

    env = dict(os.environ)
    env.setdefault("BARB_MAPPED_DIR", str(Path(tempfile.gettempdir()) / "barb-bench-mapped"))
    env.setdefault("BARB_DATA_DIR", str(ROOT / "data"))
    os.environ.update(env)  # for the fork server and the workers forked from it
    results: dict = {
        "command": "python bench/memory.py " + " ".join(sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}",
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cold_rounds": args.cold_rounds,
    }
    if args.baseline:
        results["baseline"] = []
        for count in args.workers:
            results["baseline"].append(measure_workers(args.baseline.resolve(), count, env))
            print(f"baseline, {count} workers:", json.dumps(results["baseline"][-1]["per_worker"]))
    results["memory"] = []
    for count in args.workers:
        results["memory"].append(measure_forked_workers(count))
        print(f"now, {count} workers:", json.dumps(results["memory"][-1]["per_worker"]))
    baseline = args.baseline.resolve() if args.baseline else None
    cold = cold_start(ROOT, args.cold_rounds, env, args.cold_symbol, baseline)
    cold["symbol"] = args.cold_symbol
    results["cold"] = cold
    text = report(results)
    print(text)
    print(json.dumps(results["cold"]["answers"], indent=1))
    if args.write:
        from doc_sections import replace_section  # beside this script

        replace_section(args.write, SECTION, text)


if __name__ == "__main__":
    main()

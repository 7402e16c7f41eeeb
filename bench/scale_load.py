"""Answers per second with 1 and 2 bot replicas and 1 and 2 workers, under the flood limit
they share, against the bound min(Telegram's limit / requests per answer, CPU).

    .venv/bin/python bench/scale_load.py [--chats 60] [--rounds 2] [--write docs/benchmarks.md]

Every configuration is the deployment of ``tests/telegram/scale_cluster.py``, every part a
real process on this machine: PostgreSQL (migrated with `barb db upgrade`), Redis, the
``barb worker`` processes (``--concurrency 1``), the `barb bot` replicas in webhook mode
behind HAProxy (with one replica, both of HAProxy's servers are it), the fake Bot API and
the fake model. ``--chats`` chats each ask a question and get its plan; then all of them
press Run at once, and the time until every chart is delivered and every plan says "Done."
is measured. The replicas send at most ``BARB_TELEGRAM_MAX_RATE`` (30) Bot API requests a
second together, through Redis.

For each run: answers per second; Bot API requests per answer that count against the flood
limit (every call to a chat the fake received in the timed phase: edits, charts, chat
actions; not the button's acknowledgement); the CPU per answer of
every process of the deployment (replicas, workers and their children, PostgreSQL, Redis,
HAProxy; the fakes excepted); and the bound, min(30 / requests per answer, cores / CPU per
answer). Configurations alternate over ``--rounds`` so that the machine's changing load
falls on all of them alike. Needs HAProxy on the PATH (`make scale-servers`).
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
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
for folder in ("tests", "tests/telegram", "tests/llm"):
    sys.path.insert(0, str(ROOT / folder))

from fake_bot_api import FakeBotAPI  # noqa: E402
from scale_cluster import (  # noqa: E402
    Cluster,
    Timing,
    ask,
    charts,
    plan_status,
    plans,
    press_run,
    running_cluster,
    tag,
)
from servers.postgres import PostgresServer, running_postgres  # noqa: E402

TELEGRAM_LIMIT = 30.0
CONFIGS = [(1, 1), (1, 2), (2, 1), (2, 2)]  # (replicas, workers)
WAIT_S = 300.0


def deployment_cpu_s(cluster: Cluster) -> float:
    """CPU seconds used so far by the deployment's processes and their children."""
    roots = [replica.pid for replica in cluster.replicas if replica.session()]
    roots += [worker.process.pid for worker in cluster.workers]
    roots += [cluster.redis.process.pid, cluster.postgres.process.pid]
    roots += [p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == "haproxy"]
    total = 0.0
    for pid in roots:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(pid)
            for process in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    times = process.cpu_times()
                    total += times.user + times.system
    return total


async def wait(cluster: Cluster, condition: Any, what: str) -> None:
    await cluster.wait_until(condition, what, timeout=WAIT_S)


async def play(cluster: Cluster, chats: list[int], number: int) -> dict[str, float]:
    """Ask every chat's question ``number``, then press every Run at once: the timed part."""
    fake = cluster.fake
    for chat in chats:
        ask(fake, chat, f"{tag(chat, number)} average range by weekday?")
    await wait(cluster, lambda: all(len(plans(fake, c)) == number for c in chats), "the plans")
    await cluster.settled()
    first_call = len(fake.requests)
    cpu = deployment_cpu_s(cluster)
    started = time.perf_counter()
    for chat in chats:
        press_run(fake, chat, plans(fake, chat)[-1])

    def done() -> bool:
        return all(
            len(charts(fake, c)) == number and plan_status(fake, c, plans(fake, c)[-1]) == "⏵ Done."
            for c in chats
        )

    await wait(cluster, done, "every answer")
    elapsed = time.perf_counter() - started
    cpu_s = deployment_cpu_s(cluster) - cpu
    # The flood limit counts the requests to a chat (not answerCallbackQuery, getUpdates).
    limited = [r for r in fake.requests[first_call:] if "chat_id" in r.params]
    return {
        "answers_per_s": len(chats) / elapsed,
        "requests_per_answer": len(limited) / len(chats),
        "cpu_ms_per_answer": cpu_s * 1000 / len(chats),
    }


async def run_config(
    postgres: PostgresServer, data_dir: Path, workdir: Path, replicas: int, workers: int, chats: int
) -> dict[str, float]:
    async with FakeBotAPI() as fake:
        timing = Timing(query_timeout_s=60.0, outbox_lease_s=300.0, work_lease_s=90.0)
        async with running_cluster(
            fake,
            postgres,
            workdir,
            data_dir,
            timing,
            replica_count=replicas,
            worker_count=workers,
        ) as cluster:
            # Warm-up on chats of their own: data loaded, caches and connections made.
            await play(cluster, [8001 + n for n in range(4)], 1)
            return await play(cluster, [9001 + n for n in range(chats)], 1)


def bound(result: dict[str, float]) -> float:
    telegram = TELEGRAM_LIMIT / result["requests_per_answer"]
    cpu = (os.cpu_count() or 1) * 1000 / result["cpu_ms_per_answer"]
    return min(telegram, cpu)


def report(
    results: dict[tuple[int, int], list[dict[str, float]]], chats: int, rounds: int, load: float
) -> str:
    lines = [
        f"Command: `.venv/bin/python bench/scale_load.py --chats {chats} --rounds {rounds} "
        "--write docs/benchmarks.md`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; 1-minute load average {load:.1f} at the start. "
        f"{chats} chats press Run on a plan at once (a daily question on NQ's full sample, "
        "its chart and CSV); flood limit 30 requests/s shared by the replicas through Redis.",
        "",
        "| replicas | workers | answers/s, median | answers/s, best | limited Bot API requests "
        "per answer | CPU per answer (all processes) | bound: min(30 ÷ requests, cores ÷ CPU) "
        "| median ÷ bound |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (replicas, workers), runs in results.items():
        rates = [r["answers_per_s"] for r in runs]
        median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        limit = bound(median)
        lines.append(
            f"| {replicas} | {workers} | {statistics.median(rates):.1f} | {max(rates):.1f} | "
            f"{median['requests_per_answer']:.1f} | {median['cpu_ms_per_answer']:.0f} ms | "
            f"{limit:.1f} | {statistics.median(rates) / limit:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chats", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    from barb.settings import EngineSettings

    data_dir = Path(EngineSettings().data_dir).resolve()
    load = os.getloadavg()[0]
    results: dict[tuple[int, int], list[dict[str, float]]] = {c: [] for c in CONFIGS}
    with running_postgres() as postgres, tempfile.TemporaryDirectory() as tmp:
        for round_no in range(args.rounds):
            for replicas, workers in CONFIGS:
                workdir = Path(tmp) / f"r{round_no}-{replicas}x{workers}"
                result = asyncio.run(
                    run_config(postgres, data_dir, workdir, replicas, workers, args.chats)
                )
                results[(replicas, workers)].append(result)
                print(
                    f"round {round_no + 1}: {replicas} replica(s), {workers} worker(s): "
                    f"{result['answers_per_s']:.1f} answers/s, "
                    f"{result['requests_per_answer']:.1f} requests and "
                    f"{result['cpu_ms_per_answer']:.0f} ms CPU per answer",
                    flush=True,
                )
    text = report(results, args.chats, args.rounds, load)
    print(text)
    if args.write:
        write_section(args.write, text)


SECTION = "## Several replicas and workers (`bench/scale_load.py`)"


def write_section(path: Path, text: str) -> None:
    """Replace this benchmark's section of ``path`` (or add it at the end), keeping the
    notes written under its table."""
    from doc_sections import replace_section  # beside this script

    _, found, rest = path.read_text().partition(SECTION)
    rest = rest[: rest.find("\n## ")] if "\n## " in rest else rest
    # The generated part ends at the first blank line after the table.
    table_end = rest.find("\n\n", rest.find("|---"))
    notes = rest[table_end:] if found and table_end != -1 else ""
    replace_section(path, SECTION, f"{SECTION}\n\n{text}{notes}")


if __name__ == "__main__":
    main()

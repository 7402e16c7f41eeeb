"""Bot load benchmark: 200 chats ask at once, then press Run, through the real bot.

    .venv/bin/python bench/bot_load.py [--chats 200] [--workers 2] [--write docs/benchmarks.md]

Two processes, as in production: the bot (started by ``running_bot``, the wiring of
``barb bot``: store, worker pool, PTB Application polling for updates, housekeeping) runs in
a process of its own with an instant scripted model, so what is measured is Barb; this
process plays Telegram (the test suite's fake Bot API on 127.0.0.1) and the people. The
fake's own CPU is measured apart, since real Telegram does not run on the bot's machine, but
it shares the two cores with the bot here.

Every chat asks a different daily-timeframe question (four shapes, each over its own
twelve-month window), gets its plan, then presses Run. Scenarios:

- burst: all presses at the same moment (the stress case);
- paced: presses arrive one by one at random (Poisson) at a given rate, as people who read
  their plans press Run whenever they are done.

Each runs without a flood-control throttle (``BARB_TELEGRAM_MAX_RATE=0``: Barb's own
capacity) and with the 30 requests a second that real Telegram imposes across chats.

Measured per chat, from the moment the press is handed to the fake: the callback answered
(the button stops spinning), and the last reply message (the chart, captioned with its
headline and the commentary; the CSV waits behind its button, so nobody here asks for it).
Also throughput, event-loop lag in the bot (p99 of the delay of a 10 ms
sleep), worker restarts, errors, lost and duplicated replies, CPU per question.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import platform
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "telegram"))

SHAPES = [
    {
        "session": "RTH",
        "from": "daily",
        "map": {"weekday": "dayname()"},
        "group_by": "weekday",
        "select": "mean(range)",
    },
    {
        "session": "RTH",
        "from": "daily",
        "where": "inside_day()",
        "group_by": "month()",
        "select": "count()",
    },
    {
        "session": "RTH",
        "from": "daily",
        "map": {"gap": "open - prev(close)"},
        "where": "gap > 20",
        "select": "count()",
    },
    {
        "session": "RTH",
        "from": "daily",
        "map": {"chg": "(close - prev(close)) / prev(close) * 100"},
        "sort": "chg asc",
        "limit": 10,
    },
]
FIRST_YEAR, WINDOWS = 2008, 17 * 12  # twelve-month windows starting 2008-01 … 2024-12


def question_query(n: int) -> dict[str, Any]:
    """Chat ``n``'s question: its shape and its own twelve-month window (no two alike)."""
    start = n % WINDOWS
    end = start + 11
    period = (
        f"{FIRST_YEAR + start // 12}-{start % 12 + 1:02d}:"
        f"{FIRST_YEAR + end // 12}-{end % 12 + 1:02d}"
    )
    return {**SHAPES[n % len(SHAPES)], "period": period}


def brain(request: Any) -> Any:
    from bot.llm.scripted import text, tool_call, turn

    last = request.messages[-1]
    if last.role == "user":
        n = int((last.text or "0").split()[-1])
        return turn("Computing.", tool_call("execute_query", query=question_query(n)))
    return text("Answer: " + last.tool_results[-1].content.splitlines()[0])


# ------------------------------------------------------------------------- the bot's process


def bot_process(url: str, token: str, db_url: str, workers: int, rate: float, conn: Connection):
    """The bot under test, in its own process; commands come over ``conn``."""
    os.environ["BARB_OFFLINE"] = "1"
    asyncio.run(_serve_bot(url, token, db_url, workers, rate, conn))


async def _serve_bot(
    url: str, token: str, db_url: str, workers: int, rate: float, conn: Connection
) -> None:
    from pydantic import SecretStr

    from bot.bot_run import running_bot
    from bot.llm.scripted import ScriptedProvider
    from bot.pool.jobs import QueryJob
    from bot.settings import BotSettings
    from bot.store.settings import StoreSettings

    settings = BotSettings(
        TELEGRAM_BOT_TOKEN=SecretStr(token),
        TELEGRAM_API_BASE_URL=url,
        workers=workers,
        telegram_max_rate=rate,
        questions_per_minute=1000,
        query_timeout_s=60,
    )
    provider = ScriptedProvider([brain] * 100_000)
    # Counted from before the start: a listener added to a running engine can land while
    # housekeeping's first transaction is iterating the listeners (and break it).
    writes = count_writes()
    async with running_bot(settings, provider, StoreSettings(database_url=db_url)) as (_, svc):
        # Warm every worker (data loaded, daily frames built) before the clock starts.
        warm = [QueryJob(query=question_query(n), instrument="NQ") for n in range(4 * workers)]
        assert all(o.ok for o in await asyncio.gather(*(svc.runner.run(j) for j in warm)))
        conn.send("ready")
        lag: list[float] = []
        stop = asyncio.Event()
        sampler: asyncio.Task[None] | None = None
        cpu_start = (0.0, 0.0)
        while True:
            command = await asyncio.to_thread(conn.recv)
            if command == "mark":
                # The plans' bookkeeping (marked sent, message ids) may trail their sending.
                while await svc.store.outbox.unsent():
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.2)
                writes.clear()
                cpu_start = (time.process_time(), children_cpu_s())
                sampler = asyncio.create_task(measure_lag(lag, stop))
                conn.send("marked")
            elif command == "stop":
                stop.set()
                if sampler is not None:
                    await sampler
                conn.send(
                    {
                        "lag": lag,
                        "bot_cpu_s": time.process_time() - cpu_start[0],
                        "workers_cpu_s": children_cpu_s() - cpu_start[1],
                        "restarts": getattr(svc.runner, "restarts", 0),
                        "writes": len(writes),
                    }
                )
                break


async def measure_lag(samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(0.01)
        samples.append(max(0.0, time.perf_counter() - start - 0.01))


def count_writes() -> list[int]:
    """A growing list with one entry per write transaction the store begins (every engine
    of this process: the bot's store is its only one)."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from bot.store.transactions import WRITE_OPTION

    writes: list[int] = []

    def on_begin(connection: Any) -> None:
        if connection.get_execution_options().get(WRITE_OPTION):
            writes.append(1)

    event.listen(Engine, "begin", on_begin)
    return writes


def children_cpu_s() -> float:
    """CPU seconds used so far by this process's children (the query workers), from /proc."""
    me = os.getpid()
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:  # ppid; utime and stime follow at fields 11 and 12
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- Telegram and the people


@dataclass(frozen=True)
class Scenario:
    name: str
    throttle: float  # the bot's flood-control limit, requests/s (0: none)
    press_rate: float | None  # presses per second (Poisson); None: all at once

    @property
    def label(self) -> str:
        presses = "all at once" if self.press_rate is None else f"{self.press_rate:g}/s"
        limit = "no throttle" if not self.throttle else f"{self.throttle:g} req/s"
        return f"{presses}, {limit}"


def press_times(chats: int, rate: float | None, seed: int = 7) -> list[float]:
    """Seconds after the start at which each chat presses Run."""
    if rate is None:
        return [0.0] * chats
    rng = random.Random(seed)
    at, times = 0.0, []
    for _ in range(chats):
        times.append(at)
        at += rng.expovariate(rate)
    return times


async def run(chats: int, workers: int, scenario: Scenario) -> dict[str, Any]:
    from bot_harness import commentary_of, keyboard_data
    from fake_bot_api import FakeBotAPI

    tmp = tempfile.mkdtemp(prefix="barb-bench-")
    fake = FakeBotAPI()
    await fake.start()
    spawn = multiprocessing.get_context("spawn")
    conn, child_conn = spawn.Pipe()
    db_url = f"sqlite+aiosqlite:///{tmp}/bench.db"
    args = (fake.url, fake.token, db_url, workers, scenario.throttle, child_conn)
    bot = spawn.Process(target=bot_process, args=args)
    bot.start()
    try:
        assert await receive(conn, bot) == "ready"
        chat_ids = [1000 + i for i in range(chats)]
        for i, chat in enumerate(chat_ids):
            fake.inject(fake.message_update(chat_id=chat, user_id=chat, text=f"question {i}"))
        await fake.wait_for("sendMessage", chats, timeout=300)
        plans = {}
        for chat in chat_ids:
            [plan] = fake.calls("sendMessage", chat_id=chat)
            plans[chat] = plan.result
        conn.send("mark")
        assert await receive(conn, bot) == "marked"
        requests_before = len(fake.requests)
        fake_cpu = time.process_time()
        started = time.perf_counter()
        pressed: dict[int, float] = {}
        query_ids: dict[int, str] = {}
        for chat, at in zip(chat_ids, press_times(chats, scenario.press_rate), strict=True):
            delay = started + at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            rows = plans[chat]["reply_markup"]["inline_keyboard"]
            update = fake.callback_update(
                chat_id=chat,
                user_id=chat,
                message_id=plans[chat]["message_id"],
                data=rows[0][0]["callback_data"],
            )
            query_ids[chat] = update["callback_query"]["id"]
            pressed[chat] = time.perf_counter()
            fake.inject(update)
        with contextlib.suppress(AssertionError):  # whatever is missing counts as lost
            await fake.wait_for("sendPhoto", chats, timeout=600)
        finished = time.perf_counter()
        fake_cpu = time.process_time() - fake_cpu
        await asyncio.sleep(0.5)  # anything sent late would show up as a duplicate
        conn.send("stop")
        stats = await receive(conn, bot)
        requests = [r for r in fake.requests[requests_before:] if r.method != "getUpdates"]
    finally:
        await asyncio.to_thread(bot.join, 60)
        if bot.is_alive():
            bot.kill()
        await fake.stop()

    acked = {
        r.params.get("callback_query_id"): r.answered_at
        for r in requests
        if r.method == "answerCallbackQuery" and r.status == 200
    }
    latencies, acks = [], []
    lost = duplicated = 0
    for chat in chat_ids:
        texts = len(fake.calls("sendMessage", chat_id=chat))
        photos = [
            r
            for r in fake.calls("sendPhoto", chat_id=chat)
            if r.status == 200 and commentary_of(r.result.get("caption", "")).startswith("Answer: ")
        ]
        documents = len(fake.calls("sendDocument", chat_id=chat))
        if query_ids[chat] in acked:
            acks.append(acked[query_ids[chat]] - pressed[chat])
        # The answer is the chart captioned with its headline and the commentary, CSV button
        # under it.
        if not photos or not keyboard_data(photos[0].result)[0].startswith("f:"):
            lost += 1
            continue
        if texts > 1 or len(photos) > 1 or documents:  # the plan is the only text message
            duplicated += 1
        latencies.append(photos[0].answered_at - pressed[chat])
    errors = sum("reference" in str(r.params.get("text", "")) for r in fake.calls("sendMessage"))
    answered = max(len(latencies), 1)
    nan = float("nan")
    return {
        "scenario": scenario,
        "p50_ms": percentile(latencies, 50) * 1000 if latencies else nan,
        "p95_ms": percentile(latencies, 95) * 1000 if latencies else nan,
        "max_ms": max(latencies) * 1000 if latencies else nan,
        "ack_p95_ms": percentile(acks, 95) * 1000 if acks else nan,
        "throughput": len(latencies) / (finished - started),
        "lag_p99_ms": percentile(stats["lag"], 99) * 1000 if stats["lag"] else nan,
        "lag_max_ms": max(stats["lag"]) * 1000 if stats["lag"] else nan,
        "restarts": stats["restarts"],
        "errors": errors,
        "lost": lost,
        "duplicated": duplicated,
        "bot_cpu_ms": stats["bot_cpu_s"] * 1000 / answered,
        "worker_cpu_ms": stats["workers_cpu_s"] * 1000 / answered,
        "fake_cpu_ms": fake_cpu * 1000 / answered,
        "writes": stats["writes"] / answered,
        "requests": len(requests) / chats,
        # Those with a chat_id count against Telegram's flood limit (not answerCallbackQuery).
        "throttled": sum("chat_id" in r.params for r in requests) / chats,
    }


async def receive(conn: Connection, bot: Any) -> Any:
    """The bot process's next message; fails at once if the process has died."""
    while not await asyncio.to_thread(conn.poll, 0.5):
        if not bot.is_alive():
            raise RuntimeError(f"the bot process died (exit code {bot.exitcode})")
    return conn.recv()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


SCENARIOS = [
    Scenario("burst", 0.0, None),
    Scenario("burst", 30.0, None),
    Scenario("paced", 0.0, 10.0),
    Scenario("paced", 30.0, 4.0),
]

ROWS = [
    ("Run → last reply, p50", "p50_ms", "{:.0f} ms", "< 400 ms"),
    ("Run → last reply, p95", "p95_ms", "{:.0f} ms", "< 1500 ms"),
    ("Run → last reply, max", "max_ms", "{:.0f} ms", ""),
    ("Run → button answered, p95", "ack_p95_ms", "{:.0f} ms", ""),
    ("answered questions/s", "throughput", "{:.1f}", ""),
    ("bound: min(flood limit ÷ requests, CPU), answers/s", "bound", "{:.1f}", ""),
    ("answers/s ÷ bound", "throughput_ratio", "{:.2f}", ""),
    ("burst p50 ÷ bound's p50", "p50_ratio", "{:.2f}", ""),
    ("burst p95 ÷ bound's p95", "p95_ratio", "{:.2f}", ""),
    ("machine load (1-min average) at the start", "load", "{:.1f}", ""),
    ("event-loop lag p99", "lag_p99_ms", "{:.1f} ms", "< 50 ms"),
    ("event-loop lag max", "lag_max_ms", "{:.0f} ms", ""),
    ("worker restarts", "restarts", "{}", "0"),
    ("errors", "errors", "{}", "0"),
    ("lost replies", "lost", "{}", "0"),
    ("duplicated replies", "duplicated", "{}", "0"),
    ("bot CPU per question", "bot_cpu_ms", "{:.1f} ms", ""),
    ("workers' CPU per question", "worker_cpu_ms", "{:.1f} ms", ""),
    ("fake Telegram's CPU per question", "fake_cpu_ms", "{:.1f} ms", ""),
    ("store write transactions per question", "writes", "{:.1f}", ""),
    ("Bot API requests per question", "requests", "{:.1f}", ""),
    ("… of them under the flood limit", "throttled", "{:.1f}", ""),
]


def report(runs: list[dict[str, Any]], chats: int, workers: int) -> str:
    header = "| measure | " + " | ".join(r["scenario"].label for r in runs) + " | target |"
    lines = [
        f"Command: `.venv/bin/python bench/bot_load.py --chats {chats} --workers {workers} "
        "--write docs/benchmarks.md`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}. {chats} chats each ask a different daily-timeframe "
        f"question at once, get their plans, then press Run; {workers} query workers; instant "
        "scripted model. The bot runs in its own process (the wiring of `barb bot`); the fake "
        "Bot API runs in the benchmark's process on the same two cores.",
        "",
        header,
        "|---|" + "---:|" * len(runs) + "---|",
    ]
    runs = [with_ratios(r, chats) for r in runs]
    for name, key, fmt, target in ROWS:
        cells = " | ".join(fmt.format(r[key]).replace("nan", "—") for r in runs)
        lines.append(f"| {name} | {cells} | {target} |")
    lines += bounds(runs, chats)
    return "\n".join(lines)


def cpu_rate(run: dict[str, Any]) -> float:
    """Answers a second the machine's cores allow at this run's CPU cost per answer."""
    cpu = run["bot_cpu_ms"] + run["worker_cpu_ms"] + run["fake_cpu_ms"]
    return (os.cpu_count() or 1) * 1000 / cpu


def bound_rate(run: dict[str, Any]) -> float:
    """min(Telegram's limit ÷ throttled requests per answer, CPU), from the run's own costs."""
    rate = cpu_rate(run)
    if run["scenario"].throttle:
        rate = min(rate, run["scenario"].throttle / run["throttled"])
    return rate


def with_ratios(run: dict[str, Any], chats: int) -> dict[str, Any]:
    """A burst's figures as ratios to the bound (1.0 = as fast as anything could be): the
    answer a p-th of the way down the line cannot come before p × chats ÷ bound."""
    rate = bound_rate(run)
    out = {**run, "bound": rate, "throughput_ratio": run["throughput"] / rate}
    burst = run["scenario"].press_rate is None
    nan = float("nan")
    for p in (50, 95):
        floor_ms = p / 100 * chats / rate * 1000
        out[f"p{p}_ratio"] = run[f"p{p}_ms"] / floor_ms if burst else nan
    return out


def bounds(runs: list[dict[str, Any]], chats: int) -> list[str]:
    """What the machine and Telegram allow at best, from this run's own costs."""
    free = next((r for r in runs if not r["scenario"].throttle), None)
    limited = next((r for r in runs if r["scenario"].throttle), None)
    lines = []
    half, most = chats // 2, round(chats * 0.95)
    if free is not None:
        cpu = free["bot_cpu_ms"] + free["worker_cpu_ms"] + free["fake_cpu_ms"]
        rate = cpu_rate(free)
        lines += [
            "",
            f"At best on this machine: {os.cpu_count()} cores ÷ {cpu:.0f} ms of CPU per answer "
            f"(bot, worker, fake Telegram) = {rate:.0f} answers/s (measured: "
            f"{free['throughput']:.1f}/s). When all {chats} press Run in the same instant, "
            f"answer {half} cannot come sooner than {half / rate:.1f} s nor answer {most} "
            f"sooner than {most / rate:.1f} s; the p50 and p95 targets would take "
            f"{half / 0.4:.0f} and {most / 1.5:.0f} answers/s.",
        ]
    if limited is not None:
        per_answer = limited["throttled"]
        rate = limited["scenario"].throttle / per_answer
        lines += [
            "",
            f"Under Telegram's {limited['scenario'].throttle:g} requests/s, each answer makes "
            f"{per_answer:.1f} throttled requests (the plan's Running… and Done. edits and the "
            f"chart captioned with its headline and the commentary; the CSV is sent only when "
            f"its button is "
            f"pressed, the button's answer is not throttled): {rate:.1f} answers/s, so answer "
            f"{half} cannot come sooner than {half / rate:.1f} s.",
        ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chats", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", choices=[f"{s.name}-{s.throttle:g}" for s in SCENARIOS])
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("BARB_OFFLINE", "1")
    chosen = [s for s in SCENARIOS if args.only in (None, f"{s.name}-{s.throttle:g}")]
    runs = []
    for scenario in chosen:
        load = os.getloadavg()[0]  # other agents share the machine: say how busy it was
        runs.append({**asyncio.run(run(args.chats, args.workers, scenario)), "load": load})
        print(f"{scenario.label}: p50 {runs[-1]['p50_ms']:.0f} ms", flush=True)
    text = report(runs, args.chats, args.workers)
    print(text)
    if args.write:
        from bench.engine import write_section

        write_section(args.write, "Bot under load", text)


if __name__ == "__main__":
    main()

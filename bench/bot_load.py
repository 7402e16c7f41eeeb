"""Bot load benchmark: 200 chats press Run at once, through the real PTB Application.

    .venv/bin/python bench/bot_load.py [--chats 200] [--workers 2] [--write docs/benchmarks.md]

The Telegram side is the test suite's fake Bot API (an HTTP server on 127.0.0.1 in the same
event loop: its own work counts against the loop-lag figure, so that figure is pessimistic).
The model is the scripted provider answering instantly, so what is measured is Barb: the loop,
the store, the worker pool running daily-timeframe queries, charts and CSVs, and sending.

It runs twice: without a flood-control throttle (``BARB_TELEGRAM_MAX_RATE=0``: the fake
server never says RetryAfter, so this is Barb's own capacity), and with the default 30
requests a second that real Telegram imposes across chats.

Measured per chat: latency from injecting the Run press to the last reply message (the
commentary, sent after the photo and the CSV). Also throughput, event-loop lag (p99 of the
delay of a 10 ms sleep), worker restarts, errors, lost and duplicated replies.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "telegram"))

THROTTLES = (0.0, 30.0)

QUERIES = [
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
        "group_by": "year()",
        "select": "count()",
    },
    {
        "session": "RTH",
        "from": "daily",
        "map": {"gap": "open - prev(close)"},
        "where": "gap > 50",
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


def brain(request: Any) -> Any:
    from bot.llm.scripted import text, tool_call, turn

    last = request.messages[-1]
    if last.role == "user":
        n = int((last.text or "0").split()[-1])
        # Each chat its own year: no two neighbours ask the very same question.
        query = {**QUERIES[n % len(QUERIES)], "period": str(2008 + n % 18)}
        return turn("Computing.", tool_call("execute_query", query=query))
    return text("Answer: " + last.tool_results[-1].content.splitlines()[0])


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


async def measure_lag(samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(0.01)
        samples.append(max(0.0, time.perf_counter() - start - 0.01))


async def watch_answers(fake: Any, stamps: dict[int, list[float]], stop: asyncio.Event) -> None:
    """When each sendMessage was answered, by chat (a slow call, such as a long poll, does
    not hold back the ones after it)."""
    seen = 0
    open_calls: list[Any] = []
    while not stop.is_set():
        requests = fake.requests
        fresh, seen = requests[seen:], len(requests)
        still_open = []
        for rec in [*open_calls, *fresh]:
            if not rec.status:
                still_open.append(rec)
            elif rec.method == "sendMessage" and rec.status == 200:
                stamps.setdefault(int(rec.params["chat_id"]), []).append(rec.answered_at)
        open_calls = still_open
        await asyncio.sleep(0.005)


async def run(chats: int, workers: int, max_rate: float) -> dict[str, Any]:
    from fake_bot_api import FakeBotAPI, polling

    from barb.reference import query_examples
    from bot.assistant.orchestrator import Assistant, AssistantSettings
    from bot.llm.scripted import ScriptedProvider
    from bot.pool.runner import ProcessRunner
    from bot.settings import BotSettings
    from bot.store.db import open_store
    from bot.store.settings import StoreSettings
    from bot.telegram.app import build_application, on_startup
    from bot.telegram.services import BotServices, RateLimiter

    tmp = tempfile.mkdtemp(prefix="barb-bench-")
    fake = FakeBotAPI()
    await fake.start()
    store = await open_store(StoreSettings(database_url=f"sqlite+aiosqlite:///{tmp}/bench.db"))
    writes = count_writes(store)
    runner = ProcessRunner(workers=workers, timeout_s=60, warm_instruments=("NQ",))
    settings = BotSettings(telegram_token=fake.token, questions_per_minute=100)
    services = BotServices(
        settings=settings,
        assistant=Assistant(
            ScriptedProvider([brain] * (chats * 3)), store, runner, settings=AssistantSettings()
        ),
        store=store,
        runner=runner,
        limiter=RateLimiter(settings.questions_per_minute),
        examples=[e.question for e in query_examples()],
    )
    application = build_application(fake.token, services, base_url=fake.url, max_rate=max_rate)
    stop = asyncio.Event()
    lag: list[float] = []
    stamps: dict[int, list[float]] = {}
    chat_ids = [1000 + i for i in range(chats)]
    try:
        async with polling(application):
            await on_startup(application)
            # Warm the workers (data load, first daily frames) before the clock starts.
            warm = await asyncio.gather(*(runner.run(_job(q)) for q in QUERIES * workers))
            assert all(o.ok for o in warm)
            watcher = asyncio.create_task(watch_answers(fake, stamps, stop))
            for i, chat in enumerate(chat_ids):
                fake.inject(fake.message_update(chat_id=chat, user_id=chat, text=f"question {i}"))
            await fake.wait_for("sendMessage", chats, timeout=120)
            plans = {}
            for chat in chat_ids:
                [plan] = fake.calls("sendMessage", chat_id=chat)
                plans[chat] = plan.result
            lag_task = asyncio.create_task(measure_lag(lag, stop))
            pressed: dict[int, float] = {}
            writes.clear()
            requests_before = len(fake.requests)
            cpu_before = time.process_time(), workers_cpu_s()
            started = time.perf_counter()
            for chat in chat_ids:
                rows = plans[chat]["reply_markup"]["inline_keyboard"]
                run_data = rows[0][0]["callback_data"]
                pressed[chat] = time.perf_counter()
                fake.inject(
                    fake.callback_update(
                        chat_id=chat,
                        user_id=chat,
                        message_id=plans[chat]["message_id"],
                        data=run_data,
                    )
                )
            deadline = time.perf_counter() + 300
            while time.perf_counter() < deadline:
                if all(len(stamps.get(c, [])) >= 2 for c in chat_ids):
                    break
                await asyncio.sleep(0.01)
            finished = time.perf_counter()
            main_cpu = time.process_time() - cpu_before[0]
            worker_cpu = workers_cpu_s() - cpu_before[1]
            requests = [r for r in fake.requests[requests_before:] if r.method != "getUpdates"]
            await asyncio.sleep(0.5)  # anything sent late would show up as a duplicate
            stop.set()
            await asyncio.gather(watcher, lag_task)
    finally:
        await runner.close()
        await store.close()
        await fake.stop()

    latencies = []
    lost = duplicated = 0
    for chat in chat_ids:
        answers = stamps.get(chat, [])
        photos = len(fake.calls("sendPhoto", chat_id=chat))
        documents = len(fake.calls("sendDocument", chat_id=chat))
        # The commentary must arrive; a count of zero matching days has no chart to send.
        if len(answers) < 2 or documents < 1:
            lost += 1
            continue
        if len(answers) > 2 or photos > 1 or documents > 1:
            duplicated += 1
        latencies.append(answers[1] - pressed[chat])
    errors = sum("reference" in str(r.params.get("text", "")) for r in fake.calls("sendMessage"))
    return {
        "chats": chats,
        "workers": workers,
        "p50_ms": percentile(latencies, 50) * 1000 if latencies else float("nan"),
        "p95_ms": percentile(latencies, 95) * 1000 if latencies else float("nan"),
        "max_ms": max(latencies) * 1000 if latencies else float("nan"),
        "throughput": len(latencies) / (finished - started),
        "lag_p99_ms": percentile(lag, 99) * 1000 if lag else float("nan"),
        "lag_max_ms": max(lag) * 1000 if lag else float("nan"),
        "restarts": runner.restarts,
        "errors": errors,
        "lost": lost,
        "duplicated": duplicated,
        "main_cpu_ms": main_cpu * 1000 / max(len(latencies), 1),
        "worker_cpu_ms": worker_cpu * 1000 / max(len(latencies), 1),
        "writes": len(writes) / chats,
        "requests": len(requests) / chats,
    }


def count_writes(store: Any) -> list[int]:
    """A growing list with one entry per write transaction the store begins."""
    from sqlalchemy import event

    from bot.store.transactions import WRITE_OPTION

    writes: list[int] = []

    def on_begin(connection: Any) -> None:
        if connection.get_execution_options().get(WRITE_OPTION):
            writes.append(1)

    event.listen(store._engine.sync_engine, "begin", on_begin)
    return writes


def workers_cpu_s() -> float:
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


def _job(query: dict[str, Any]) -> Any:
    from bot.pool.jobs import QueryJob

    return QueryJob(query=query, instrument="NQ")


def _row(name: str, runs: list[dict[str, Any]], key: str, fmt: str, target: str) -> str:
    return f"| {name} | " + " | ".join(fmt.format(r[key]) for r in runs) + f" | {target} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chats", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("BARB_OFFLINE", "1")
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    runs = [asyncio.run(run(args.chats, args.workers, rate)) for rate in THROTTLES]
    r = runs[0]
    throttled = runs[1]
    lines = [
        f"Command: `.venv/bin/python bench/bot_load.py --chats {args.chats} --workers "
        f"{args.workers} --write docs/benchmarks.md`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}. {r['chats']} chats each ask one daily-timeframe question "
        f"and press Run at the same moment; {r['workers']} query workers; instant scripted "
        "model; fake Bot API on 127.0.0.1 in the bot's event loop. Two runs: no flood-control "
        "throttle (Barb's own capacity), and Telegram's 30 requests/s.",
        "",
        "| measure | no throttle | 30 requests/s | target |",
        "|---|---:|---:|---|",
        _row("latency Run → last reply, p50", runs, "p50_ms", "{:.0f} ms", "< 400 ms"),
        _row("latency Run → last reply, p95", runs, "p95_ms", "{:.0f} ms", "< 1500 ms"),
        _row("latency, max", runs, "max_ms", "{:.0f} ms", ""),
        _row("throughput, answered questions/s", runs, "throughput", "{:.1f}", ""),
        _row("event-loop lag p99", runs, "lag_p99_ms", "{:.1f} ms", "< 50 ms"),
        _row("event-loop lag max", runs, "lag_max_ms", "{:.0f} ms", ""),
        _row("worker restarts", runs, "restarts", "{}", "0"),
        _row("errors", runs, "errors", "{}", "0"),
        _row("lost replies", runs, "lost", "{}", "0"),
        _row("duplicated replies", runs, "duplicated", "{}", "0"),
        "",
        f"Bot-process CPU per answered question (no throttle): {r['main_cpu_ms']:.0f} ms; "
        f"workers' CPU per question: {r['worker_cpu_ms']:.0f} ms; store writes per question: "
        f"{r['writes']:.1f}. Requests to Telegram per Run press: {throttled['requests']:.1f}.",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        from bench.engine import write_section

        write_section(args.write, "Bot under load", text)


if __name__ == "__main__":
    main()

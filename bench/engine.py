"""Engine benchmark: Barb Script vs hand-written DuckDB SQL on the full sample, one run.

    .venv/bin/python bench/engine.py [--instrument NQ] [--repeat 15] [--write docs/benchmarks.md]
    .venv/bin/python bench/engine.py --child --steps   # one process: memory after each question

For each question: Barb's median warm time (caches built, interpreter overhead included),
its first (cold-cache) time, DuckDB's median over the same minute bars held in memory, and
the ratio. Then cold start (a new process until the first answer) and peak memory of a
process that runs the whole Barb suite. Results are printed and, with --write, recorded in
the engine section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RTH = "mod >= 570 AND mod < 1020"
ON = "(mod >= 1080 OR mod < 570)"
DAILY_RTH = f"""
    SELECT tdate, arg_min(open, ts) AS open, max(high) AS high, min(low) AS low,
           arg_max(close, ts) AS close, sum(volume) AS volume, max(high) - min(low) AS range
    FROM bars WHERE {RTH} GROUP BY tdate
"""


@dataclass(frozen=True)
class Question:
    name: str
    kind: str  # "daily+", "minute", "indicator" or "history" (a period that needs warm-up)
    barb: dict
    sql: str | None  # None: no hand-written SQL equivalent (recursive indicators)


QUESTIONS: list[Question] = [
    Question(
        "RTH range by weekday",
        "daily+",
        {
            "session": "RTH",
            "from": "daily",
            "map": {"weekday": "dayname()"},
            "group_by": "weekday",
            "select": "mean(range)",
        },
        f"SELECT dayname(tdate) AS d, avg(range) FROM ({DAILY_RTH}) GROUP BY 1",
    ),
    Question(
        "gap ups > 0.5% in 2024",
        "daily+",
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "map": {"gap_pct": "(open - prev(close)) / prev(close) * 100"},
            "where": "gap_pct > 0.5",
            "select": "count()",
        },
        f"""SELECT count(*) FROM (
              SELECT tdate, (open - lag(close) OVER w) / lag(close) OVER w * 100 AS g
              FROM ({DAILY_RTH}) WHERE tdate BETWEEN '2024-01-01' AND '2024-12-31'
              WINDOW w AS (ORDER BY tdate)) WHERE g > 0.5""",
    ),
    Question(
        "top 10 daily drops",
        "daily+",
        {
            "session": "RTH",
            "from": "daily",
            "map": {"chg_pct": "(close - prev(close)) / prev(close) * 100"},
            "sort": "chg_pct asc",
            "limit": 10,
        },
        f"""SELECT tdate, (close - lag(close) OVER (ORDER BY tdate)) / lag(close) OVER
              (ORDER BY tdate) * 100 AS c FROM ({DAILY_RTH}) ORDER BY c ASC NULLS LAST LIMIT 10""",
    ),
    Question(
        "inside days per year",
        "daily+",
        {
            "session": "RTH",
            "from": "daily",
            "map": {"inside": "high < prev(high) and low > prev(low)", "yr": "year()"},
            "where": "inside",
            "group_by": "yr",
            "select": "count()",
        },
        f"""SELECT year(tdate), count(*) FROM (
              SELECT tdate, high < lag(high) OVER w AND low > lag(low) OVER w AS inside
              FROM ({DAILY_RTH}) WINDOW w AS (ORDER BY tdate)) WHERE inside GROUP BY 1""",
    ),
    Question(
        "20-day rolling volatility",
        "daily+",
        {
            "session": "RTH",
            "from": "daily",
            "map": {
                "ret": "(close - prev(close)) / prev(close) * 100",
                "vol20": "rolling_std(ret, 20)",
            },
            "select": ["mean(vol20)", "max(vol20)"],
        },
        f"""SELECT avg(v), max(v) FROM (
              SELECT CASE WHEN count(r) OVER w = 20 THEN stddev_samp(r) OVER w END AS v
              FROM (SELECT tdate, (close - lag(close) OVER (ORDER BY tdate))
                      / lag(close) OVER (ORDER BY tdate) * 100 AS r FROM ({DAILY_RTH}))
              WINDOW w AS (ORDER BY tdate ROWS BETWEEN 19 PRECEDING AND CURRENT ROW))""",
    ),
    Question(
        "RTH breaks the overnight high",
        "daily+",
        {
            "session": "RTH",
            "from": "daily",
            "map": {"on_high": "session_high('OVERNIGHT')"},
            "where": "high > on_high",
            "select": "count()",
        },
        f"""SELECT count(*) FROM (
              SELECT tdate, max(high) FILTER (WHERE {RTH}) AS h,
                     max(high) FILTER (WHERE {ON}) AS oh
              FROM bars GROUP BY tdate) WHERE h > oh""",
    ),
    Question(
        "monthly returns, best 5",
        "daily+",
        {
            "session": "ETH",
            "from": "monthly",
            "map": {"ret": "(close - prev(close)) / prev(close) * 100"},
            "sort": "ret desc",
            "limit": 5,
        },
        """SELECT m, (c - lag(c) OVER (ORDER BY m)) / lag(c) OVER (ORDER BY m) * 100 AS r FROM (
              SELECT date_trunc('month', tdate) AS m, arg_max(close, ts) AS c FROM bars
              GROUP BY 1) ORDER BY r DESC NULLS LAST LIMIT 5""",
    ),
    Question(
        "overnight range stats",
        "daily+",
        {"session": "OVERNIGHT", "from": "daily", "select": ["mean(range)", "median(range)"]},
        f"""SELECT avg(r), median(r) FROM (
              SELECT max(high) - min(low) AS r FROM bars WHERE {ON} GROUP BY tdate)""",
    ),
    Question(
        "weekly range by year",
        "daily+",
        {"session": "ETH", "from": "weekly", "group_by": "year()", "select": "mean(range)"},
        """SELECT y, avg(r) FROM (
              SELECT year(date_trunc('week', tdate)) AS y, max(high) - min(low) AS r
              FROM bars GROUP BY date_trunc('week', tdate)) GROUP BY 1""",
    ),
    Question(
        "range on FOMC days vs others",
        "daily+",
        {
            "session": "RTH",
            "from": "daily",
            "join": "fomc",
            "group_by": "fomc",
            "select": "mean(range)",
        },
        f"""SELECT f.date IS NOT NULL AS fomc, avg(range) FROM ({DAILY_RTH}) d
              LEFT JOIN fomc f ON f.date = d.tdate GROUP BY 1""",
    ),
    Question(
        "RSI(14) below 30, days per year",
        "indicator",
        {
            "session": "RTH",
            "from": "daily",
            "map": {"rsi14": "rsi(close, 14)"},
            "where": "rsi14 < 30",
            "group_by": "year()",
            "select": "count()",
        },
        None,
    ),
    Question(
        "ATR(14) now",
        "indicator",
        {
            "session": "RTH",
            "from": "daily",
            "map": {"atr14": "atr(14)"},
            "sort": "timestamp desc",
            "limit": 1,
        },
        None,
    ),
    Question(
        "MACD crossovers, all data",
        "indicator",
        {
            "session": "RTH",
            "from": "daily",
            "map": {"h": "macd_hist()", "cross": "h > 0 and prev(h) <= 0"},
            "where": "cross",
            "select": "count()",
        },
        None,
    ),
    Question(
        "5m closes above VWAP in 2024",
        "indicator",
        {
            "session": "RTH",
            "from": "5m",
            "period": "2024",
            "map": {"vw": "vwap()"},
            "select": "mean(close > vw)",
        },
        None,
    ),
    Question(
        "volume by hour (1m bars)",
        "minute",
        {"session": "ETH", "from": "1m", "group_by": "hour()", "select": "mean(volume)"},
        "SELECT hour(ts), avg(volume) FROM bars GROUP BY 1",
    ),
    Question(
        "1m bars with range > 20 in 2024",
        "minute",
        {
            "session": "ETH",
            "from": "1m",
            "period": "2024",
            "where": "range > 20",
            "select": "count()",
        },
        """SELECT count(*) FROM bars WHERE tdate BETWEEN '2024-01-01' AND '2024-12-31'
              AND high - low > 20""",
    ),
    Question(
        "15m opening bar range, 2020-2025",
        "minute",
        {
            "session": "RTH",
            "from": "15m",
            "period": "2020:2025",
            "where": "hour() == 9 and minute() == 30",
            "select": "mean(range)",
        },
        """SELECT avg(r) FROM (
              SELECT max(high) - min(low) AS r FROM bars
              WHERE mod >= 570 AND mod < 585 AND tdate BETWEEN '2020-01-01' AND '2025-12-31'
              GROUP BY tdate)""",
    ),
    # Periods that read history before them: the warm-up the planner adds is measured below.
    Question(
        "RSI(14) < 30 in 2024, RSI on all history",
        "history",
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "where": "rsi(close, 14) < 30",
            "select": "count()",
        },
        None,
    ),
    Question(
        "2024 closes above the 200-day SMA",
        "history",
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "where": "close > rolling_mean(close, 200)",
            "select": "count()",
        },
        f"""SELECT count(*) FROM (
              SELECT tdate, close, avg(close) OVER (ORDER BY tdate ROWS 199 PRECEDING) AS sma,
                     count(*) OVER (ORDER BY tdate ROWS 199 PRECEDING) AS n
              FROM ({DAILY_RTH})) WHERE n = 200 AND close > sma
              AND tdate BETWEEN '2024-01-01' AND '2024-12-31'""",
    ),
    Question(
        "mean range, last 30 bars",
        "history",
        {"session": "RTH", "from": "daily", "period": "last_30_bars", "select": "mean(range)"},
        f"SELECT avg(range) FROM (SELECT range FROM ({DAILY_RTH}) ORDER BY tdate DESC LIMIT 30)",
    ),
    Question(
        "5m RSI(14) on one day",
        "history",
        {
            "session": "RTH",
            "from": "5m",
            "period": "2024-03-05",
            "map": {"r": "rsi(close, 14)"},
            "select": ["timestamp", "r"],
        },
        None,
    ),
    Question(
        "1m EMA(50) crosses in one week",
        "history",
        {
            "session": "ETH",
            "from": "1m",
            "period": "2024-03-04:2024-03-08",
            "map": {"e": "ema(close, 50)"},
            "where": "close > e and prev(close) <= prev(e)",
            "select": "count()",
        },
        None,
    ),
    Question(
        "NQ-ES daily return correlation, 2024",
        "history",
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "join": {"instrument": "ES"},
            "map": {"a": "close / prev(close) - 1", "b": "es_close / prev(es_close) - 1"},
            "select": "correlation(a, b)",
        },
        None,
    ),
    Question(
        "15m opening range as a window session, 2020-2025",
        "minute",
        {"session": "09:30-09:45", "from": "daily", "period": "2020:2025", "select": "mean(range)"},
        """SELECT avg(r) FROM (
              SELECT max(high) - min(low) AS r FROM bars
              WHERE mod >= 570 AND mod < 585 AND tdate BETWEEN '2020-01-01' AND '2025-12-31'
              GROUP BY tdate)""",
    ),
    Question(
        "hour of the RTH high, each day (arg_max)",
        "minute",
        {
            "session": "RTH",
            "from": "1h",
            "group_by": "date()",
            "select": "arg_max(hour(), high) as high_hour",
        },
        f"""SELECT tdate, first(hr ORDER BY h DESC, hr) FROM (
              SELECT tdate, (570 + (mod - 570) // 60 * 60) // 60 AS hr, max(high) AS h
              FROM bars WHERE {RTH} GROUP BY ALL) GROUP BY tdate""",
    ),
    Question(
        "minute of each day's ETH volume peak (place, 1m)",
        "minute",
        {
            "session": "ETH",
            "from": "1m",
            "map": {"p": "place(volume, 'day')"},
            "where": "p == 1",
            "group_by": "hour()",
            "select": "count()",
        },
        """SELECT hour(ts), count(*) FROM (
              SELECT ts, row_number() OVER (PARTITION BY tdate ORDER BY volume DESC, ts) AS p
              FROM bars) WHERE p = 1 GROUP BY 1""",
    ),
    Question(
        "1m closes above the SAR in one month (SAR from 2008)",
        "history",
        {
            "session": "ETH",
            "from": "1m",
            "period": "2024-03",
            "map": {"s": "sar(0.02, 0.2)"},
            "where": "close > s",
            "select": "count()",
        },
        None,
    ),
    Question(
        "month's first open and last close",
        "daily+",
        {
            "session": "RTH",
            "from": "daily",
            "group_by": ["year()", "month()"],
            "select": ["first(open)", "last(close)"],
        },
        f"""SELECT year(tdate), month(tdate), first(open ORDER BY ts), last(close ORDER BY ts)
            FROM bars WHERE {RTH} GROUP BY 1, 2""",
    ),
]


def timed(fn, repeat: int) -> tuple[float, float]:
    """(first call, median of the next `repeat` calls) in milliseconds."""
    t0 = time.perf_counter()
    fn()
    first = (time.perf_counter() - t0) * 1000
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return first, statistics.median(samples)


def child_suite(instrument: str, steps: bool = False) -> None:
    """Run in a fresh process: time to first answer, then the whole suite; report memory.

    With ``steps``, also the resident and peak memory after each question (where it goes).
    """
    start = time.perf_counter()
    from barb import execute

    first = execute(QUESTIONS[0].barb, instrument)
    assert first.ok, first.to_dict()
    cold = time.perf_counter() - start
    for q in QUESTIONS:
        execute(q.barb, instrument)
        if steps:
            print(f"{q.name:50s} resident {_resident_mb():6.0f} MB  peak {_peak_mb():6.0f} MB")
    print(json.dumps({"cold_start_s": cold, "peak_mb": _peak_mb()}))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _resident_mb() -> float:
    """Resident set now (Linux: the second field of /proc/self/statm, in pages)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def fresh_process(instrument: str) -> dict:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--instrument", instrument],
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    data = json.loads(out.stdout.strip().splitlines()[-1])
    data["process_wall_s"] = wall
    return data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instrument", default="NQ")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--write", type=Path)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--steps", action="store_true", help="with --child: memory per question")
    args = parser.parse_args()
    if args.child:
        child_suite(args.instrument, args.steps)
        return

    import duckdb

    from barb import execute
    from barb.charts import render_chart
    from barb.data.store import data_path, read_bars
    from barb.events import event_dates
    from barb.instruments import load_instrument
    from barb.settings import EngineSettings

    starts = [fresh_process(args.instrument) for _ in range(3)]
    frame, meta = read_bars(data_path(args.instrument, EngineSettings()))
    con = duckdb.connect()
    con.execute("SET threads TO 2")
    con.register("f", frame)
    con.execute(
        "CREATE TABLE bars AS SELECT timestamp AS ts, open, high, low, close, volume, "
        "CAST(trading_date AS DATE) AS tdate, CAST(minute AS INTEGER) AS mod FROM f"
    )
    con.unregister("f")
    fomc = event_dates("fomc", load_instrument(args.instrument))[["trading_date"]]
    con.register("fomc_frame", fomc)
    con.execute("CREATE TABLE fomc AS SELECT CAST(trading_date AS DATE) AS date FROM fomc_frame")

    rows = []
    for q in QUESTIONS:
        result = execute(q.barb, args.instrument)
        assert result.ok, (q.name, result.to_dict())
        b_first, b_med = timed(lambda q=q: execute(q.barb, args.instrument), args.repeat)
        d_med = None
        if q.sql is not None:
            _, d_med = timed(lambda q=q: con.execute(q.sql).fetchall(), args.repeat)
        rows.append((q, b_first, b_med, d_med))
        duck = f"duckdb {d_med:8.2f} ms  ratio {b_med / d_med:6.3f}" if d_med else "no SQL"
        print(f"{q.name:36s} barb {b_med:8.2f} ms (first {b_first:8.1f})  {duck}")

    warmups = warmup_costs(args.instrument, args.repeat)

    charts = []
    for name, query in CHART_CASES:
        result = execute(query, args.instrument)
        _, med = timed(lambda result=result: render_chart(result), args.repeat)
        charts.append((name, med))
        print(f"chart: {name:30s} {med:8.1f} ms")

    compared = [r for r in rows if r[3] is not None]
    barb_total = sum(r[2] for r in compared)
    duck_total = sum(r[3] for r in compared)
    daily = [r for r in rows if r[0].kind in ("daily+", "indicator") and "5m" not in r[0].name]
    previous = previous_medians(args.write) if args.write else {}
    minute = [r for r in rows if r[0].kind == "minute"]
    cold = statistics.median(s["cold_start_s"] for s in starts)
    cold_runs = ", ".join(f"{s['cold_start_s']:.2f}" for s in starts)
    peak = max(s["peak_mb"] for s in starts)
    lines = [
        f"Command: `.venv/bin/python bench/engine.py --instrument {args.instrument} "
        f"--repeat {args.repeat} --write docs/benchmarks.md`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; data: {meta.rows:,} 1-minute bars of {meta.instrument} "
        f"({meta.source}), {meta.first_date} to {meta.last_date}; DuckDB threads = 2, the same "
        "bars held in memory.",
        "",
        "| question | kind | Barb warm median (ms) | Barb first run (ms) | DuckDB median (ms) "
        "| Barb/DuckDB | previous run (ms) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for q, first, med, dmed in rows:
        duck = f"{dmed:.2f} | {med / dmed:.3f}" if dmed else "— | —"
        before = previous.get(q.name)
        was = f"{before:.2f} ({med / before - 1:+.0%})" if before else "new"
        lines.append(f"| {q.name} | {q.kind} | {med:.2f} | {first:.1f} | {duck} | {was} |")
    lines += [
        "",
        "Warm-up: the planner widens a period backwards by what its expressions read (exact for",
        "windows, until a recursive smoother's seed weighs < 1e-12, all history for running",
        "totals). Cost per question, the same plan timed with and without its warm-up:",
        "",
        "| question | bars in period | bars evaluated | with warm-up (ms) | without (ms) | cost |",
        "|---|---:|---:|---:|---:|---:|",
        *(
            f"| {name} | {inside:,} | {total:,} | {med:.2f} | {bare:.2f} | {med / bare:.2f}x |"
            for name, inside, total, med, bare in warmups
        ),
    ]
    lines += [
        "",
        "| chart | median render (ms) |",
        "|---|---:|",
        *(f"| {name} | {med:.1f} |" for name, med in charts),
        "",
        f"- Whole warm suite (questions with SQL): Barb {barb_total:.1f} ms vs DuckDB "
        f"{duck_total:.1f} ms (ratio {barb_total / duck_total:.3f}; target ≤ 0.25).",
        f"- Daily-and-longer questions: slowest Barb median "
        f"{max(r[2] for r in daily):.2f} ms (target < 10 ms each).",
        "- Minute-level questions: Barb/DuckDB ratios "
        + ", ".join(f"{r[2] / r[3]:.2f}" for r in minute)
        + " (target ≤ 1).",
        f"- Charts: slowest median {max(m for _, m in charts):.0f} ms (target < 300 ms).",
        f"- Cold start, new process to first answer: median {cold:.2f} s of 3 "
        f"({cold_runs}) (target < 2.5 s).",
        f"- Peak memory of a process running the whole suite: {peak:.0f} MB (target < 1024 MB).",
    ]
    text = "\n".join(lines)
    print()
    print(text)
    if args.write:
        write_section(args.write, "Engine", text)


def warmup_costs(instrument: str, repeat: int) -> list[tuple[str, int, int, float, float]]:
    """For each question whose period needs history: bars in the period and evaluated, and
    its time with the planned warm-up and with none (the old, history-cutting behaviour)."""
    import dataclasses

    from barb.interpreter import plan_query, run
    from barb.period_rows import bars_in_scope
    from barb.script.query import parse_query
    from barb.script.warmup import ROW
    from barb.settings import default_settings

    settings = default_settings()
    out = []
    for q in QUESTIONS:
        plan = plan_query(parse_query(q.barb), instrument, settings)
        if plan.reach.local or plan.period.everything:
            continue
        bare = dataclasses.replace(plan, reach=ROW)
        scope = bars_in_scope(plan)
        _, med = timed(lambda plan=plan: run(plan, settings), repeat)
        _, med_bare = timed(lambda bare=bare: run(bare, settings), repeat)
        inside = int(scope.in_period.sum())
        out.append((q.name, inside, len(scope.frame), med, med_bare))
    return out


def previous_medians(path: Path) -> dict[str, float]:
    """Warm medians of the last recorded run, by question, from the benchmarks page."""
    if not path.exists():
        return {}
    text = path.read_text()
    if "## Engine\n" not in text:
        return {}
    section = text.split("## Engine\n", 1)[1].split("\n## ", 1)[0]
    medians = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[1] in ("daily+", "minute", "indicator", "history"):
            try:
                medians[cells[0]] = float(cells[2])
            except ValueError:
                continue
    return medians


CHART_CASES = [
    ("grouped: range by weekday", QUESTIONS[0].barb),
    (
        "table: 4,500 daily bars + RSI",
        {"session": "RTH", "from": "daily", "map": {"rsi14": "rsi(close, 14)"}},
    ),
    ("scalar: count of gap days", QUESTIONS[1].barb),
    ("table: top 10 drops", QUESTIONS[2].barb),
    ("table: 5m bars of a month", {"session": "RTH", "from": "5m", "period": "2025-06"}),
]


def write_section(path: Path, title: str, body: str) -> None:
    """Replace (or append) the `## title` section of the benchmarks page."""
    from bench.doc_sections import replace_section

    replace_section(path, f"## {title}", f"## {title}\n\n{body}")


if __name__ == "__main__":
    main()

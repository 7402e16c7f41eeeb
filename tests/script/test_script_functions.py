"""Every row-wise built-in against an independent computation written out here.

The references are plain Python loops over lists, so they share no code (and no pandas
behaviour) with the implementations.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import statistics
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd
import pytest
from script_frames import make_context, make_daily

from barb.errors import QueryError, UnknownSession
from barb.script.context import EvalContext
from barb.script.evaluator import evaluate
from barb.script.library import library
from barb.script.parser import parse_expression

NAN = float("nan")


def run(text: str, ctx: EvalContext) -> list:
    return evaluate(parse_expression(text), ctx).tolist()


def same(actual: list, expected: list) -> None:
    assert len(actual) == len(expected)
    for i, (got, want) in enumerate(zip(actual, expected, strict=True)):
        if isinstance(want, float) and math.isnan(want):
            assert isinstance(got, float) and math.isnan(got), f"row {i}: {got} != nan"
        else:
            assert got == pytest.approx(want, rel=1e-9, abs=1e-9), f"row {i}: {got} != {want}"


def col(ctx: EvalContext, name: str) -> list[float]:
    return [float(v) for v in ctx.frame[name]]


def missing(v: float) -> bool:
    return math.isnan(v)


# --- scalar -------------------------------------------------------------------------------


def test_scalar_functions(ctx: EvalContext) -> None:
    gap = [c - o for c, o in zip(col(ctx, "close"), col(ctx, "open"), strict=True)]
    same(run("abs(close - open)", ctx), [abs(g) for g in gap])
    same(run("sign(close - open)", ctx), [NAN if missing(g) else (g > 0) - (g < 0) for g in gap])
    same(run("log(close - open)", ctx), [math.log(g) if g > 0 else NAN for g in gap])
    same(run("sqrt(close - open)", ctx), [math.sqrt(g) if g >= 0 else NAN for g in gap])
    same(run("round(close - open)", ctx), [half_up(g, 0) for g in gap])
    same(run("round(close, 1)", ctx), [half_up(c, 1) for c in col(ctx, "close")])
    same(run("round(volume / 3, -2)", ctx), [half_up(v / 3, -2) for v in col(ctx, "volume")])


def half_up(value: float, places: int) -> float:
    """Rounding as on paper: the decimal the number prints as, halves away from zero."""
    if missing(value):
        return NAN
    exponent = Decimal(1).scaleb(-places)
    return float(Decimal(repr(value)).quantize(exponent, rounding=ROUND_HALF_UP))


def test_round_halves() -> None:
    frame = pd.DataFrame({"x": [2.5, -2.5, 0.5, 1.005, 97.65, 1234.5, -0.04, NAN]})
    ctx = make_context(frame)
    same(run("round(x)", ctx), [3.0, -3.0, 1.0, 1.0, 98.0, 1235.0, -0.0, NAN])
    same(run("round(x, 2)", ctx), [2.5, -2.5, 0.5, 1.01, 97.65, 1234.5, -0.04, NAN])
    same(run("round(x, 1)", ctx), [2.5, -2.5, 0.5, 1.0, 97.7, 1234.5, -0.0, NAN])
    same(run("round(x, -2)", ctx), [0.0, -0.0, 0.0, 0.0, 100.0, 1200.0, -0.0, NAN])


def test_floor_and_ceil_to_a_step() -> None:
    """Buckets of a histogram, negatives included (round(x / 0.5 - 0.5) is off at -1.5),
    and a step that binary floats cannot hold (0.3 is 3 steps of 0.1, not 2)."""
    values = [1.26, -1.26, -1.5, 0.0, 0.3, -0.3, 7.0, NAN]
    frame = pd.DataFrame({"x": values})
    ctx = make_context(frame)
    for step in (0.5, 0.1, 10.0):
        expected = [float(Decimal(str(v)) // Decimal(str(step))) * step for v in values[:-1]]
        # Python's // on Decimal truncates toward zero; the floor of a negative goes lower.
        expected = [
            e - step if v < 0 and Decimal(str(v)) % Decimal(str(step)) != 0 else e
            for e, v in zip(expected, values[:-1], strict=True)
        ]
        same(run(f"floor(x, {step})", ctx), [*expected, NAN])
        up = [math.ceil(round(v / step, 9)) * step for v in values[:-1]]
        same(run(f"ceil(x, {step})", ctx), [*up, NAN])
    same(run("floor(x)", ctx), [1.0, -2.0, -2.0, 0.0, 0.0, -1.0, 7.0, NAN])


def _slot(text: str | None, step: int) -> str | None:
    """The ``step``-minute slot of a time of day, counted from midnight, as 'HH:MM'."""
    if text is None:
        return None
    hours, minutes = (int(part) for part in text.split(":"))
    start = (hours * 60 + minutes) // step * step
    return f"{start // 60:02d}:{start % 60:02d}"


def test_floor_of_a_time_of_day(intraday_ctx: EvalContext) -> None:
    """floor(time(), 30) is the bar's half hour as time() writes it, so that it groups and
    sorts as time() does (p38b Q24 could build no 'HH:MM' label); text of times of day (a
    first stage's column of them) floors the same."""
    times = [f"{h:02d}:{m:02d}" for h, m in zip(range(24), range(0, 60, 7), strict=False)]
    frame = pd.DataFrame({"t": [*times, "23:59", None], "close": 1.0})
    ctx = make_context(frame)
    for step in (30, 45, 1, 60):
        slots = evaluate(parse_expression(f"floor(t, {step})"), ctx)
        assert [None if pd.isna(v) else v for v in slots] == [_slot(t, step) for t in frame["t"]]
        assert slots.cat.ordered and slots.cat.categories[0] == "00:00"
    stamps = [pd.Timestamp(t) for t in intraday_ctx.frame["timestamp"]]
    slots = run("floor(time(), 90)", intraday_ctx)
    assert slots == [_slot(f"{s.hour:02d}:{s.minute:02d}", 90) for s in stamps]
    assert run("floor(time(), 90) == '19:30'", intraday_ctx) == [
        _slot(f"{s.hour:02d}:{s.minute:02d}", 90) == "19:30" for s in stamps
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("floor(dayname(), 30)", "floor() needs a number or a time of day ('09:30') for x"),
        ("floor(time(), 7.5)", "floor() of a time of day takes a step in whole minutes"),
        ("ceil(time(), 30)", "ceil() needs a number for x, got text: time()"),
    ],
)
def test_floor_of_other_text_is_refused(intraday_ctx: EvalContext, text: str, message: str) -> None:
    with pytest.raises(QueryError, match=re.escape(message)):
        run(text, intraday_ctx)


def test_if(ctx: EvalContext) -> None:
    """An unknown condition (close missing) picks neither branch: the value is empty."""
    known = up_or_unknown(ctx)
    assert None in known  # the fixture has missing closes
    words = run("if(close > open, 'up', 'down')", ctx)
    assert [None if missing_text(w) else w for w in words] == [
        None if u is None else "up" if u else "down" for u in known
    ]
    same(
        run("if(close > open, high, -1)", ctx),
        [
            NAN if u is None else h if u else -1.0
            for u, h in zip(known, col(ctx, "high"), strict=True)
        ],
    )
    assert conditions(run("if(close > open, true, false)", ctx)) == known
    assert conditions(run("if(close > open, true, close > open)", ctx)) == known
    same(
        run("if(close > open, 1, close > open)", ctx),
        [1.0 if u else NAN if u is None else 0.0 for u in known],
    )


def missing_text(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def up_or_unknown(ctx: EvalContext) -> list[bool | None]:
    """close > open per row; None (unknown) where either is missing."""
    pairs = zip(col(ctx, "close"), col(ctx, "open"), strict=True)
    return [None if missing(c) or missing(o) else c > o for c, o in pairs]


def conditions(values: list) -> list[bool | None]:
    """A condition's values with unknown (pandas' NA) as None."""
    return [None if v is pd.NA else bool(v) for v in values]


# --- lag ----------------------------------------------------------------------------------


def test_prev_and_next(ctx: EvalContext) -> None:
    close = col(ctx, "close")
    same(run("prev(close)", ctx), [NAN, *close[:-1]])
    same(run("prev(close, 3)", ctx), [NAN] * 3 + close[:-3])
    same(run("next(close, 2)", ctx), close[2:] + [NAN] * 2)
    up = up_or_unknown(ctx)
    assert conditions(run("prev(close > open)", ctx)) == [None, *up[:-1]]  # nothing before
    assert conditions(run("next(close > open, 2)", ctx)) == [*up[2:], None, None]
    names = run("dayname()", ctx)
    assert run("prev(dayname())", ctx)[1:] == names[:-1]


# --- window -------------------------------------------------------------------------------


def windowed(values: list[float], n: int, reduce) -> list[float]:
    """NaN until n values are there; NaN when the window holds a missing value."""
    out = []
    for i in range(len(values)):
        window = values[max(0, i - n + 1) : i + 1]
        if len(window) < n or any(missing(v) for v in window):
            out.append(NAN)
        else:
            out.append(float(reduce(window)))
    return out


@pytest.mark.parametrize("n", [1, 3, 7])
def test_rolling_windows(ctx: EvalContext, n: int) -> None:
    close = col(ctx, "close")
    same(run(f"rolling_mean(close, {n})", ctx), windowed(close, n, statistics.fmean))
    same(run(f"rolling_sum(close, {n})", ctx), windowed(close, n, math.fsum))
    same(run(f"rolling_max(close, {n})", ctx), windowed(close, n, max))
    same(run(f"rolling_min(close, {n})", ctx), windowed(close, n, min))
    expected_std = windowed(close, n, statistics.stdev) if n > 1 else [NAN] * len(close)
    same(run(f"rolling_std(close, {n})", ctx), expected_std)


def test_rolling_count(ctx: EvalContext) -> None:
    up = [float(c > o) for c, o in zip(col(ctx, "close"), col(ctx, "open"), strict=True)]
    same(run("rolling_count(close > open, 4)", ctx), windowed(up, 4, sum))


def percent_at_or_below(window: list[float]) -> float:
    """rank()'s percentile of the window's last value: the share of the window <= it."""
    return 100 * sum(v <= window[-1] for v in window) / len(window)


@pytest.mark.parametrize("n", [1, 3, 7])
def test_rolling_rank(ctx: EvalContext, n: int) -> None:
    same(run(f"rolling_rank(close, {n})", ctx), windowed(col(ctx, "close"), n, percent_at_or_below))
    # Volumes are whole hundreds: ties count as at or below, as in rank().
    volume = col(ctx, "volume")
    same(run(f"rolling_rank(volume, {n})", ctx), windowed(volume, n, percent_at_or_below))


def test_window_longer_than_data_is_all_nan() -> None:
    ctx = make_context(make_daily(5, gaps=False))
    assert all(math.isnan(v) for v in run("rolling_mean(close, 6)", ctx))
    assert all(math.isnan(v) for v in run("ema(close, 6)", ctx))


@pytest.mark.parametrize("n", [1, 2, 5, 10])
def test_ema_is_seeded_with_the_sma_like_talib(n: int) -> None:
    ctx = make_context(make_daily(40, gaps=False))
    close = col(ctx, "close")
    alpha = 2 / (n + 1)
    expected = [NAN] * (n - 1)
    value = sum(close[:n]) / n
    expected.append(value)
    for price in close[n:]:
        value = alpha * price + (1 - alpha) * value
        expected.append(value)
    same(run(f"ema(close, {n})", ctx), expected)


def test_ema_after_a_missing_start() -> None:
    ctx = make_context(make_daily(20, gaps=False))
    close = col(ctx, "close")
    # prev() leaves the first row empty: the seed is the mean of rows 1..3.
    got = run("ema(prev(close), 3)", ctx)
    same(got[:3], [NAN] * 3)
    assert got[3] == pytest.approx(sum(close[0:3]) / 3)
    assert got[4] == pytest.approx(0.5 * close[3] + 0.5 * got[3])


# --- cumulative -----------------------------------------------------------------------------


def cumulative(values: list[float], step) -> list[float]:
    out, acc = [], None
    for v in values:
        if missing(v):
            out.append(NAN)
            continue
        acc = v if acc is None else step(acc, v)
        out.append(acc)
    return out


def test_cumulative(ctx: EvalContext) -> None:
    close = col(ctx, "close")
    same(run("cummax(close)", ctx), cumulative(close, max))
    same(run("cummin(close)", ctx), cumulative(close, min))
    same(run("cumsum(close)", ctx), cumulative(close, lambda a, b: a + b))
    same(run("cumprod(close / prev(close))", ctx), cumulative(_ratios(close), lambda a, b: a * b))


def _ratios(close: list[float]) -> list[float]:
    pairs = zip([NAN, *close[:-1]], close, strict=True)
    return [NAN if missing(p) or missing(c) else c / p for p, c in pairs]


def test_exp_compounds_log_returns_and_coalesce_fills_the_empty(ctx: EvalContext) -> None:
    close = col(ctx, "close")
    logs = [NAN if missing(r) else math.log(r) for r in _ratios(close)]
    compounded = [NAN if missing(v) else math.exp(v) for v in cumulative(logs, lambda a, b: a + b)]
    same(run("exp(cumsum(log(close / prev(close))))", ctx), compounded)
    same(run("exp(1000)", ctx), [NAN] * len(close))  # past a float: empty, never inf
    ahead = run("coalesce(next(close), close)", ctx)
    pairs = zip([*close[1:], NAN], close, strict=True)
    same(ahead, [c if missing(n) else n for n, c in pairs])
    with pytest.raises(Exception, match="same kind"):
        run("coalesce(close, 'x')", ctx)


# --- pattern --------------------------------------------------------------------------------


def test_streak_and_bars_since(ctx: EvalContext) -> None:
    pairs = list(zip(col(ctx, "close"), col(ctx, "open"), strict=True))
    up = [c > o for c, o in pairs]
    # A row with a missing price is no observation: the run goes on past it, its own empty.
    streaks, run_length = [], 0
    for c, o in pairs:
        if missing(c) or missing(o):
            streaks.append(NAN)
            continue
        run_length = run_length + 1 if c > o else 0
        streaks.append(run_length)
    assert any(missing(v) for v in streaks)
    same(run("streak(close > open)", ctx), streaks)

    since, last = [], None
    for i, u in enumerate(up):
        if u:
            last = i
        since.append(NAN if last is None else float(i - last))
    same(run("bars_since(close > open)", ctx), since)


def test_pattern_edges() -> None:
    frame = pd.DataFrame({"x": [0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]})
    ctx = make_context(frame)
    assert run("streak(x > 0)", ctx) == [0, 0, 1, 2, 3, 0, 1]
    same(run("bars_since(x > 0)", ctx), [NAN, NAN, 0.0, 0.0, 0.0, 1.0, 0.0])
    assert run("streak(x > 5)", ctx) == [0] * 7
    same(run("bars_since(x > 5)", ctx), [NAN] * 7)


def test_a_streak_skips_unknown_rows() -> None:
    """An unknown condition is no observation, as an empty value is to cumsum(): the run
    neither grows nor ends there, and its count there is empty. A backtest's pnl emptied on
    the days without a trade (if(traded == 1, …, 0 / 0)) counts its losing trades in a row
    across them; read as false, each such day ended the run (p39a M1)."""
    x = [-1.0, NAN, -2.0, 3.0, NAN, -1.0, NAN, NAN, -4.0, 0.0, -1.0]
    frame = pd.DataFrame({"x": x})
    frame["timestamp"] = pd.to_datetime(["2024-01-02"] * 6 + ["2024-01-03"] * 5)
    frame["trading_date"] = frame["timestamp"]
    ctx = make_context(frame)
    # Counted one value at a time: an empty one leaves the run as it is.
    runs, run_length, restarts = [], 0, []
    for value in x:
        if missing(value):
            runs.append(NAN)
            continue
        run_length = run_length + 1 if value < 0 else 0
        runs.append(run_length)
    same(run("streak(x < 0)", ctx), runs)
    assert runs[8] == 2  # -1 on 01-02, two empty rows, -4: one run of 2
    # Per day: 01-03's run starts again at its first row, unknown or not.
    for i, value in enumerate(x):
        if i == 0 or frame["trading_date"][i] != frame["trading_date"][i - 1]:
            run_length = 0
        if missing(value):
            restarts.append(NAN)
            continue
        run_length = run_length + 1 if value < 0 else 0
        restarts.append(run_length)
    same(run("streak(x < 0, 'day')", ctx), restarts)
    assert restarts[8] == 1


def test_rank_is_a_percentile_rank(ctx: EvalContext) -> None:
    close = col(ctx, "close")
    present = [c for c in close if not missing(c)]
    expected = [
        NAN if missing(c) else 100 * sum(1 for o in present if o <= c) / len(present) for c in close
    ]
    same(run("rank(close)", ctx), expected)
    ranks = run("rank(range)", ctx)
    assert max(ranks) == 100


# --- time -----------------------------------------------------------------------------------


def test_time_functions_on_daily_bars(ctx: EvalContext) -> None:
    days = [pd.Timestamp(t).to_pydatetime() for t in ctx.frame["trading_date"]]
    names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    assert run("dayofweek()", ctx) == [d.weekday() for d in days]
    assert run("dayname()", ctx) == [names[d.weekday()] for d in days]
    assert run("day()", ctx) == [d.day for d in days]
    assert run("month()", ctx) == [d.month for d in days]
    assert run("year()", ctx) == [d.year for d in days]
    assert run("quarter()", ctx) == [(d.month - 1) // 3 + 1 for d in days]
    assert [t.to_pydatetime() for t in run("date()", ctx)] == days


def test_date_functions_use_the_trading_date(intraday_ctx: EvalContext) -> None:
    frame = intraday_ctx.frame
    stamps = [pd.Timestamp(t).to_pydatetime() for t in frame["timestamp"]]
    # A bar at 18:00 or later belongs to the next day's session (CME convention).
    trading = [(s + dt.timedelta(hours=6)).date() for s in stamps]
    assert stamps[1] == dt.datetime(2024, 3, 10, 19, 0)  # Sunday evening…
    assert run("dayname()", intraday_ctx)[1] == "Mon"  # …counts as Monday
    assert run("dayofweek()", intraday_ctx) == [d.weekday() for d in trading]
    assert run("day()", intraday_ctx) == [d.day for d in trading]
    assert [t.date() for t in run("date()", intraday_ctx)] == trading
    # hour() and minute() are the bar's own clock time.
    assert run("hour()", intraday_ctx) == [s.hour for s in stamps]
    assert run("minute()", intraday_ctx) == [s.minute for s in stamps]
    assert run("date() == '2024-03-11'", intraday_ctx) == [
        d == dt.date(2024, 3, 11) for d in trading
    ]


def test_dayname_groups_in_week_order(ctx: EvalContext) -> None:
    names = evaluate(parse_expression("dayname()"), ctx)
    assert list(names.cat.categories) == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    assert names.cat.ordered


# --- session --------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["open", "high", "low", "close", "volume"])
def test_session_values_follow_the_trading_date(intraday_ctx: EvalContext, field: str) -> None:
    bars = intraday_ctx.session_bars("RTH")
    lookup = {pd.Timestamp(d): float(v) for d, v in bars[field].items()}
    expected = [lookup.get(pd.Timestamp(d), NAN) for d in intraday_ctx.frame["trading_date"]]
    assert any(math.isnan(v) for v in expected)  # the first date has no RTH bar
    same(run(f"session_{field}('RTH')", intraday_ctx), expected)


def test_unknown_session(intraday_ctx: EvalContext) -> None:
    with pytest.raises(UnknownSession):
        run("session_open('XYZ')", intraday_ctx)


# --- registry -------------------------------------------------------------------------------


SEED_FUNCTIONS = [
    "abs",
    "log",
    "sqrt",
    "sign",
    "round",
    "if",
    "prev",
    "next",
    "rolling_mean",
    "rolling_sum",
    "rolling_max",
    "rolling_min",
    "rolling_std",
    "rolling_count",
    "rolling_rank",
    "ema",
    "cummax",
    "cummin",
    "cumsum",
    "streak",
    "bars_since",
    "rank",
    "mean",
    "sum",
    "max",
    "min",
    "std",
    "median",
    "count",
    "percentile",
    "correlation",
    "dayofweek",
    "dayname",
    "hour",
    "minute",
    "month",
    "year",
    "date",
    "day",
    "quarter",
    "session_open",
    "session_high",
    "session_low",
    "session_close",
    "session_volume",
]


def test_every_seed_function_is_registered_and_described() -> None:
    for name in SEED_FUNCTIONS:
        spec = library()[name]
        # One line for the model's reference: a sentence, short.
        assert spec.summary.endswith("."), name
        assert "\n" not in spec.summary and len(spec.summary) < 160, name


def test_results_are_aligned_with_the_frame(ctx: EvalContext) -> None:
    for name in ("rolling_mean(close, 3)", "ema(close, 3)", "streak(close > open)", "date()"):
        result = evaluate(parse_expression(name), ctx)
        assert result.index.equals(ctx.frame.index)
    assert isinstance(evaluate(parse_expression("session_open('ETH')"), ctx), pd.Series)
    # A count stays whole when every row is known; an unknown row's is empty (NaN).
    known = "streak(coalesce(close, 0) > coalesce(open, 0))"
    assert evaluate(parse_expression(known), ctx).dtype == np.int64
    assert evaluate(parse_expression("streak(close > open)"), ctx).isna().any()


def test_the_library_is_whole_whatever_was_imported_first() -> None:
    """The table is one explicit value: its size does not depend on import order."""
    import subprocess
    import sys

    script = (
        "import importlib, sys; importlib.import_module(sys.argv[1]); "
        "from barb.script.library import library; print(len(library()))"
    )
    modules = ["barb.script.functions", "barb.script.builtins", "barb.script.patterns", "barb"]
    sizes = {
        module: subprocess.run(
            [sys.executable, "-c", script, module], capture_output=True, text=True, check=True
        ).stdout.strip()
        for module in modules
    }
    assert set(sizes.values()) == {str(len(library()))}, sizes


def test_two_threads_building_the_library_at_once_both_get_it() -> None:
    """A process's first two queries, each on a worker thread (the bot's inline runner,
    ``barb eval``), both found the library unbuilt and both registered the patterns: the
    second failed its query with "function 'inside_day' registered twice". The build is
    slowed here so that both threads are inside it at once."""
    import subprocess
    import sys

    script = """
import threading, time
from barb.script import patterns
from barb.script.library import library
register = patterns.register_patterns
def slowly():
    time.sleep(0.3)
    register()
patterns.register_patterns = slowly
start, sizes, errors = threading.Barrier(2), [], []
def build():
    start.wait()
    try:
        sizes.append(len(library()))
    except Exception as error:
        errors.append(repr(error))
threads = [threading.Thread(target=build) for _ in range(2)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(errors, sizes)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"[] {[len(library())] * 2}"


def test_building_the_library_imports_no_scipy() -> None:
    """Every process builds the function table; wma's convolution imported scipy.signal with
    it, seconds of start-up on a loaded machine for a function few queries call. scipy is
    imported where it is used."""
    import subprocess
    import sys

    script = (
        "import sys; from barb.script.library import library; library(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

"""Reference texts for the model, generated from the single definitions in code.

The function list comes from the registry, the patterns from ``patterns.yaml``, the events
from the event catalog, the sessions from the instrument YAML, the session concepts (opening
range, initial balance…) from ``session_concepts.yaml`` and the examples from
``prompts/query_examples.yaml`` (each of which the test suite executes). Nothing here is a
second hand-written list that could drift. Every time of day that depends on the sessions
(the opening range, the hourly bars) is filled in from the instrument asked about.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from barb.absent_data import absent_data_text
from barb.bar_labels import BAR_LABELS
from barb.data.store import data_path
from barb.errors import UnknownEvent, available
from barb.events import concept_key, describe_event, event_catalog, events_reference
from barb.instruments import Instrument, available_instruments, load_instrument
from barb.result import (
    EDGE_ROWS,
    MAX_SHOWN_VALUES,
    WHOLE_ANY_ROWS,
    WHOLE_MAX_CELLS,
    WHOLE_MAX_NARROW_ROWS,
)
from barb.script.functions import FunctionSpec
from barb.script.indicator_forms import FAMILY_NAMES, form_text
from barb.script.indicator_functions import READ_PREVIOUS_CLOSE
from barb.script.library import OTHER_NAMES, indicator_lines, library
from barb.script.patterns import find_pattern, pattern_catalog
from barb.script.periods import PERIOD_FORMS
from barb.session_concepts import find_session_concept, session_concepts
from barb.session_times import WORDING_SYMBOL, SessionTimes, times_for
from barb.settings import PROJECT_ROOT, EngineSettings, default_settings
from barb.timeframes import DAILY_AND_LONGER, INTRADAY
from barb.yaml_text import load_yaml

EXAMPLES_FILE = PROJECT_ROOT / "prompts" / "query_examples.yaml"


_CATEGORY_TITLES = {
    "scalar": "Scalar",
    "lag": "Lag",
    "window": "Window (the last n rows, this one included; NaN until there are n)",
    "cumulative": "Cumulative",
    "pattern": "Sequence",
    "aggregate": "Aggregate (select only)",
    "time": "Time",
    "session": "Session (lag = trading dates back; one with no bar in the session is NaN "
    "(a window after an early close), skipped if RTH has none (Good Friday))",
}


class Example(BaseModel):
    question: str
    # The question as people of other languages are offered it (the example buttons), by
    # language; the model reads the English one beside its query.
    translations: dict[str, str] = {}
    query: dict[str, Any]
    # Examples use the default session; one that needs another says why (not shown).
    session_why: str | None = None

    def for_instrument(self, times: SessionTimes) -> Example:
        """The example with the instrument's times in place of its $placeholders."""
        return self.model_copy(
            update={"question": times.fill(self.question), "query": times.fill(self.query)}
        )


@cache
def query_examples(path: Path = EXAMPLES_FILE) -> tuple[Example, ...]:
    raw = load_yaml(path.read_text(encoding="utf-8"))
    return tuple(Example.model_validate(item) for item in raw)


def example_questions(
    examples: Sequence[Example], language: str, instrument: Instrument | None = None
) -> list[str]:
    """The example questions as a person is offered them: in their language, with their
    instrument's times (CL's opening range is not "$opening_range", nor NQ's 09:30-09:45)."""
    times = times_for(instrument)
    return [times.fill(e.translations.get(language, e.question)) for e in examples]


def _specs(category: str) -> list[FunctionSpec]:
    seen: dict[str, FunctionSpec] = {}
    for spec in library().values():
        if spec.category == category:
            seen.setdefault(spec.name, spec)
    return list(seen.values())


def _function_lines(times: SessionTimes) -> list[str]:
    lines = []
    for category, title in _CATEGORY_TITLES.items():
        lines.append(f"{title}:")
        specs = _specs(category)
        for spec in specs:
            if spec.listed_under is None:
                lines.append(f"  {_listed_signature(spec, specs)} — {times.fill(spec.summary)}")
    return lines


def _listed_signature(spec: FunctionSpec, specs: list[FunctionSpec]) -> str:
    """The signature of ``spec`` with the functions listed under it named beside it:
    "daily|weekly|monthly(expr, lag=1, [session])"."""
    family = [spec.name, *(s.name for s in specs if s.listed_under == spec.name)]
    return "|".join(family) + spec.signature().removeprefix(spec.name)


def query_reference(
    instrument: Instrument | None = None, settings: EngineSettings | None = None
) -> str:
    """Everything needed to write a query: format, functions, patterns, examples; ``settings``
    say where the data is, for the instrument the join example names."""
    sessions = ", ".join(instrument.sessions) if instrument else "see the instrument block"
    times = times_for(instrument)
    lines = [
        "QUERY FORMAT — a JSON object, every field optional. Steps, in order:",
        "session → from → join → map → period → where → group_by → select → sort → limit, "
        "then (a second stage, optional).",
        f"- instrument: {_instruments_text(instrument, settings)}",
        f"- session: {sessions}. Give it for daily+ bars (else the default). "
        "Any window 'HH:MM-HH:MM' (or 'HH:MM-HH:MM London': its clock) inside the "
        "trading day is a session too "
        f"('{times.opening_range}' = the 15-minute opening range; one from "
        f"{_day_start(instrument)} on, or crossing midnight, counts for the next trading date).",
        f"- from: {', '.join(INTRADAY)} (aligned to the session open), "
        f"{', '.join(DAILY_AND_LONGER)}.",
        "- period: " + "; ".join(PERIOD_FORMS) + ". Relative periods end at the last data date. "
        "A period selects rows, it never cuts history: prev(), rolling windows, indicators, "
        "patterns, streak and bars_since read the bars before it (RSI in 2024 reads all "
        "history); cumsum, cummax, cummin and rank start at the period's first bar, before "
        "where (rank the kept rows in then.map). group_by does NOT restart them, per does "
        "(day, week, month, quarter, year; each sees its whole unit): drawdown per year = "
        "min(close / cummax(close, 'year') - 1) by year(). Weekly+ bars count only when "
        "wholly inside the period. The data's last week/month/year is unfinished while the "
        "exchange trades in it: last_N_bars includes it, marked; other periods only when it "
        'is all they hold (wtd, mtd, ytd). "Last week" is last_week, not last_1_bars.',
        '- join: "fomc" or {"source": "fomc", "filter": "only" | "exclude"} — adds a true/false '
        "column named after the event (null where the calendar is unknown) and, on intraday "
        "bars, <event>_minutes from the release to the bar open. See get_events. "
        f"{_joined_bars_text(instrument, settings)} (matched on the bar's time, weekly+ on its "
        f"week/month…; unmatched bars are dropped). "
        f"{_joined_session_text(instrument, settings)} A list joins several.",
        '- map: {"name": "expression"} — new columns; later ones may use earlier ones.',
        "- where: a condition keeping rows; a group with no matching row does not appear (a "
        "year with none is missing, not 0): count(cond) without where keeps every group.",
        '- group_by: a column or expression, or a list ("year()", ["year()", "weekday"]).',
        '- select: aggregates ("mean(range)", ["count()", "percentile(range, 90) as p90"]) giving '
        "a number, several numbers or one row per group; or plain columns for a table. Names: "
        "mean(range) → mean_range, count() → count.",
        '- sort: "column desc" (a select name after group_by). limit: number of rows.',
        "- then: a second stage over the first stage's result table, with map, where, "
        "group_by, select, sort, limit over its columns (group keys and select names, or the "
        "rows' columns); in then.map an aggregate is over all rows: days / sum(days) * 100. "
        'Mean of each year\'s highest close: {"group_by": "year()", '
        '"select": "max(close) as top", "then": {"select": "mean(top)"}}.',
        "Columns: timestamp (bar open; the date for daily+), open, high, low, close, volume, "
        "range (= high - low), plus map/join columns. On US holidays (MLK, July 4, "
        "Thanksgiving…) futures trade a short session while stocks are shut: a trading date, "
        "a 'Monday', a month's first day, the next day's prev(); \"where\": \"not holiday()\" "
        "drops them, without renumbering: trading_day('month', 'stocks') counts the stock "
        "market's days (turn of month: trading_days_left('month', 'stocks') < 1 or "
        "trading_day('month', 'stocks') <= 3).",
        f"Sizes in {times.instrument.price_unit} (range, close - open, atr) over many years "
        "blend price levels; "
        "percent (range / open * 100) compares across years.",
        "EXPRESSIONS: + - * / % ** ; == != < <= > >= ; and or not ; x in ('Mon', 'Fri') ; "
        "numbers, 'text', true/false. Division by zero gives empty (NaN). A "
        "comparison with an empty value is unknown, as in SQL: where drops the row, "
        "mean(cond) and streak() skip it (days before SMA(200) exists). Intraday, "
        "prev()/next()/rolling_*/streak() cross sessions: close - prev(close) on a day's "
        "first bar is the overnight gap (a bar's own move: close - open); "
        "streak(cond, 'day') restarts daily.",
        "",
        "FUNCTIONS:",
        *_function_lines(times),
        "Indicators (rsi, macd, atr, vwap, …) work in map: see get_indicators.",
        # Named without their (), which the line's example shows, to leave room for the
        # concepts: a pattern written without () is an error whose hint adds them.
        'Named patterns (daily bars, use in where: "inside_day()"; details via get_concept):',
        "  " + ", ".join(pattern_catalog()),
        "Concepts (get_concept): " + ", ".join(session_concepts()) + ".",
        "TIES: first/last follow time order, in then too (the first stage's rows before its "
        "sort; groups: key order); then's cumsum/prev… follow that sort. arg_max/arg_min give "
        "ONE row per group, the earliest of equal values (mode: of equally frequent ones); "
        "counting bars at the day's high counts a day twice when two touch it. Hourly bars "
        "start at the session "
        f"open: {times.session}'s are {times.hourly_bars}; name them by time()"
        f"{times.hour_note}.",
        _midnight_line(times),
        "",
        *_result_lines(),
        "",
        "EXAMPLES:",
    ]
    for example in examples_for(instrument):
        lines.append(f"Q: {example.question}")
        lines.append(f"   {json.dumps(example.query, ensure_ascii=False)}")
    return "\n".join(lines)


def _instruments_text(instrument: Instrument | None, settings: EngineSettings | None) -> str:
    """The instruments a query may name, and what a move of 1.0 is worth on one contract of
    each: an NQ chat asked about CL's P&L multiplied by NQ's 20, not CL's 1,000 (p32e)."""
    settings = settings or default_settings()
    asking = instrument or load_instrument(WORDING_SYMBOL)
    others = [s for s in available_instruments(settings) if s != asking.symbol]
    each = [asking, *(load_instrument(symbol, settings) for symbol in others)]
    currencies = {i.currency for i in each}
    values = ", ".join(
        f"{i.symbol} {i.point_value:,g}" + ("" if len(currencies) == 1 else f" {i.currency}")
        for i in each
    )
    unit = f" {currencies.pop()}" if len(currencies) == 1 else ""
    names = ", ".join(f'"{i.symbol}"' for i in each)
    return (
        f"{names}… — omit it for the current instrument. Per contract a 1.0 move is {values}{unit}."
    )


def _day_start(instrument: Instrument | None) -> str:
    """The clock time a trading date begins at: '18:00' on CME's Globex products. A window
    '18:00-21:00' on 2026-01-06 was read as that evening's, not the 5th's."""
    return instrument.trading_day_start if instrument else "the trading day's start"


def _midnight_line(times: SessionTimes) -> str:
    """hour() * 60 + minute() restarts at midnight, inside a trading day that began the
    evening before: averaged over ETH it puts a 08:06 low at 12:30; ranked, place(t, 'day')
    <= 30 took 23:30-23:59 for ETH's last 30 minutes."""
    start = times.instrument.trading_day_start
    hour = times.instrument.trading_day_start_minute // 60
    return (
        "TIME OF DAY AS A NUMBER: hour() * 60 + minute() falls back to 0 at midnight. Over a "
        f"session from the {start} open (ETH, OVERNIGHT), average, compare or rank (rank, "
        f"place: a day's last 30 minutes are its 30 highest) times counted from that open: "
        f"if(hour() >= {hour}, hour() * 60 + minute() - 1440, hour() * 60 + minute())."
    )


def examples_for(instrument: Instrument | None) -> tuple[Example, ...]:
    """The examples as the model reads them, with the instrument's times."""
    times = times_for(instrument)
    return tuple(example.for_instrument(times) for example in query_examples())


def _result_lines() -> list[str]:
    labels = ", ".join(
        f"{label.column} {label.example}" + (f" ({label.meaning})" if label.meaning else "")
        for label in BAR_LABELS.values()
    )
    return [
        "RESULT: you read a summary; the person sees the full table, chart and CSV.",
        f"- Up to {WHOLE_ANY_ROWS} rows ({WHOLE_MAX_NARROW_ROWS} if rows × value columns ≤ "
        f"{WHOLE_MAX_CELLS}): every row, one a line, under a comma-separated "
        f"header (n/a = empty). Rows list at most {MAX_SHOWN_VALUES} value columns; "
        "'not listed:' names the rest.",
        f"- Bigger: the first {EDGE_ROWS} and the last {EDGE_ROWS} rows in the table's order, "
        "which the first line names (in time order, sorted by chg ascending, or by group "
        "key): first means top of that order, not earliest or best. Then each column's "
        "min/max (with its row)/mean; for groups, the highest and lowest group.",
        f"- Rows of daily+ bars start with their label: {labels}. Intraday rows: timestamp.",
        "- Rows show your select (else your map's columns), then your sort column; "
        "with neither, open, high, low, close. You read no other column: list them in select.",
        "- No noise warning is no proof of an edge.",
    ]


def _joined_bars_text(instrument: Instrument | None, settings: EngineSettings | None) -> str:
    """The instrument join's example, on another instrument than the asking one: an ES chat
    read '{"instrument": "ES"} adds ES bars', a join of ES onto itself."""
    asking = (instrument or load_instrument(WORDING_SYMBOL)).symbol
    other = _join_example_symbol(asking, settings or default_settings())
    if other is None:
        return '{"instrument": "<SYMBOL>"} adds another instrument\'s bars of the same timeframe'
    p = other.lower()
    return (
        f'{{"instrument": "{other}"}} adds {other} bars of the same timeframe as {p}_open, '
        f"{p}_high, {p}_low, {p}_close, {p}_volume"
    )


def _join_example_symbol(asking: str, settings: EngineSettings) -> str | None:
    """Another configured instrument, one with data first, and of those one whose default
    session has the asking instrument's hours (NQ for ES), so the example reads naturally."""
    others = [s for s in available_instruments(settings) if s != asking]
    if not others:
        return None
    hours = _main_hours(load_instrument(asking, settings))

    def rank(symbol: str) -> tuple[bool, bool]:
        has_data = data_path(symbol, settings).is_file()
        return (not has_data, _main_hours(load_instrument(symbol, settings)) != hours)

    return min(others, key=rank)  # min keeps the first of equals: the listing's order


def _main_hours(instrument: Instrument) -> str:
    return instrument.sessions[instrument.default_session].hours


def _joined_session_text(instrument: Instrument | None, settings: EngineSettings | None) -> str:
    """How a join reads the query's session on the other instrument, with the others' hours
    where they differ from this one's: an NQ chat planned "NQ's RTH beside CL's RTH" without
    knowing CL's RTH is 09:00-14:30 until the run warned of it."""
    if instrument is None:
        return (
            "A session NAME is read with each instrument's own hours; a window session "
            "('HH:MM-HH:MM') gives both the same clock hours."
        )
    settings = settings or default_settings()
    name = instrument.default_session
    hours = instrument.sessions[name].hours
    others = [
        _other_hours(instrument, load_instrument(symbol, settings))
        for symbol in available_instruments(settings)
        if symbol != instrument.symbol
    ]
    # The own-session example on an instrument of other hours, where one is configured.
    example = next((o.split(":")[0] for o in others if "same hours" not in o), "CL")
    night = "OVERNIGHT" if "OVERNIGHT" in instrument.sessions else name
    return (
        f"A session NAME is read with each instrument's own hours ({name} is {hours} for "
        f"{instrument.symbol}{''.join('; ' + o for o in others)}); a window session "
        f'(\'{hours}\') gives both the same clock hours. Daily+: {{"instrument": "{example}", '
        f'"session": "{night}"}} reads {example} in that session, by date ({example}\'s night '
        f"beside {instrument.symbol}'s {name} day)."
    )


def _other_hours(asking: Instrument, other: Instrument) -> str:
    """Another instrument's main sessions (the day's parts: those under its full day) as a
    join reads them, where they are not the asking one's, and the names it lacks: 'CL:
    OVERNIGHT 18:00-09:00, RTH 09:00-14:30…; no CASH, CASH_CLOSE'. The parts of those
    (RTH_OPEN, MORNING) follow them, and are left to the instrument's own block."""
    full_days = {key for key, spec in other.sessions.items() if spec.parent is None}
    differ = [
        f"{key} {spec.hours}"
        for key, spec in other.sessions.items()
        if spec.parent in full_days
        and key in asking.sessions
        and asking.sessions[key].hours != spec.hours
    ]
    missing = [key for key in asking.sessions if key not in other.sessions]
    if not differ and not missing:
        return f"{other.symbol}: the same hours"
    parts = [", ".join(differ) + "…"] if differ else []
    if missing:
        parts.append("no " + ", ".join(missing))
    return f"{other.symbol}: {'; '.join(parts)}"


def indicators_reference(instrument: Instrument | None = None) -> str:
    """The indicators, each with its signature, defaults and how to read it, with the
    instrument's own session times (vwap() starts at CL's 09:00 RTH open, NQ's 09:30)."""
    times = times_for(instrument)
    first_hour = times.hourly_bar(0)
    hour_start, hour_end = first_hour.split("-")
    main, whole = times.session, times.instrument.full_session
    lines = ["INDICATORS (use in map; each line of a multi-line indicator is its own function):"]
    for spec in _specs("indicator"):
        lines.append(f"- {spec.signature()} — {times.fill(spec.summary)}")
    lines += [
        "Warm-up rows are empty (NaN), never 0. Wilder smoothing for rsi/atr/adx, seeded as "
        "TA-Lib does. rsi(14) means rsi(close, 14).",
        f"{', '.join(sorted(READ_PREVIOUS_CLOSE))} read true range, which reaches back to the "
        "previous bar's close: on daily bars of a part of the day (RTH_OPEN, a window such as "
        f"'{first_hour}', OVERNIGHT) that is the session's close a day earlier, so they take in "
        "the hours between (first-hour ATR can be twice the first hour's range). The session's "
        "own size: range; its average: rolling_mean(range, 14).",
        "On intraday bars an indicator runs on the session's bars only, chained across days: "
        f"on '{first_hour}' 5m bars each day's {hour_start} bar follows the day before's last "
        f"5m bar of the window, not the bars before it on a chart. For the chart's values run "
        f'on {main} (or {whole}) and keep the window: "where": "time() >= \'{hour_start}\' and '
        f"time() < '{hour_end}'\".",
        "On intraday bars an indicator is the bar's own: atr(14) on 1m bars is a 1-minute "
        "ATR. The daily one, as of the previous close (a stop set at the open): "
        "daily(atr(14)); the daily SMA(20): daily(rolling_mean(close, 20)).",
        "Written with these, no function (get_concept gives each form): Williams %R, ROC, "
        "NATR, DEMA, TEMA, VWMA, Bollinger %B and bandwidth, A/D line, CMF, z-score, "
        "Ichimoku, relative volume. No ZigZag or Renko.",
        "SMA(n) is rolling_mean(close, n) (bollinger_middle(close, n) is the same line); a "
        "cross compares with prev(): golden cross = sma50 > sma200 and prev(sma50) <= "
        "prev(sma200) (get_concept golden cross).",
        'Example: {"session": "RTH", "from": "daily", "map": {"rsi14": "rsi(close, 14)"}, '
        '"where": "rsi14 < 30", "select": "count()"}',
    ]
    return "\n".join(lines)


def concept_names() -> list[str]:
    """Every name the concept lookup answers to: patterns, events, session concepts, aliases."""
    names = list(pattern_catalog()) + list(event_catalog()) + list(session_concepts())
    for pattern in pattern_catalog().values():
        names += list(pattern.aliases)
    for concept in session_concepts().values():
        names += list(concept.aliases)
    for spec in event_catalog().values():
        names += list(spec.aliases)
    return names


def describe_concept(name: str, instrument: Instrument | None = None) -> str:
    """A pattern's, an event's or a session concept's definition, in words and in Barb Script;
    also the instrument's sessions and the functions (ATR, SMA) a model may ask about."""
    key = concept_key(name.strip().removesuffix("()")).replace(" ", "_")
    patterns = pattern_catalog()
    pattern = find_pattern(name)
    if pattern is not None:
        return pattern.describe()
    concept = find_session_concept(name)
    if concept is not None:
        return concept.describe(times_for(instrument))
    try:
        return describe_event(name, instrument)
    except UnknownEvent:
        pass
    session = _session_text(key, instrument)
    if session is not None:
        return session
    function = _function_text(key, times_for(instrument))
    if function is not None:
        return function
    form = form_text(name.strip().removesuffix("()"))
    if form is not None:
        return form
    lines = indicator_lines(FAMILY_NAMES.get(key, key))
    if lines:  # the seed's bollinger(col, n, std): a function per line
        signatures = ", ".join(spec.signature() for spec in lines)
        return f"{name} in Barb Script: each line is its own function: {signatures}."
    # "max pain" was offered max drawdown, "open interest" the opening range (p38d Q8).
    absent = absent_data_text(name, instrument)
    if absent is not None:
        return f"'{name}' is outside Barb's data. {absent}"
    # Compared in one spelling, so that a near miss is offered under the name it is listed as.
    spellings = {concept_key(n): n for n in concept_names()}
    close = difflib.get_close_matches(concept_key(name), sorted(spellings), n=3, cutoff=0.5)
    known = available([*patterns, *event_catalog(), *session_concepts()])
    suggestion = f" Did you mean {', '.join(spellings[c] for c in close)}?" if close else ""
    return f"No concept called '{name}'.{suggestion} Known: {known}."


# What traders call the sessions the instrument YAML names, in English and Russian ("ASIAN
# session" is found by its own name).
SESSION_ALIASES = {
    "asia": "ASIAN",
    "asia session": "ASIAN",
    "азия": "ASIAN",
    "азиатская сессия": "ASIAN",
    "азиатская торговая сессия": "ASIAN",
    "europe": "EUROPEAN",
    "europe session": "EUROPEAN",
    "london session": "EUROPEAN",
    "европа": "EUROPEAN",
    "европейская сессия": "EUROPEAN",
    "европейская торговая сессия": "EUROPEAN",
    "лондонская сессия": "EUROPEAN",
    # The night's hours before the cash open, not the whole Globex day: ETH's range is two
    # thirds larger (ES 2025: 90.35 against 54.01).
    "ночная сессия": "OVERNIGHT",
    "ночная торговля": "OVERNIGHT",
    "овернайт": "OVERNIGHT",
    "overnight session": "OVERNIGHT",
    "американская сессия": "RTH",
    "основная сессия": "RTH",
    "регулярная сессия": "RTH",
}


def _session_text(key: str, instrument: Instrument | None) -> str | None:
    if instrument is None:
        return None
    name = SESSION_ALIASES.get(key.replace("_", " "), key.upper().removesuffix("_SESSION"))
    spec = instrument.sessions.get(name)
    if spec is None:
        return None
    about = f" ({spec.description})" if spec.description else ""
    return (
        f"{name} session of {instrument.symbol}: {spec.start} — {spec.end} exchange time{about}. "
        f'Use it as "session": "{name}"; its daily bars are one bar per trading date, and '
        f"session_high('{name}') and the like read them from any other session's bars."
    )


def _function_text(key: str, times: SessionTimes) -> str | None:
    """A function asked about by its name or by another tool's name for it (sma)."""
    spec = library().get(OTHER_NAMES.get(key, key))
    if spec is None or spec.body is not None:  # named patterns are described above
        return None
    text = f"{spec.signature()} — {times.fill(spec.summary).rstrip('.')}."
    if OTHER_NAMES.get(key):
        text = f"{key.upper()} in Barb Script is {text}"
    if spec.example:
        text += f" Example: {spec.example}"
    where = "get_indicators" if spec.category == "indicator" else "get_query_reference"
    return f"{text} (a function: see {where})."


__all__ = [
    "describe_concept",
    "events_reference",
    "examples_for",
    "indicators_reference",
    "query_examples",
    "query_reference",
    "times_for",
]

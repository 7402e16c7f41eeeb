"""``render_summary``: the text the model reads for a result, and nothing more.

A small table is written whole, compactly: one header line of column names, then one line
of comma-separated values per row, the bar label or group keys first. A bigger one gets its
first and last rows in the table's order (said in words), the stats of the query's columns,
each extreme named by its row ("max=23.95 (2020-10)"), and, for groups, the extreme groups.
Numbers carry no thousands separators (a year is 2023, not 2,023); counts in sentences do,
and agree with their noun ("1 row").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from barb.result import EDGE_ROWS, ColumnStats, Result, Summary, label_meaning, short_value


def count_text(n: int, noun: str) -> str:
    """``1 row``, ``4,512 rows``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def listed_text(texts: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} and {texts[-1]}"


def named_text(named: Sequence[str], total: int) -> str:
    """A few of ``total`` things named, the rest counted: "a, b, c" or "a, b, c and 4 more"."""
    more = total - len(named)
    return ", ".join(named) + (f" and {more:,} more" if more > 0 else "")


def either_text(texts: list[str]) -> str:
    """ "12:59", "12:59 or 13:14", "11:29, 12:59 or 13:14"."""
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} or {texts[-1]}"


def group_name(index: pd.Index, at: int, *, text_alone: bool = False) -> str:
    """Group ``at`` of a grouped result by its keys' names and values: "year 2008", "weekday
    Mon", "year 2024 month 3"; with ``text_alone`` a text value stands without its key's
    name, quoted ("'Wed'", "year 2024 'Wed'"), as a list of weekdays or times reads best:
    unquoted, groups 'high first' and 'low first' read "highest high first 262, lowest low
    first 255", as if about the market (p38b)."""
    values = index[at] if isinstance(index, pd.MultiIndex) else (index[at],)
    names = [name or "group" for name in index.names]
    return " ".join(
        f"'{value_text(value)}'"
        if text_alone and isinstance(value, str)
        else f"{name} {value_text(value)}"
        for name, value in zip(names, values, strict=True)
    )


def two_digits(value: float) -> str:
    """Two significant digits, for a standard error or a p: 8.6, 0.021, 140."""
    return f"{float(f'{value:.2g}'):g}"


def value_text(value: Any) -> str:
    """A value as the model reads it: rounded, no thousands separators."""
    value = short_value(value)
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.10g}" if abs(value) < 1e15 else str(value)
    return str(value)


def clock_reading(value: Any) -> str:
    """A time of day held as minutes, as a clock reads it: 551.1 is ``09:11``, -360 (counted
    from an evening open, before midnight) ``18:00``, 1,470 (counted past midnight)
    ``00:30``; '' for no number."""
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if not numeric or value != value or abs(value) == float("inf"):
        return ""
    minute = round(float(value)) % 1440
    return f"{minute // 60:02d}:{minute % 60:02d}"


def _clocked(value: Any, zone: str | None) -> str:
    """A value with its clock reading beside it: ``551.1 (09:11 ET)``; a cell's without the
    zone, which the note under the rows names."""
    text, reading = value_text(value), clock_reading(value)
    if not reading:
        return text
    return f"{text} ({reading} {zone})" if zone else f"{text} ({reading})"


def _cell(value: Any, clock: bool = False) -> str:
    text = _clocked(value, None) if clock else value_text(value)
    if any(c in text for c in ',"\n'):
        return '"' + text.replace('"', '""').replace("\n", " ") + '"'
    return text


def _stats_text(st: ColumnStats, zone: str | None = None) -> str:
    """``min=-22.16 (2008-04), max=23.95 (2020-10), mean=0.9023``: each extreme with the
    row it is on, by its label or group keys' values (their names head the listing), and
    how many more rows hold it: ``max=259 (2008 and 3 more)``. A column of times of day as
    minutes (on ``zone``'s clock) reads each as a time too: ``min=-360 (18:00 ET;
    2024-01-08)``."""
    text = (
        f"min={value_text(st.min)}{_at(st.min_at, st.min_ties, st.min, zone)}, "
        f"max={value_text(st.max)}{_at(st.max_at, st.max_ties, st.max, zone)}"
    )
    # No mean where it means nothing: a price's, or a ranking's top rows' (stages._unaveraged).
    if st.mean is None:
        return text
    mean = _clocked(st.mean, zone) if zone else value_text(st.mean)
    return f"{text}, mean={mean}"


def _at(keys: list[Any] | None, ties: int, value: Any = None, zone: str | None = None) -> str:
    reading = f"{clock_reading(value)} {zone}" if zone and clock_reading(value) else ""
    if not keys:
        return f" ({reading})" if reading else ""
    where = named_text([value_text(k) for k in keys], len(keys) + ties)
    return f" ({reading}; {where})" if reading else f" ({where})"


def _pairs(
    row: dict[str, Any],
    samples: dict[str, int] | None = None,
    clocks: dict[str, str] | None = None,
) -> str:
    """ "up_share=0.5248, mean_ret=0.06764 (each over 4,646 rows with a value), count=4647":
    the size said once after the last of the neighbours over the same rows (it had been said
    after each of three, p44a Q35)."""
    samples = samples or {}
    names = list(row)
    pairs = []
    for at, name in enumerate(names):
        size = samples.get(name)
        run = 1
        while at - run >= 0 and samples.get(names[at - run]) == size:
            run += 1
        after = samples.get(names[at + 1]) if at + 1 < len(names) else None
        # A run after another statistic is named: "count=259, above=0, share=0 (each over
        # 60 rows …)" read as if count were over the 60 too (p47c G).
        named = names[at - run + 1 : at + 1] if run > 1 and at - run >= 0 else []
        over = "" if size is None or after == size else _over(size, each=run > 1, named=named)
        zone = (clocks or {}).get(name)
        value = _clocked(row[name], zone) if zone else value_text(row[name])
        pairs.append(f"{name}={value}{over}")
    return ", ".join(pairs)


def _over(size: int, *, each: bool = False, named: list[str] | None = None) -> str:
    """A statistic over fewer rows than matched says how many: " (over 60 rows with a
    value)"; of several, " (each over …)", or with their names after another statistic,
    " (above and share over …)"."""
    which = f"{listed_text(named)} " if named else "each " if each else ""
    return f" ({which}over {count_text(size, 'row')} with a value)"


def _rows_block(s: Summary) -> list[str]:
    """The header and the listed rows; a marker where the middle of a big table is left out."""
    shown = s.shown or []
    clocked = [name in s.clocks for name in shown]

    def line(row: list[Any]) -> str:
        return ",".join(_cell(v, c) for v, c in zip(row, clocked, strict=False))

    lines = [",".join(shown)]
    lines += [line(row) for row in s.top or []]
    if s.bottom:
        left_out = (s.rows or 0) - len(s.top or []) - len(s.bottom)
        if left_out > 0:
            noun = "more group" if s.type == "grouped" else "more row"
            lines.append(f"… {count_text(left_out, noun)} …")
        lines += [line(row) for row in s.bottom]
    if s.unlisted:
        lines.append(f"not listed: {', '.join(s.unlisted)} — select fewer columns to read them")
    named = [name for name in shown if name in s.clocks]
    rows = [*(s.top or []), *(s.bottom or [])]
    if named and rows:
        at = [shown.index(name) for name in named]
        values = [row[i] for row in rows for i in at if i < len(row)]
        evening = any(isinstance(v, int | float) and v < 0 for v in values)
        lines.append(_clock_note(named, s.clocks[named[0]], evening))
    return lines


def _clock_note(names: list[str], zone: str, evening: bool) -> str:
    """What the numbers of ``names`` are: "hi_t: times of day as minutes after midnight
    ET, each with its time (570 is 09:30; below 0, the evening before: -360 is 18:00)."."""
    before = "; below 0, the evening before: -360 is 18:00" if evening else ""
    return (
        f"{listed_text(names)}: times of day as minutes after midnight {zone}, each with its "
        f"time (570 is 09:30{before})."
    )


def _listing(s: Summary) -> str:
    if s.whole:
        if (s.rows or 0) > 1:
            return f", {s.order}, all shown:"
        # The top one of a sorted list: say which end it is.
        return f", {s.order}:" if (s.order or "").startswith("sorted") else ":"
    return f", {s.order}; the first {EDGE_ROWS} and the last {EDGE_ROWS} in that order:"


def _table_lines(s: Summary, timeframe: str) -> list[str]:
    rows = s.rows or 0
    head = f"Result: {count_text(rows, 'row')}"
    if s.label:
        head += f" of {timeframe} bars"
        meaning = label_meaning(s, timeframe)
        if meaning:
            head += f" ({s.label} = {meaning})"
    if not rows:
        return [head + "."]
    lines = [head + _listing(s), *_rows_block(s)]
    # Of the rows a limit listed, said: "mean: gap_pct=-1.331" under the 3 latest of 504
    # gaps read as all 504's (p48d C6).
    listed = (
        f" of the {rows:,} rows listed, not of all {s.limited_from:,}" if s.limited_from else ""
    )
    if s.whole:
        lines += _means(s, f"mean{listed}")
    else:
        if listed and s.stats:
            lines.append(f"Figures{listed}:")
        lines += [f"{name}: {_stats_text(st, s.clocks.get(name))}" for name, st in s.stats.items()]
    return lines


def _means(s: Summary, title: str) -> list[str]:
    """Every row is listed, so min and max are in sight; the mean is not. In the columns'
    order, of the columns with a mean worth saying (``barb.stages``: none of a price)."""
    shown = s.shown or []
    names = sorted(s.stats, key=lambda k: shown.index(k) if k in shown else len(shown))
    means = [f"{k}={value_text(s.stats[k].mean)}" for k in names if s.stats[k].mean is not None]
    if (s.rows or 0) < 2 or not means:
        return []
    return [f"{title}: " + ", ".join(means)]


def _grouped_lines(s: Summary) -> list[str]:
    rows = s.rows or 0
    head = f"Result: {count_text(rows, 'group')} by {', '.join(s.by or [])}"
    if not rows:
        return [head + "."]
    lines = [head + _listing(s), *_rows_block(s)]
    if s.whole:
        # No mean of the groups' values: it is not the overall figure (a mean of yearly
        # shares weights a four-day year like a whole one), and a model would read it so.
        return lines
    # The compared column's extreme groups whole, then every column's extremes by group.
    for name in list(s.stats)[:1]:
        if s.max:
            lines.append(f"highest {name}: {_pairs(s.max, clocks=s.clocks)}")
        if s.min:
            lines.append(f"lowest {name}: {_pairs(s.min, clocks=s.clocks)}")
    lines += [
        f"{name} across groups: {_stats_text(st, s.clocks.get(name))}"
        for name, st in s.stats.items()
    ]
    if s.left_out:
        lines.append(
            "Highest, lowest and the figures across groups are of whole groups, leaving out "
            + ", ".join(s.left_out)
            + "."
        )
    return lines


def render_summary(result: Result) -> str:
    """The short text the model reads: the answer, never more than a few dozen lines."""
    if result.error is not None:
        err = result.error.to_dict()
        text = f"Error ({err['error_type']}, step {err['step']}): {err['message']}"
        if err.get("hint"):
            text += f"\nHint: {err['hint']}"
        return text
    s, m = result.summary, result.metadata
    assert s is not None and m is not None
    lines: list[str] = []
    if s.type == "scalar":
        name = s.columns[0] if s.columns else "value"
        size = s.samples.get(name)
        over = "" if size is None else _over(size)
        zone = s.clocks.get(name)
        value = _clocked(s.value, zone) if zone else value_text(s.value)
        lines.append(f"Result: {name} = {value}{over}")
    elif s.type == "dict":
        lines.append("Result: " + _pairs(s.values or {}, s.samples, s.clocks))
    elif s.type == "table":
        lines += _table_lines(s, m.timeframe)
    else:
        lines += _grouped_lines(s)
    if m.record_run:  # when the record was: the rows behind it are in the CSV only
        lines.append(f"Record: {m.record_run}.")
    period = f"{m.period_start} — {m.period_end}" if m.period_start else "no bars"
    # "ASIAN (18:00-03:00 ET)", "09:30-09:45 ET", "10:00-11:00 Europe/Moscow": the clock.
    clock = f" {m.session_clock}" if m.session_clock else ""
    hours = f"{m.session_hours}{clock}" if m.session_hours else None
    session = m.session + ("" if m.session_hours else clock)
    session += "".join(f" ({t})" for t in (hours, m.session_note) if t)
    scanned = count_text(m.rows_scanned, f"{m.timeframe} {session} bar")
    lines.append(f"Scanned {scanned} of {m.instrument}, {period}; {m.rows_matched:,} matched.")
    if m.data_source == "synthetic":
        lines.append("Data: SYNTHETIC sample, not market history; say so in the answer.")
    lines.extend(f"Warning: {w}" for w in m.warnings)
    return "\n".join(lines)

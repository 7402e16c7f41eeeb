"""The headline: the number the chart proves, in one line of the person's language.

It is the chart's title and the photo's caption, so the picture and the message say the same
thing: ``r = 0.81 (on_range vs range)``, ``atr14 now: 412.5 points (2026-01-07)``,
``count: most often 2022 41 days, least often 2017 0 days``.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd

from barb.charts.answers import (
    CORRELATION,
    Aggregate,
    answer_text,
    answer_value,
    one_column_answers,
    read_aggregates,
    word_unit,
)
from barb.charts.calendar_values import calendar_headline
from barb.charts.columns import (
    bar_labels,
    column_name,
    dated_by_label,
    first_numeric,
    floats,
    is_number,
    latest_known,
    row_kind,
    time_column,
    timeframe,
    unit,
)
from barb.charts.events import events_headline, picked_periods_headline, read_events
from barb.charts.grouped import (
    Groups,
    answer_column,
    below_zero,
    held_label,
    is_count,
    keyed_rows,
    ranked_column,
    read_groups,
    tie_key_texts,
    tied_rows,
    value_texts,
    with_parts,
)
from barb.charts.header import Headline
from barb.charts.kinds import (
    Latest,
    calendar_labels,
    is_now,
    latest,
    latest_asked,
    ranked_lowest_first,
    running_columns,
    sorted_column,
    unshown_sort,
)
from barb.charts.many_groups import MAX_TIED_NAMED, tied, too_many_to_draw
from barb.charts.one_row import card_values, value_text
from barb.charts.rows import calendar_names, headline_columns, plain_candles, tied_places
from barb.charts.side_by_side import series_extremes
from barb.charts.tick_values import column_decimals, unit_numbers, unit_text
from barb.charts.time_of_day import part_text, time_kind, value_kind
from barb.charts.value_text import date_text, format_value, number_text, with_unit
from barb.charts.words import Words, words_for
from barb.column_units import (
    COUNTED_ROWS,
    PERIOD_KEYS,
    PRICE,
    price_ratio,
    stage_rows,
)
from barb.i18n import N_
from barb.lineage import called_key_names, group_key_names
from barb.result import Result
from barb.time_keys import text_clock_zone, zoned_clock, zoned_hour

MAX_ANSWERS = 3
# Groups within noise of an extreme named beside it; more are counted, their values spanned.
MAX_NEAR_NAMED = 2
_ARG_OF = {"max": "arg_max", "min": "arg_min"}  # an extreme, and the call finding its row
_YEAR = re.compile(r"^(19|20)\d\d$")
_NAME = re.compile(r"^\w+$")  # a key the query named, not a condition
_NUMBER = re.compile(r"^-?[\d.,\u00a0 ]+$")
_DOT = "\u00a0· "  # the marks' "·" ending a line of the title, not starting the next


def chart_headline(result: Result, language: str | None = "en") -> str | None:
    """The headline of an answered result; None for an error or for groups too many to
    draw (``too_many_to_draw``), whose headline would read every one of them."""
    if not result.ok or result.summary is None or too_many_to_draw(result) is not None:
        return None
    return headline(result.for_chart(), words_for(language))  # as the chart draws it


def headline(result: Result, words: Words) -> str:
    return headline_forms(result, words)[0]


def headline_forms(result: Result, words: Words) -> list[str]:
    """The headline in full (the caption), then shorter forms saying the same numbers, for
    a chart whose two bold lines the full one overflows: a cut ran "mean_range: highest no
    quad_witching 35.7 points…" and lost the lowest, the number being compared."""
    summary = result.summary
    assert summary is not None
    if summary.type in ("scalar", "dict"):
        answers = _answers(result, words)
        # Answers of one unit with it said once, last: three statistics of the range in
        # Russian ran past three lines and lost the third (the 90th percentile).
        short = _answers(result, words, unit_once=True)
        aggs = read_aggregates(result)
        shortest = one_column_answers(_shown_answers(aggs, result), result, words)
        # A streak record begun before the period says so in the caption; a chart short of
        # room says it under its subtitle instead (``header.cut_run_text``).
        began = _run_began(result, words)
        forms = [f"{answers} {began}", answers, short] if began else [answers, short]
        if shortest is not None:
            forms.append(shortest)
        return list(dict.fromkeys(forms))
    if summary.type == "grouped" or keyed_rows(result):
        return _groups(result, words)
    return _rows(result, words)


#: A period written as one year, month or day ("2025", "2025-07", "2025-07-01").
_CALENDAR_PERIOD = re.compile(r"^\d{4}(-\d{2}){0,2}$")


def _nothing_matched(result: Result, words: Words) -> str | None:
    """What a result no row matched says: ``nothing matched (0 of 23 days, 2025-07)``, what
    was searched and found empty; None when nothing was scanned. "average range = n/a
    points" and "0 rows" read as an answer, in the engine's words."""
    meta = result.metadata
    if meta is None:
        return None
    if meta.then_rows is not None and not meta.then_rows[0] and meta.then_rows[1]:
        # A then where that kept none of the first stage's rows (12 months of 2024 whose
        # mean RSI is under 0.3) is as empty as a first where's: "0 rows", "m = n/a" read
        # as answers. Its rows are the first stage's: months, days, groups.
        scanned = meta.then_rows[1]
        kind, groups = stage_rows(result.query, meta.timeframe)
        if not group_key_names(result.query):  # a listing's rows are its bars
            kind, groups = meta.timeframe, False
        rows = words.of_rows(kind, scanned, groups=groups) or words.of_rows("bars", scanned)
    elif meta.rows_matched or not meta.rows_scanned:
        return None
    else:
        scanned = meta.rows_scanned
        rows = words.of_rows(meta.timeframe, scanned) or words.of_rows("bars", scanned)
    period = meta.period_requested
    if not period or not _CALENDAR_PERIOD.match(period):
        # A year, a month or a day as written; any other period as the dates it covered:
        # «0 из 7 дней, last_10_days» and «2025-12-29:2026-01-07» were the query's tokens
        # in a Russian headline (f49g).
        first, last = meta.period_start, meta.period_end
        period = f"{first} — {last}" if first and last and first != last else str(first or "")
    return words(
        "nothing_matched",
        scanned=number_text(scanned, 0, words),
        rows=rows,
        period=period,
    )


def _no_value(value: object) -> bool:
    """Whether an answer's value is missing (a mean of no rows)."""
    return value is None or (isinstance(value, float) and value != value)


def _answers(result: Result, words: Words, *, unit_once: bool = False) -> str:
    """The answers, joined; ``unit_once``: an answer followed by one in the same unit word
    written without it ("average range = 364.56 · median range = 343.50 points")."""
    now = latest(result)
    parts = []
    aggs = read_aggregates(result)
    if aggs and all(_no_value(a.value) for a in aggs):
        nothing = _nothing_matched(result, words)
        if nothing is not None:
            return nothing
    times = _times_of(aggs, result)
    shown = _shown_answers(aggs, result)
    for at, agg in enumerate(shown):
        when = times.get(id(agg))
        if when is not None:  # "high = 25,804.25 (09:32)": the level and when it was
            value = answer_value(when, result, words)
            parts.append(f"{answer_text(agg, result, words)} ({value})")
        elif agg.func in CORRELATION:
            r = format_value(agg.value, decimals=2, words=words)
            x, y = (a or "?" for a in (*agg.args, None, None)[:2])
            parts.append(words("correlation", r=r, x=x, y=y))
        elif agg.func == "last" and now is not None and agg.column == now.column:
            parts.append(_now_text(result, now, answer_value(agg, result, words), words))
        else:
            # The next answer says this one's unit word: "364.56 · … = 343.50 points".
            own = word_unit(agg, result) if unit_once else None
            after = shown[at + 1] if at + 1 < len(shown) else None
            said_next = own is not None and after is not None and own == word_unit(after, result)
            parts.append(answer_text(agg, result, words, with_word=not said_next))
    return " · ".join(parts)


def _shown_answers(aggs: list[Aggregate], result: Result) -> list[Aggregate]:
    """Of ``aggs``, the answers a headline says: not the time of an extreme it says beside
    it, and of more than ``MAX_ANSWERS`` the first but a bare count (the footer says the
    rows)."""
    paired = {id(t) for t in _times_of(aggs, result).values()}
    answers = [a for a in aggs if id(a) not in paired]
    if len(answers) > MAX_ANSWERS:
        answers = [a for a in answers if not (a.func == "count" and not a.args)] or answers
    return answers[:MAX_ANSWERS]


def _run_began(result: Result, words: Words) -> str:
    """'(run began 2024-12-23, before the period; within it: 6, to 2025-05-22)' for a streak
    record (a max() the answer holds) that streak() counted from before the period
    (``Metadata.cut_runs``), as the chart's subtitle says it: the caption "max_run = 7
    days" alone had read as 2025's own (p48i item 4). "" for any other answer."""
    meta = result.metadata
    if meta is None:
        return ""
    records = {a.value for a in read_aggregates(result) if a.func == "max"}
    for run in meta.cut_runs:
        if run.began is not None and run.inside is not None and run.length in records:
            inside = number_text(run.inside, 0, words)
            return words(
                "answer.run_began", began=run.began, inside=inside, inside_end=run.inside_end
            )
    return ""


def _times_of(aggs: list[Aggregate], result: Result) -> dict[int, Aggregate]:
    """Each extreme's time of day, when the select found both (``max(high) as high`` and
    ``arg_max(time(), high) as high_time``), by the extreme's id: written as one answer,
    today's high and low with their times fit the title, where four answers lost the low."""
    found: dict[int, Aggregate] = {}
    for agg in aggs:
        pick = _ARG_OF.get(agg.func)
        if pick is None or agg.column is None:
            continue
        for other in aggs:
            if (
                other.func == pick
                and len(other.args) == 2
                and other.args[1] == agg.column
                and time_kind(other.name, result.query, [other.value]) is not None
                and all(other is not t for t in found.values())
            ):
                found[id(agg)] = other
                break
    return found


def _now_text(result: Result, now: Latest, value: str, words: Words) -> str:
    date = _row_when(result, now.rows, now.at, words)
    name = column_name(now.column, result, words)
    if not is_now(result, now):  # the last golden cross, a past period's last value
        return words("last_value", name=name, value=value, date=date)
    return words("now_on", name=name, value=value, date=date)


def _row_label(result: Result, rows: pd.DataFrame, at: int) -> str:
    names = bar_labels(rows, result)
    if names is not None and names[at] is not None:
        return str(names[at])
    time_col = time_column(rows)
    return date_text(rows[time_col].iloc[at]) if time_col else str(at + 1)


def _row_when(result: Result, rows: pd.DataFrame, at: int, words: Words) -> str:
    """The row's label as the bracket after a value says when it was: a weekly bar as the
    week of its first trading date. "close last: 57.41 (2026-01-05)" gave the week's label
    as if it were the close's date, which was 2026-01-07."""
    if time_column(rows) is None and bar_labels(rows, result) is None:
        named = calendar_names(result, rows, words)  # monthly 2025 with month(): "Dec"
        if named is not None:
            return named[at]
    label = _row_label(result, rows, at)
    if timeframe(result) == "weekly" and bar_labels(rows, result) is not None:
        return words("week_of", label=label)
    return label


def _groups(result: Result, words: Words) -> list[str]:
    groups = read_groups(result, words)
    if groups is not None and len(groups.by) == 1:
        # Times of day on another clock than the exchange's name it, as their axis does:
        # «дни: чаще всего 17:30 949 дней» of time('Moscow') read as New York's 17:30.
        key, query = groups.by[0], result.query
        zone = zoned_clock(key, query) or text_clock_zone(key, query) or zoned_hour(key, query)
        if zone is not None:
            named = words.clock(zone)
            groups = replace(groups, labels=[f"{label} ({named})" for label in groups.labels])
    if groups is None:
        placed = calendar_headline(result, words)  # the year of each month's best day
        if placed is not None:
            return [placed]
        count = len(result.table) if result.table is not None else 0
        nothing = _nothing_matched(result, words) if not count else None
        if nothing is not None:
            return [nothing]
        return [words("rows_shown", count=format_value(count, words=words))]
    column = ranked_column(groups, result) if groups.ranked else answer_column(groups, result)
    values = floats(groups.table[column])
    kind = value_kind(column, result, values)
    value_unit = unit(column, result)
    # At the bars' one precision (``shared_decimals``), which keeps a percent's two
    # decimals: "Jul 2.092%" over a bar's "2.09%" read as two numbers (p47d D8).
    numbers = value_texts(values, value_unit, kind, words, result)
    texts = numbers
    if kind is None:
        texts = [with_unit(t, value_unit, words, v) for t, v in zip(numbers, values, strict=True)]
    bare = with_parts(numbers, groups, column, result, words)
    texts = with_parts(texts, groups, column, result, words)
    below = below_zero(values)
    name = column_name(column, result, words)
    if groups.ranked:
        at = groups.first_ranked()  # a whole group, not the open one before it
        first, value = groups.named(at, words), texts[at]
        if ranked_lowest_first(result, column):
            return Headline(
                [
                    words.ranked_lowest(below_zero=below, name=name, label=first, value=value),
                    words.ranked_lowest(below_zero=below, short=True, label=first, value=value),
                ],
                name,
            )
        forms = [
            words("ranked_first", name=name, label=first, value=value),
            words("ranked_first_short", label=first, value=value),
        ]
        tie = _cut_tie_text(groups, texts, result, words)
        if tie and len(groups.table) - 1 == at:  # the first is the tie: "#1 Feb 5, tied with Mar"
            return Headline([f"{name}: {tie}", *forms], name)
        return Headline([f"{forms[0]} · {tie}", *forms] if tie else forms, name)
    count = is_count(column, result)
    paired = _yes_no_series_form(groups, (column, name), values, result, words)
    if paired is not None:
        return Headline([paired], name)
    if groups.layout is not None and not groups.one_clock:
        forms = _series_forms(groups, name, (texts, bare), values, words, count=count, below=below)
        if forms:
            return Headline(forms, name)
    high, low = groups.extremes(values, numbers)
    two = _yes_no_forms(groups, (column, name), (texts, bare), result, words)
    if two:
        return Headline(two, name)
    if not high:  # a whole group's value first: a part week is no week's answer
        named = np.flatnonzero(groups.compared(values))
        finite = np.flatnonzero(np.isfinite(values))
        at = int(named[0]) if len(named) else int(finite[0]) if len(finite) else 0
        return [words("answer", name=f"{name} ({groups.named(at, words)})", value=texts[at])]
    if column in groups.even:
        untested = column in groups.untested
        return Headline(
            _even_forms(groups, name, (high, low), (texts, bare), words, untested=untested), name
        )
    return Headline(
        _extreme_forms(
            groups, (column, name), (high, low), (texts, bare), words, count=count, below=below
        ),
        name,
    )


def _yes_no_forms(
    groups: Groups,
    named: tuple[str, str],
    texts: tuple[list[str], list[str]],
    result: Result,
    words: Words,
) -> list[str]:
    """Two groups by a yes/no key compared, not ranked: ``average range: fomc days 90.03
    vs other days 74.35 points`` («в дни fomc 90,03 против 74,35 пункта в остальные дни»);
    of rows that are no days, ``fomc: yes 90.03 vs fomc: no 74.35 points``; with "(within
    noise)" when the test across them says so. "highest fomc: yes …, lowest fomc: no" read
    as a ranking of two, and «больше всего fomc: да» as no Russian. Empty for any other
    groups."""
    column, name = named
    full, bare = texts
    table = groups.table
    if len(groups.by) != 1 or len(table) != 2 or groups.layout is not None or groups.ranked:
        return []
    keys = table[groups.by[0]].tolist()
    if not all(isinstance(k, (bool, np.bool_)) for k in keys) or keys[0] == keys[1]:
        return []
    yes, no = (0, 1) if keys[0] else (1, 0)
    if groups.part_rows() or not np.isfinite(floats(table[column])).all():
        return []
    key = groups.labels[yes].split(":")[0]  # "fomc: yes" names the key as the query did
    forms = []
    for last in (full, bare):  # and shorter, the unit left to the axis
        # "fomc days", never "fh > 0 days": a condition is named with its yes and no
        if row_kind(result) == ("daily", False) and _NAME.match(key):
            forms.append(words("compared_days", name=name, event=key, yes=bare[yes], no=last[no]))
        else:
            yes_text, no_text = (f"{groups.labels[at]} {bare[at]}" for at in (yes, no))
            no_text += last[no][len(bare[no]) :]
            forms.append(words("compared_two", name=name, yes=yes_text, no=no_text))
    # Shortest: yes and no alone, the key named by the subtitle's "by".
    flags = (words("flag.yes"), words("flag.no"))
    yes_text, no_text = (f"{flag} {bare[at]}" for flag, at in zip(flags, (yes, no), strict=True))
    forms.append(words("compared_two", name=name, yes=yes_text, no=no_text))
    if column in groups.even:
        forms = [words("compared_within_noise", compared=form) for form in forms]
    return list(dict.fromkeys(forms))


def _yes_no_series_form(
    groups: Groups,
    named: tuple[str, str],
    values: np.ndarray,
    result: Result,
    words: Words,
) -> str | None:
    """Periods by a yes/no key of days, side by side, as the comparison asked: ``average
    range: nfp days higher in 9 of 18 years`` («в дни nfp выше в 9 из 18 лет»), the
    periods whole and holding both. CL's range by year and NFP day was headlined with each
    series' extreme years ("nfp: no — highest 2008 3.50 …; nfp: yes — highest 2008 4.34
    …"), which nobody asked; None for any other groups."""
    column, name = named
    by, table = groups.by, groups.table
    if groups.layout is None or len(by) != 2:
        return None
    keys = table[by[1]]
    if not all(isinstance(k, (bool, np.bool_)) for k in keys) or keys.nunique() != 2:
        return None
    event = str(by[1])
    kind = PERIOD_KEYS.get(by[0]) if by[0] in called_key_names(result.query) else None
    if row_kind(result) != ("daily", False) or not _NAME.match(event) or kind is None:
        return None
    whole = np.ones(len(table), dtype=bool)
    whole[list(groups.part_rows())] = False
    frame = pd.DataFrame({"period": table[by[0]], "yes": keys.astype(bool), "v": values})
    frame = frame[whole & np.isfinite(values)]
    pairs = frame.pivot_table(index="period", columns="yes", values="v", aggfunc="first")
    if True not in pairs.columns or False not in pairs.columns:
        return None
    pairs = pairs.dropna()
    if len(pairs) < 2:
        return None
    higher, total = int((pairs[True] > pairs[False]).sum()), len(pairs)
    rows = words.of_rows(kind, total) or ""
    said = words(
        "compared_days_periods",
        name=name,
        event=event,
        higher=number_text(higher, 0, words),
        total=number_text(total, 0, words),
        rows=rows,
    )
    return words("compared_within_noise", compared=said) if column in groups.even else said


def _even_forms(
    groups: Groups,
    name: str,
    extremes: tuple[list[int], list[int]],
    texts: tuple[list[str], list[str]],
    words: Words,
    *,
    untested: bool = False,
) -> list[str]:
    """Groups that differ by no more than noise (``Metadata.even_groups``) as the span of
    their values, no winner: ``average range: Mon 309.44 to Fri 326.47 points (differences
    within noise)``. "highest Fri 326.47, lowest Mon 309.44" over a test's p = 0.9 was read
    as "Friday is the widest day". ``untested``: groups no test could compare (the months
    of one year, ``Metadata.untested_groups``): "average range: Apr 244.20 to May 371.59
    points (too few years to compare)"."""
    high, low = extremes
    full, bare = texts
    forms = []
    # The unit once, after the second value: "Mon 309.44 to Fri 326.47 points".
    keys = (N_("even_groups"), N_("even_groups"), N_("even_groups_short"))
    if untested:
        keys = (N_("untested_groups"), N_("untested_groups"), N_("untested_groups_short"))
    for key, last in zip(keys, (full, bare, bare), strict=True):
        ends = {
            side: _extreme_text(groups, at, (values, full), words, len(at))
            for side, at, values in (("low", low, bare), ("high", high, last))
        }
        forms.append(words(key, name=name, **ends))
    return list(dict.fromkeys(forms))


def _extreme_forms(
    groups: Groups,
    named: tuple[str, str],
    extremes: tuple[list[int], list[int]],
    texts: tuple[list[str], list[str]],
    words: Words,
    *,
    count: bool,
    below: bool,
) -> list[str]:
    """``mean_range: highest fomc 168.19 points, lowest no fomc 137.36 points`` (of a
    ``count``, ``days: most often 09:30 1,602, least often 16:30 287``; of a column
    ``below`` zero, ``max_dd: lowest 2020 −32.5%, highest 2025 −1.1%``) and shorter: the
    unit left to the axis, ▲/▼ for the words, a tie counted rather than named, and last the
    column's name. Every form keeps both groups and both numbers, and every form that
    names the column comes first: the Russian words are longer, and a form without the name
    was drawn in Russian where English still named it («больше всего Ср 140,7 пункта, …»
    over "mean_range: highest Wed 140.7 points, …"). ``named`` is the column and what the
    chart calls it."""
    column, name = named
    high, low = extremes
    full, bare = texts
    ties = groups.tie_counts(column, high, low)  # of every group, when only some are drawn

    def pair(
        values: list[str],
        *,
        count_ties: bool = False,
        count_near: bool = False,
        plus: bool = False,
        noise: bool = True,
    ) -> dict[str, str]:
        found = {}
        for side, at, many in (("high", high, ties[0]), ("low", low, ties[1])):
            found[side] = _extreme_text(
                groups, at, (values, full), words, many, count_ties=count_ties
            )
            near = groups.within_noise(column, at) if noise else []
            # The count of the others after words, never beside the end's number: "14:00 10
            # or 10 more (3–7, within noise)" read as "10 or 10 more" (p48d C6).
            if near and plus:  # "23:00 4,810 (+39 within noise)"
                found[side] = words("within_noise_plus", first=found[side], count=len(near))
            elif near and count_near:  # "20:00 4,810, within noise of 7 others"
                found[side] = words(
                    "within_noise_count", first=found[side], count=len(near), plural_of=len(near)
                )
            elif len(near) > MAX_NEAR_NAMED:  # "00:00 5,147.68, within noise of 7 others
                # (5,162.25–5,217.22)": eight hours named ran the caption to 300 characters
                spread = sorted(near, key=lambda i: groups.table[column].iloc[i])
                span = f"{bare[spread[0]]}–{bare[spread[-1]]}"
                found[side] = words(
                    "within_noise_many",
                    first=found[side],
                    count=len(near),
                    others=span,
                    plural_of=len(near),
                )
            elif near:  # "high only 1,607 or low only 1,568 (within noise)", not a winner
                others = ", ".join(  # the unit once, with the end's value
                    _extreme_text(groups, [i], (bare, full), words, 1) for i in near
                )
                found[side] = words("within_noise", first=found[side], others=others)
        return found

    def form(
        kind: str,
        values: list[str],
        *,
        count_ties: bool = False,
        count_near: bool = False,
        plus: bool = False,
        noise: bool = True,
    ) -> str:
        found = pair(values, count_ties=count_ties, count_near=count_near, plus=plus, noise=noise)
        return words.extremes(kind, count=count, below_zero=below, name=name, **found)

    near = [len(groups.within_noise(column, at)) for at in (high, low)]
    both_near = []
    if all(near):
        # Shortest named: both ends' neighbours counted once, at the end. A year × weekday
        # title in Russian fitted only without its name («▲ 2022 · Ср 436,46 (+3 в
        # пределах шума) · ▼ 2013 · Пн 23,45 (+4 в пределах шума)»: of what?).
        ends = form("short", bare, count_ties=True, noise=False)
        both_near = [words("within_noise_both", compared=ends, high=near[0], low=near[1])]
    forms = [
        form("named", full),
        form("named", bare),
        form("short", full),
        form("short", bare),
        # Named, its neighbours counted, before any form without the name (``fit_headline``)
        form("short", bare, count_ties=True, count_near=True),
        # Shorter still, the neighbours as "+16": a weekday × hour caption in Russian had
        # been cut after «▼ Ср · 23:00 4 810, в…», mid-phrase.
        form("short", bare, count_ties=True, plus=True),
        *both_near,
        form("marks", full),
        form("marks", bare),
        form("marks", bare, count_ties=True),
        form("marks", bare, count_ties=True, count_near=True),
        form("marks", bare, count_ties=True, plus=True),
    ]
    return list(dict.fromkeys(forms))


def _series_forms(
    groups: Groups,
    name: str,
    texts: tuple[list[str], list[str]],
    values: np.ndarray,
    words: Words,
    *,
    count: bool,
    below: bool,
) -> list[str]:
    """Each series' highest and lowest (most and least often, of a ``count``; lowest and
    highest, of values ``below`` zero), the series named: ``days: 2020 — most often 09:30 88,
    least often 12:30 13; 2024 — most often 09:30 95, least often 16:30 12`` (a dash, as a
    yes/no series is named with a colon: «d: нет: больше всего» read two colons), and
    shorter with ▲/▼. Of keys that share labels, each slot's, first key first: ``count: down
    — most often up 1,147, …`` for yesterday down, today up (``SideBySide.by_slot``).
    ``name`` is what the chart calls the column."""
    layout = groups.layout
    assert layout is not None
    found = series_extremes(values, layout, groups.crowned(values))
    names, _ = layout.parts()

    def one(at: list[int], values: list[str], count_ties: bool, glued: bool) -> str:
        if len(at) == 1:
            found = f"{held_label(layout.label(at[0]))} {values[at[0]]}"
            return _glued(found) if glued else found
        if len(at) <= MAX_TIED_NAMED and not count_ties:
            labels = ", ".join(layout.label(i) for i in at)
            return words("tied", value=full[at[0]], labels=labels)
        return _tied_many(full[at[0]], len(at), words)

    def form(values: list[str], *, marks: bool = False, count_ties: bool = False) -> str:
        parts = []
        for j, high, low in found:
            pair = {
                "high": one(high, values, count_ties, marks),
                "low": one(low, values, count_ties, marks),
            }
            series = names[j]
            if marks:  # each group held to its value and "·" to the first, read in a line
                marked = words.extremes("marks", below_zero=below, **pair)
                parts.append(f"{_glued(series)} {marked.replace(' · ', _DOT)}")
            else:
                parts.append(
                    words.extremes("series", count=count, below_zero=below, series=series, **pair)
                )
        return "; ".join(parts)

    full, bare = texts
    if not found:
        return []
    # Every form names the column, down to the marks set tight ("rng: 2020 ▲июл 467,27
    # ▼ноя 194,06; 2024 …"), the last cut when none fits: two years of months in Russian
    # fitted the title only without the name, headed by numbers of nothing.
    marked = [form(bare, marks=True), form(bare, marks=True, count_ties=True)]
    forms = [
        f"{name}: {form(full)}",
        f"{name}: {form(bare)}",
        f"{name}: {form(full, marks=True)}",
        *(f"{name}: {text}" for text in marked),
        *(f"{name}: {_tight(text)}" for text in marked),
    ]
    return list(dict.fromkeys(forms))


def _glued(text: str) -> str:
    """``text`` held in one line of the title: a line broke a Markov table's "▲ y: да" from
    its "51,5 %", and a flag's "y:" from its "нет"."""
    return text.replace(" ", "\u00a0")


def _tight(text: str) -> str:
    """Marks set tight: ``▲ Jul 467.27 · ▼ Nov 194.06`` as ``▲Jul 467.27 ▼Nov 194.06``."""
    for mark in ("▲", "▼"):  # the marks are held to their group by a no-break space
        text = text.replace(f"{mark}\u00a0", mark).replace(f"{mark} ", mark)
    return text.replace(_DOT, " ").replace(" · ", " ")


def _extreme_text(
    groups: Groups,
    at: list[int],
    texts: tuple[list[str], list[str]],
    words: Words,
    tied: int,
    *,
    count_ties: bool = False,
) -> str:
    """The group holding the extreme and its value (of ``texts``, the form's values and
    the same with their units); a tie names every group in it (``8 days (tie: 2012,
    2025)``), or how many (``tied`` in all) when they are many."""
    values, full = texts
    if tied == 1:
        label = groups.named(at[0], words)
        return _group_value(groups.by, label, values[at[0]], keyed=groups.buckets is not None)
    if tied <= MAX_TIED_NAMED and not count_ties:
        labels = ", ".join(groups.named(i, words, listed=True) for i in at)
        return words("tied", value=full[at[0]], labels=labels)
    return _tied_many(
        full[at[0]], tied, words, buckets=groups.buckets is not None, rows=groups.rows
    )


def _tied_many(
    value: str, count: int, words: Words, *, buckets: bool = False, rows: str | None = None
) -> str:
    """A value shared by ``count`` groups (``buckets`` of a number; a listing's bars, named
    by ``rows``, their timeframe), too many to name: ``1 day (7 buckets tied)``, ``0% (322
    days tied)``. The value keeps its unit and the count says what it counts: "least often 1
    (7 tied)" beside "most often bucket 0 … 0.5% (803)" read as the 1% bucket (375 days),
    not as 1 day in each of 7 buckets; the 322 days at a drawdown of 0 read "322 groups"
    (p47a)."""
    number = number_text(count, 0, words)
    of_rows = words.of_rows(rows, count) if rows is not None else None
    if of_rows is not None:
        return words(N_("tied_many_rows"), value=value, count=number, rows=of_rows)
    key = N_("tied_many_buckets") if buckets else N_("tied_many")
    return words(key, plural_of=count, value=value, count=number)


def _group_value(by: list[str], label: str, value: str, *, keyed: bool = False) -> str:
    """A group and its value: ``2022 41 days``, ``Feb 477.6 points``; a bare number that is
    not a year names its key, and the value goes in brackets (``m 2 (477.6 points)``, not
    ``2 477.6 points``), as does a bucket of a number, ``keyed`` by its range (``bucket
    0 … 0.5% (796 days)``)."""
    numbered = _YEAR.match(label) is None and _NUMBER.match(label)
    if len(by) == 1 and (keyed or numbered):
        return f"{by[0]} {label} ({value})"
    return f"{label} {value}"


def _cut_tie_text(groups: Groups, texts: list[str], result: Result, words: Words) -> str:
    """The last bar's place and the groups tied with it that the limit cut
    (``Metadata.limit_tie``), as its note under the chart names them: "#2 Sep 14 days, tied
    with Oct". The caption of "two months with the most up days" read "#1 Dec 16 days" and
    nothing of October's equal 14 (p48i 1). Empty when no tie was cut."""
    meta = result.metadata
    tie = meta.limit_tie if meta is not None else None
    column = ranked_column(groups, result)
    if tie is None or groups.table.empty or column not in groups.table.columns:
        return ""
    values = floats(groups.table[column])
    place = tied_places(values)[-1]
    names = ", ".join(" · ".join(parts) for parts in tie_key_texts(tie.left, groups, result, words))
    if tie.left_count > len(tie.left):
        names += f" +{tie.left_count - len(tie.left)}"
    last = len(values) - 1
    return words(
        N_("ranked_tie_cut"), place=place, label=groups.labels[last], value=texts[last], names=names
    )


def _tied_first(values: pd.Series) -> int:
    """How many rows from the first share its value: 2 for NQ's longest losing streaks 11,
    11, 10, 10."""
    shown = values.to_numpy()
    first = shown[0]
    count = 1
    while count < len(shown) and shown[count] == first:
        count += 1
    return count


def _rows(result: Result, words: Words) -> list[str]:
    table = result.table
    assert table is not None
    if table.empty:
        return [_nothing_matched(result, words) or words("rows_shown", count="0")]
    events = read_events(result, words)
    if events is not None:  # how many days were picked, not the last one's close
        return [events_headline(result, events, words)]
    periods = picked_periods_headline(result, words)
    if periods is not None:  # and how many weeks or months
        return [periods]
    now = latest(result)
    if now is not None:
        value = unit_text(now.value, unit(now.column, result), result, words)
        return [_now_text(result, now, value, words)]
    column = sorted_column(result, table)
    if column is not None:
        value = _first_ranked_text(table, column, result, words)
        label = _row_label(result, table, 0)
        name = column_name(column, result, words)
        hidden = unshown_sort(result, table)
        if hidden is not None:  # "close: #1 …" named close the top, ranked by range
            by, lowest = hidden
            if lowest:
                return [words("ranked_lowest_by", by=by, label=label, name=name, value=value)]
            return [words("ranked_first_by", by=by, label=label, name=name, value=value)]
        if ranked_lowest_first(result, column):
            below = below_zero(floats(table[column]))
            return [words.ranked_lowest(below_zero=below, name=name, label=label, value=value)]
        tied = _tied_first(table[column])
        if tied > 1:  # "#1 2008-05-01 11 days" beside 2018-11-05's equal 11 (p48f M5)
            labels = ", ".join(_row_label(result, table, at) for at in range(min(tied, 2)))
            if tied > 2:
                labels += f" +{tied - 2}"
            first = words("ranked_first_tied", name=name, labels=labels, value=value)
        else:
            first = words("ranked_first", name=name, label=label, value=value)
        return _cut_tie_rows([first], name, result, words)
    if len(table) == 1:
        return [_one_row(result, table, words)]
    dated = dated_by_label(table, result)  # monthly "select": "ret" keeps only the label
    table = table if dated is None else dated
    time_col = time_column(table)
    if time_col is not None and plain_candles(result, table, time_col):
        return [_span_text(result, table, time_col, words)]
    # The columns the chart draws, not the first selected: "open last: 6,351" headed a
    # chart of the move.
    drawn = headline_columns(result, table, time_col) if time_col else []
    if not drawn:
        focus = [c for c in result.focus_columns if c in table.columns and is_number(table[c])]
        focus = [c for c in focus if c not in calendar_labels(result, focus)]  # no "highest 12"
        first = focus[0] if focus else first_numeric(table, ["close"])
        drawn = [first] if first is not None else []
    at = latest_known(table, drawn[0], time_col) if drawn and time_col else None
    # Rows named by a selected month alone (monthly 2025, month()) have extremes, no latest.
    named = at is None and drawn and calendar_names(result, table, words) is not None
    if at is None and not named:
        return [words("rows_shown", count=format_value(len(table), words=words))]
    extremes = [] if latest_asked(result, table) else _row_extremes(result, table, drawn, words)
    if extremes:
        return extremes
    if at is None:
        return [words("rows_shown", count=format_value(len(table), words=words))]
    date = _row_when(result, table, at, words)
    if len(drawn) == 1:
        value = _value_text(table[drawn[0]].iloc[at], drawn[0], result, words)
        name = column_name(drawn[0], result, words)
        return [words("last_value", name=name, value=value, date=date)]
    # A few columns drawn together (the range and its 20-day mean): each, on the latest row.
    texts = [
        words(
            "answer",
            name=column_name(c, result, words),
            value=_value_text(table[c].iloc[at], c, result, words),
        )
        for c in drawn
    ]
    return [f"{' · '.join(texts)} ({date})"]


def _row_extremes(result: Result, table: pd.DataFrame, drawn: list[str], words: Words) -> list[str]:
    """A listing's highest and lowest row of the first column drawn that is a value of its
    own row (a range, a return), each named by its row: ``ret: highest 2020-10 23.9%, lowest
    2008-04 −22.2%``, and shorter forms. Not of a level or a running total, whose line
    ends at the answer (``close last``, ``equity last``). The last row's value headed 89
    FOMC days ("range = 751.25 points (2025-12-10)") and 216 monthly returns ("ret last:
    11.3%"): read as the answer, where the widest FOMC day was 796.5 on 2021-04-28."""
    running = running_columns(result, drawn)
    column = next(
        (
            c
            for c in drawn
            if c not in running and unit(c, result) != PRICE and not price_ratio(c, result.query)
        ),
        None,
    )
    if column is None:
        return []
    values = floats(table[column])
    finite = np.flatnonzero(np.isfinite(values))
    if len(finite) < 2 or values[finite].max() == values[finite].min():
        return []
    high, low = (
        tied(values, finite, values[finite].max()),
        tied(values, finite, values[finite].min()),
    )
    value_unit = unit(column, result)
    shown = [high[0], low[0]]  # written out, of 50,000 rows, are the two extremes only
    decimals = column_decimals(values, value_unit, result)  # as the bars write them
    written = [format_value(v, value_unit, decimals=decimals, words=words) for v in values[shown]]
    bare = dict(zip(shown, written, strict=True))
    full = {at: with_unit(t, value_unit, words, values[at]) for at, t in bare.items()}

    def side(at: list[int], texts: dict[int, str], count_ties: bool) -> str:
        if len(at) == 1:
            return f"{_row_when(result, table, at[0], words)} {texts[at[0]]}"
        if len(at) <= MAX_TIED_NAMED and not count_ties:
            labels = ", ".join(_row_when(result, table, i, words) for i in at)
            return words("tied", value=full[at[0]], labels=labels)
        return _tied_many(full[at[0]], len(at), words, rows=bars)

    bars = _listed_rows(result, table)
    name = column_name(column, result, words)
    below = below_zero(values)
    forms = [
        words.extremes(
            kind,
            below_zero=below,
            name=name,
            high=side(high, texts, count_ties),
            low=side(low, texts, count_ties),
        )
        for kind, texts, count_ties in (
            ("named", full, False),
            ("named", bare, False),
            ("short", full, False),
            ("short", bare, False),
            ("short", bare, True),
        )
    ]
    return list(dict.fromkeys(forms))


def _listed_rows(result: Result, table: pd.DataFrame) -> str:
    """What a listing's rows are, for a tie too many to name: its bars, by their timeframe's
    name ("50 days tied"; "bars" of minutes and hours), or a then stage's rows, the first
    stage's groups (days of ``group_by: date()``). A listing of daily bars that selected
    date() carries no bar label and read "(50 groups tied)" where nothing was a group."""
    then = result.query.get("then")
    keys = group_key_names(result.query)
    if isinstance(then, dict) and then and keys and bar_labels(table, result) is None:
        return tied_rows(keys, result) or "groups"
    frame = timeframe(result)
    return frame if frame in COUNTED_ROWS else "bars"


def _span_text(result: Result, table: pd.DataFrame, time_col: str, words: Words) -> str:
    """The span a chart of candles draws: ``high = 21,703.00 · low = 21,488.00 · close =
    21,675.00 (2025-11-28)``, its highest high, lowest low and last close, and its day; of
    several days the scope under the headline says them (with them, the close was cut)."""
    table = table.sort_values(time_col, kind="stable").reset_index(drop=True)
    values = {
        "high": table["high"].max(),
        "low": table["low"].min(),
        "close": table["close"].iloc[-1],
    }
    texts = [
        words(
            "answer",
            name=column_name(name, result, words),
            value=_value_text(value, name, result, words),
        )
        for name, value in values.items()
    ]
    first, last = (date_text(pd.Timestamp(table[time_col].iloc[at]).normalize()) for at in (0, -1))
    return " · ".join(texts) + (f" ({first})" if first == last else "")


def _one_row(result: Result, table: pd.DataFrame, words: Words) -> str:
    """A single row is its values: ``close = 25,600 · ath = 25,851 · since = 2 days
    (2026-01-07)``, as many as the headline holds."""
    columns = card_values(table, result)[:MAX_ANSWERS]
    if not columns:
        return words("rows_shown", count="1")
    texts = [
        words(
            "answer", name=column_name(c, result, words), value=value_text(table, c, result, words)
        )
        for c in columns
    ]
    return f"{' · '.join(texts)} ({_row_when(result, table, 0, words)})"


def _first_ranked_text(
    table: pd.DataFrame, column: str, result: Result, words: Words, at: int = 0
) -> str:
    """The first ranked row's value (or the row ``at``'s) as its bar writes it, at the
    column's one precision: «chg: ниже всего 2020-07-02 −12,6 %» headed a bar of «−12,60 %»."""
    first = table[column].iloc[at]
    value_unit = unit(column, result)
    # A percentile rank is an ordinal in words ("100th percentile"), which "100.00th" is not.
    if (
        part_text(column, first, result, words) is not None
        or not is_number(table[column])
        or value_unit == "percentile"
    ):
        return _value_text(first, column, result, words)
    values = floats(table[column])
    text = unit_numbers(values, value_unit, result, words, distinct=True)[at]
    return with_unit(text, value_unit, words, values[at])


def _cut_tie_rows(forms: list[str], name: str, result: Result, words: Words) -> list[str]:
    """A ranking of rows whose limit cut a tie (``Metadata.limit_tie``) says so in its
    caption, as the chart's note and the CSV do: "range: #1 2024-02-27 990.75 points · #31
    2024-03-21 510 points, tied with 2024-08-28" (the caption had said only the first); the
    forms without it follow, for a title short of room, which has the note under the bars."""
    table = result.table
    meta = result.metadata
    tie = meta.limit_tie if meta is not None else None
    column = sorted_column(result, table) if table is not None else None
    if tie is None or table is None or table.empty or column is None or not tie.left:
        return forms
    last = len(table) - 1
    names = ", ".join(" · ".join(keys.values()) for keys in tie.left)
    if tie.left_count > len(tie.left):
        names += f" +{tie.left_count - len(tie.left)}"
    cut = words(
        N_("ranked_tie_cut"),
        place=tied_places(floats(table[column]))[-1],
        label=_row_label(result, table, last),
        value=_first_ranked_text(table, column, result, words, last),
        names=names,
    )
    if last == 0:  # the first is the tie: "#1 2024-03-21 510 points, tied with 2024-08-28"
        return [f"{name}: {cut}", *forms]
    return [f"{forms[0]} · {cut}", *forms]


def _value_text(value: object, column: str, result: Result, words: Words) -> str:
    placed = part_text(column, value, result, words)  # a year is a label: 2025
    return placed if placed is not None else unit_text(value, unit(column, result), result, words)

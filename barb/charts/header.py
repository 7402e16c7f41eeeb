"""The frame around a chart: the headline (the answer, up to two lines, three if it must),
the data's scope (instrument · session · timeframe · period, or the days drawn when the chart
draws only the latest bars), what was computed in the query's own words (and whether the
groups' means differ by less than their noise), and a footer with the bars matched (and how
many the chart draws, when not all) and the synthetic-data badge."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.text import Text

from barb.charts.columns import column_name, row_kind, row_word
from barb.charts.kinds import Window
from barb.charts.style import (
    BADGE_PT,
    FOOTER_PT,
    FOOTER_Y,
    INK,
    MARGIN_X,
    MUTED,
    SCOPE_PT,
    SUBTITLE_PT,
    SYNTHETIC,
    TITLE_PT,
    TITLE_TOP,
)
from barb.charts.value_text import number_text
from barb.charts.where_words import where_text
from barb.charts.words import Words
from barb.column_units import COUNTED_ROWS, then_rows_unit
from barb.column_words import aggregate_words, counts_rows, plain_words
from barb.errors import QueryError
from barb.i18n import N_
from barb.proof_names import as_list
from barb.result import CutRun, Metadata, Result
from barb.script import ast
from barb.script.ast import default_name
from barb.script.parser import parse_select_item
from barb.time_keys import key_call
from barb.timeframes import TIMEFRAMES, resolve_timeframe, timeframe_short, timeframe_words

LINE_SPACING = 1.22
_TRAILING = " ·,;:"  # left off a line cut with "…"
MAX_SUBTITLE_LINES = 2
# The noise caveat's lines: whole, wrapped. One line cut CL's at a phone's width to "average
# range, median range: the differences are within…", the word that says it lost.
MAX_NOISE_LINES = 3
MAX_TITLE_LINES = 3  # when no form of the headline fits in two
BADGE_PAD = 0.4  # the badge box's pad, in its font's size
FOOTER_GAP_PX = 12  # between the footer and the synthetic-data badge


def scope_text(metadata: Metadata, words: Words, window: Window | None = None) -> str:
    """``NQ · RTH · daily · 2008-01-02 — 2026-01-07``: the data the chart is drawn from (the
    ``window`` drawn, when the chart leaves earlier bars out)."""
    start, end = metadata.period_start, metadata.period_end
    if window is not None:
        start, end = window.start, window.end
    if start is None or end is None:
        period = words("no_bars")
    elif start == end:
        period = start.isoformat()
    else:
        period = f"{start.isoformat()} — {end.isoformat()}"
    found = TIMEFRAMES.get(metadata.timeframe)
    bars = timeframe_short(found, words.language) if found else metadata.timeframe
    return " · ".join((metadata.instrument, metadata.session, bars, period))


def scope_lines(fig: Figure, scope: str) -> list[str]:
    """The scope in lines that fit across the figure, broken between its parts, never
    inside one: a window on another clock ("NQ · 10:00-11:00 Europe/Moscow · дневные ·
    2024-01-02 — 2024-12-31") ran off a phone's chart at "2024-", the period's end lost."""
    room_px = (1 - 2 * MARGIN_X) * fig.get_figwidth() * fig.dpi
    lines: list[str] = []
    for part in scope.split(" · "):
        joined = f"{lines[-1]} · {part}" if lines else part
        if lines and _width_px(fig, joined, SCOPE_PT) > room_px:
            lines.append(part)
        elif lines:
            lines[-1] = joined
        else:
            lines.append(part)
    return lines


def subtitle_text(query: dict[str, Any], words: Words) -> str:
    """What was computed, each measure in words where Barb has them ("average range",
    «средний диапазон»: a Russian chart's subtitle read «mean(range) · по дню недели»),
    else in the query's own; joined by the language's words."""
    found = resolve_timeframe(str(query.get("from") or ""))
    timeframe = found.name if found is not None else ""
    rows = COUNTED_ROWS.get(timeframe, "bars")
    parts = _stage_parts(query, words, query, rows=rows)
    then = query.get("then")
    if isinstance(then, dict) and then:
        counted = then_rows_unit(query, timeframe) or "groups"
        steps = " · ".join(_stage_parts(then, words, query, events=False, rows=counted))
        parts.append(words("sub.then", steps=steps))
    return " · ".join(parts) or words("all_bars")


def _measure_text(item: str, words: Words, rows: str) -> tuple[str, str | None]:
    """A select item as the subtitle says it, and the name the stage's output knows it by
    when that is the engine's (``mean_range``), for a sort to name it the same way: a
    measure of the bars' columns in words ("average range", «количество дней»), under the
    query's name for it where it gave one ("maximum close (top)", as the plan says it); any
    other as written (``arg_max(hour("MSK"), high) as hh``)."""
    try:
        expr, alias = parse_select_item(item)
    except QueryError:
        return item, None
    said = plain_words(expr, words.language, rows) or aggregate_words(expr, words.language)
    if said is None:
        return item, None
    if alias is not None and counts_rows(expr) and alias in _UNIT_NAMES:
        # count() as weeks: the axis names it by its unit («недели»), and so does a sort
        return said, alias
    if alias is not None and alias != default_name(expr):
        return f"{said} ({alias})", None
    return said, default_name(expr)


#: The units a count can be named for (``count() as days``), which the chart calls it by.
_UNIT_NAMES = frozenset({*COUNTED_ROWS.values(), "bars"})


def cut_run_text(run: CutRun, words: Words) -> str:
    """A streak run the period cuts, as its warning says it (``Metadata.cut_runs``): "Run of
    7 to 2025-01-02 began 2024-12-23, before the period; in the period alone: 6, to
    2025-05-22", or "Run of 6 to 2024-12-31 went on past the period: 7 on 2025-01-02"."""
    values: dict[str, object] = {"length": number_text(run.length, 0, words), "ended": run.ended}
    if run.began is not None and run.inside is not None:
        inside = number_text(run.inside, 0, words)
        return words(
            "sub.run_began", began=run.began, inside=inside, inside_end=run.inside_end, **values
        )
    assert run.whole is not None
    key = N_("sub.run_still") if run.still else N_("sub.run_went_on")
    return words(key, whole=number_text(run.whole, 0, words), whole_end=run.whole_end, **values)


def _stage_parts(
    stage: dict[str, Any],
    words: Words,
    query: dict[str, Any],
    *,
    events: bool = True,
    rows: str = "bars",
) -> list[str]:
    parts: list[str] = []
    select, group_by = as_list(stage.get("select")), as_list(stage.get("group_by"))
    measures = [_measure_text(str(item), words, rows) for item in select or ["count()"]]
    named = {
        name: str(words.unit(name, axis=True)) if name in _UNIT_NAMES else said
        for said, name in measures
        if name is not None
    }
    if select or group_by:
        parts.append(", ".join(said for said, _ in measures))
    if group_by:
        parts.append(
            words("sub.by", groups=", ".join(by_key_text(k, words, query) for k in group_by))
        )
    # The ranking before the where and the map, which run long: two lines cut at "sorted run
    # desc…" hid "first 4", and a top 4 read as the whole list (p48f M5).
    if stage.get("sort"):
        parts.append(words("sub.sorted", order=_sort_text(str(stage["sort"]), words, named)))
    if stage.get("limit"):
        parts.append(words("sub.first", count=stage["limit"]))
    joined = [_join_name(j) for j in stage.get("join") or []] if events else []
    if stage.get("where"):
        # An event's days said in words need no "with cpi" of their own.
        where, named = where_text(str(stage["where"]), set(joined), words)
        parts.append(where)
        joined = [j for j in joined if j not in named]
    if joined:
        parts.append(words("sub.with", joined=", ".join(joined)))
    for name, expr in (stage.get("map") or {}).items():
        # "weekday = dayname()" only repeats the group key said in words; "big = range >
        # 300" says what "по big" is.
        call = key_call(name, query) if name in group_by else None
        if call is None or words.by_key(call) is None:
            parts.append(f"{name} = {expr}")
    return parts


def by_key_text(key: object, words: Words, query: dict[str, Any]) -> str:
    """A group key as the subtitle names it: a calendar call in words (``month()`` → "month",
    «месяцу»), and so a name holding one's values (a second stage's ``month``, a map's
    ``"weekday": "dayname()"``); anything else as the query wrote it."""
    text = str(key)
    call = text[:-2].strip().lower() if text.endswith("()") else key_call(text.strip(), query)
    found = words.by_key(call) if call is not None else None
    return text if found is None else found


#: A sort key's direction, by whether it is descending.
_DIRECTIONS = {False: N_("sub.asc"), True: N_("sub.desc")}


def _sort_text(sort: str, words: Words, named: dict[str, str] | None = None) -> str:
    """The sort keys with their direction in the person's language: ``avg_vol по
    возрастанию``, not the query's ``asc`` amid Russian words; a bar column and a measure
    the select said in words (``named``: ``mean_range``) by those words, «диапазон по
    убыванию», where «range по убыванию» put code amid them."""
    keys = []
    for key in sort.split(","):
        column, *direction = key.split() or [""]
        if column:  # a query's sort is "column", "column asc" or "column desc"
            descending = bool(direction) and direction[0].lower() == "desc"
            said = (named or {}).get(column) or plain_words(ast.Column(column), words.language)
            keys.append(f"{said or column} {words(_DIRECTIONS[descending])}")
    return ", ".join(keys)


def _join_name(join: Any) -> str:
    """An event join names its days (``fomc``), an instrument join its symbol (``ES``), with
    the session it names of its own (``CL OVERNIGHT``: read beside NQ's RTH day, which the
    header line names)."""
    if isinstance(join, dict):
        name = str(join.get("source") or join.get("instrument") or "")
        return f"{name} {join['session']}" if join.get("session") else name
    return str(join)


def wrap(
    fig: Figure,
    text: str,
    points: float,
    lines: int,
    *,
    bold: bool = False,
    room_px: float | None = None,
    whole_values: bool = True,
) -> list[str]:
    """``text`` in at most ``lines`` lines that fit across the figure (or ``room_px``), the
    last cut with "…"; measured with the figure's renderer, so wide letters (bold, Cyrillic)
    wrap sooner. Lines break between words, never inside a glued run (``_runs``): a title
    read "average range: Wed 349.17 to Tue" over "381.05", and a line began "· ▼ Mon".
    Without ``whole_values`` a label and its value may part; a separator never starts a
    line."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    font = FontProperties(size=points, weight="bold" if bold else "normal")
    if room_px is None:
        room_px = (1 - 2 * MARGIN_X) * fig.get_figwidth() * fig.dpi

    def fits(line: str) -> bool:
        width, _, _ = renderer.get_text_width_height_descent(line, font, ismath=False)
        return width <= room_px

    out: list[str] = []
    for run in _runs(text, whole_values):
        for piece in _fitting(run, fits):
            if out and fits(f"{out[-1]} {piece}"):
                out[-1] = f"{out[-1]} {piece}"
            else:
                out.append(piece)
    if len(out) > lines:
        out = out[:lines]
        out[-1] = _cut(out[-1], fits)
    return out or [""]


def _fitting(run: str, fits: Callable[[str], bool]) -> list[str]:
    """A run too wide for a line as its words, and a word too wide as the letters that fit."""
    if fits(run):
        return [run]
    pieces: list[str] = []
    for word in run.split(" "):
        while word and not fits(word):
            at = len(word) - 1
            while at > 1 and not fits(word[:at]):
                at -= 1
            pieces.append(word[:at])
            word = word[at:]
        if word:
            pieces.append(word)
    return pieces


# A value: a number, a price, a percent or a time of day ("−0.103%", "1 033 895", "09:30").
_VALUE = re.compile(r"^[−+-]?[$€]?\d")
# A comparison or an alias joins both its sides: "fh > 0", "count() as weeks".
_OPERATORS = frozenset({"=", "==", "!=", ">", "<", ">=", "<=", "as"})
# What joins the word before it: a separator ("·", "–") never starts a line.
_JOINS_BEFORE = frozenset({"·", "–", "—"}) | _OPERATORS
# What joins the word after it: a mark ("▲", "▼") never ends one, nor a "by" its key (a
# subtitle's "· by" over "weekday").
_JOINS_AFTER = frozenset({"▲", "▼", "by", "по"}) | _OPERATORS
# Words between two values, which a line may start with: "Wed 349.17 to Tue 381.05".
_LINKS = frozenset({"to", "vs", "or", "and", "of", "within", "против", "или", "и", "в"})
# A clock's name in brackets after a time: "16:30 (МСК)".
_BRACKETED = re.compile(r"^\([^\s()]+\)[,;]?$")


def _runs(text: str, whole_values: bool = True) -> list[str]:
    """``text``'s words, those no line may break between joined in one run: a separator and
    the word before it, a mark and the word after it, a label and its value ("Tue 381.05")
    and a value and its unit or clock ("410.01 points", "16:30 (МСК)")."""
    runs: list[str] = []
    for word in filter(None, text.split(" ")):  # a no-break space stays one
        # The word before, past a no-break space the text has already ("2022\xa0·\xa0Wed").
        before = re.split("[ \u00a0]", runs[-1])[-1] if runs else ""
        if before and (_separates(before, word) or (whole_values and _labels(before, word))):
            runs[-1] = f"{runs[-1]} {word}"
        else:
            runs.append(word)
    return runs


def _separates(before: str, word: str) -> bool:
    """A separator and the word before it, or a mark and the word after it."""
    return word in _JOINS_BEFORE or before in _JOINS_AFTER


def _labels(before: str, word: str) -> bool:
    """A label and its value, or a value and its unit or clock."""
    if before.endswith(":") and _VALUE.match(before):
        return True  # a condition's label and its value: "fh > 0: yes"
    if before[-1] in ",;:" or before in _JOINS_BEFORE:
        return False  # a list's, a name's and a separator's end may end a line
    if _VALUE.match(word):
        return True
    if not _VALUE.match(before) or word.lower() in _LINKS:
        return False
    return word[0].isalpha() or bool(_BRACKETED.match(word))


def bars_words(timeframe: str, words: Words) -> str:
    """``daily bars``, ``минутные бары``: the bars of the timeframe in the chart's language."""
    found = TIMEFRAMES.get(timeframe)
    return timeframe_words(found, words.language) if found else timeframe


def footer_text(result: Result, words: Words) -> str:
    """The footer's first part: the rows the answer read. "259 of 259 matched" says a where
    kept them all; of a query with none nothing was filtered, and it counts them alone
    ("daily bars: 259"), where «подошло 259 из 259» had read as a filter that kept all."""
    meta = result.metadata
    assert meta is not None
    matched = number_text(meta.rows_matched, 0, words)
    scanned = number_text(meta.rows_scanned, 0, words)
    # Weekly and longer bars are the weeks, months… themselves ("521 of 521 weeks"); daily
    # bars are a session's, and minutes are bars.
    periods = words.of_rows(meta.timeframe, meta.rows_scanned)
    if meta.timeframe == "daily" or periods is None:
        periods = None
    if meta.rows_matched == meta.rows_scanned and not result.query.get("where"):
        if periods is not None:  # "weeks: 521", the axis' word for them
            rows = words.unit(COUNTED_ROWS.get(meta.timeframe, "bars"), axis=True)
        else:
            rows = bars_words(meta.timeframe, words)
        return words("footer.all", rows=rows, scanned=scanned)
    if periods is not None:
        return words("footer.periods", matched=matched, scanned=scanned, rows=periods)
    bars = bars_words(meta.timeframe, words)
    return words("footer", matched=matched, scanned=scanned, bars=bars)


def _fit_footer(fig: Figure, footer: str, room_px: float) -> tuple[float, list[str]]:
    """The footer's size and lines within ``room_px``: one line, else two (a smaller font
    would fall below what a phone shows legibly)."""
    if _width_px(fig, footer, FOOTER_PT) <= room_px:
        return FOOTER_PT, [footer]
    return FOOTER_PT, wrap(fig, footer, FOOTER_PT, 2, room_px=room_px)


def _width_px(fig: Figure, text: str, points: float) -> float:
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    width, _, _ = renderer.get_text_width_height_descent(text, FontProperties(size=points), False)
    return width


def _cut(line: str, fits: Callable[[str], bool]) -> str:
    """``line`` ended with "…" where it fits, shortened by whole words: a cut number (a
    "12…" for 120.3) would read as another number. A single word too long is cut inside."""
    while " " in line.strip() and not fits(line.rstrip(_TRAILING) + "…"):
        line = line.rstrip().rsplit(" ", 1)[0]
    while len(line) > 1 and not fits(line.rstrip(_TRAILING) + "…"):
        line = line[:-1]
    return line.rstrip(_TRAILING) + "…"


class Headline(list[str]):
    """A headline's forms, longest first, and ``name``: what it measures as the chart calls
    it (``доля дней, где r > 0``), which the title says whenever some form of it fits."""

    def __init__(self, forms: Iterable[str], name: str | None = None) -> None:
        super().__init__(forms)
        self.name = name


def fit_headline(
    fig: Figure, forms: Sequence[str], lines: int = 2, name: str | None = None
) -> list[str]:
    """The lines of the first of the headline's ``forms`` (longest first) that fits in
    ``lines`` bold lines whole, else in one line more (``MAX_TITLE_LINES``); when none does,
    the last, cut. The extra line is for the few headlines that no shorter form holds in
    two: a Markov table's four values (``mean_nxt: d: нет ▲y: да 52,6 % ▼y: нет 51,8 %; d:
    да ▲y: да 51,5 % ▼y: нет 48,9 %``) were cut at "▼y…", losing the value compared.
    A form that says ``name`` (what is measured) is taken in three lines before one that
    does not in two: «▲ Ср 54,4 % · ▼ Чт 48,3 %» over two panels did not say which of
    them it read."""
    named = [form for form in forms if name is None or name in form]
    nameless = [form for form in forms if form not in named]
    # Each value beside its label, unless only a form that parts them says what is measured.
    tries = [(named, True), (named, False), (nameless, True)] if named else [(nameless, True)]
    for group, whole in tries:
        for most in range(lines, max(lines, MAX_TITLE_LINES) + 1):
            for form in group:
                out = wrap(fig, form, TITLE_PT, most, bold=True, whole_values=whole)
                if " ".join(out).split() == form.split():
                    return out
    if named and nameless:
        # None fits whole: the shortest that names what is measured, cut in the most lines.
        # The last form cut in two had lost both ("▲ 2022 · Ср 436,46, в пределах шума ещё
        # 3 группы · ▼ 2023 · Вт…": of what, and the lowest's number).
        return wrap(fig, named[-1], TITLE_PT, max(lines, MAX_TITLE_LINES), bold=True)
    return wrap(fig, forms[-1], TITLE_PT, lines, bold=True)


def decorate(
    fig: Figure,
    result: Result,
    words: Words,
    headline: str | Sequence[str],
    window: Window | None = None,
) -> float:
    """Headline, scope, what was computed, and the footer, top to bottom; returns where the
    header ends (a figure fraction), so the plots can take the room a short one leaves.
    ``headline`` may be several forms, longest first: the first that fits is drawn. A
    ``window`` is the latest bars, the only ones drawn: the scope and footer say so."""
    meta = result.metadata
    assert meta is not None
    y = TITLE_TOP
    height = fig.get_figheight() * 72  # figure height in points
    forms = [headline] if isinstance(headline, str) else list(headline)
    drawn = fit_headline(fig, forms, name=headline.name if isinstance(headline, Headline) else None)
    for line in drawn:
        fig.text(MARGIN_X, y, line, fontsize=TITLE_PT, fontweight="bold", color=INK, va="top")
        y -= TITLE_PT * LINE_SPACING / height
    y -= 4 / height
    for line in scope_lines(fig, scope_text(meta, words, window)):
        fig.text(MARGIN_X, y, line, fontsize=SCOPE_PT, color=INK, va="top")
        y -= SCOPE_PT * LINE_SPACING / height
    y -= 3 / height
    subtitle = subtitle_text(result.query, words)
    lines = wrap(fig, subtitle, SUBTITLE_PT, MAX_SUBTITLE_LINES)
    # Under the headline naming the highest and the lowest group, on a line of its own: at
    # the end of a long subtitle it was cut off. Not of the column the headline itself says
    # is within noise ("average range: Mon 309.44 to Fri 326.47 (differences within
    # noise)" over "average range: the differences are within noise").
    names = [
        name
        for name in (column_name(c, result, words) for c in meta.even_groups or ())
        if not _says_noise(" ".join(drawn), name, words)
    ]
    if names:
        noise = words("sub.noise", columns=", ".join(names))
        lines += wrap(fig, noise, SUBTITLE_PT, MAX_NOISE_LINES)
    for run in meta.cut_runs:  # the answer's run is not the period's own alone
        if run.began is not None and run.began in " ".join(drawn):
            continue  # the headline says it (``headline._run_began``)
        lines += wrap(fig, cut_run_text(run, words), SUBTITLE_PT, 2)
    lines += _unjudged_lines(fig, result, words)
    for line in lines:
        fig.text(MARGIN_X, y, line, fontsize=SUBTITLE_PT, color=MUTED, va="top")
        y -= SUBTITLE_PT * LINE_SPACING / height
    footer = footer_text(result, words)
    if meta.then_rows is not None:  # the rows drawn are those the then stage's where kept
        kept, given = meta.then_rows
        kind, groups = row_kind(result)
        footer += " · " + words(
            "footer.then",
            kept=number_text(kept, 0, words),
            given=number_text(given, 0, words),
            rows=words.of_rows(kind, given, groups=groups) or row_word(result, words),
        )
    if window is not None:  # "1,554 of 1,554 matched" with only 500 of them drawn
        footer += " · " + words("footer.drawn", bars=number_text(window.bars, 0, words))
    if meta.truncated:
        footer += " · " + words("table_cut")
    if meta.spread_over is not None:  # a sample of the table, said in few words: the
        # footer has two lines beside the badge, and "подошло 106 436 из 106 436 (часовые
        # бары)" takes most of them
        footer += " · " + words("footer.sample")
    if meta.data_source != "synthetic":
        footer += " · " + words("data_from", source=meta.data_description)  # file and dates
    room_px = (1 - 2 * MARGIN_X) * fig.get_figwidth() * fig.dpi
    if meta.data_source == "synthetic":
        badge = {"boxstyle": f"round,pad={BADGE_PAD}", "facecolor": SYNTHETIC, "edgecolor": "none"}
        shown = fig.text(
            1 - MARGIN_X,
            FOOTER_Y + 0.004,
            words("synthetic_badge"),
            fontsize=BADGE_PT,
            fontweight="bold",
            color="white",
            ha="right",
            va="center",
            bbox=badge,
        )
        # The footer stops short of the badge: a long Russian one ran under it.
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        pad_px = BADGE_PAD * BADGE_PT * fig.dpi / 72  # the box's pad, outside the text
        badge_left = shown.get_window_extent(renderer).x0 - pad_px
        room_px = badge_left - MARGIN_X * fig.get_figwidth() * fig.dpi - FOOTER_GAP_PX
    size, lines = _fit_footer(fig, footer, room_px)
    fig.text(
        MARGIN_X,
        FOOTER_Y,
        "\n".join(lines),
        fontsize=size,
        color=MUTED,
        va="center",
        linespacing=1.1,
    )
    return y


def unjudged_notes(result: Result, words: Words) -> list[str]:
    """A line naming the period's last whole bar when the where could not judge it, its
    next() reading no bar after it (``Metadata.unjudged_last``): "2025-12-29 left out:
    next() has no whole bar after it yet". "The last week of the year, by year" drew 2008
    to 2024 under a header running to 2026-01-02, and the text's warning was nowhere on the
    chart (p48c Q13)."""
    meta = result.metadata
    label = meta.unjudged_last if meta is not None else None
    if not label:
        return []
    assert meta is not None
    if meta.unjudged_rows > 1:  # next(close, 3): "2024-03-26 — 2024-03-28 left out (3)"
        return [words(N_("unjudged_rows_note"), label=label, count=meta.unjudged_rows)]
    return [words("unjudged_last_note", label=label)]


def _unjudged_lines(fig: Figure, result: Result, words: Words) -> list[str]:
    """The period's last bar the where could not judge (``Metadata.unjudged_last``), under
    the subtitle of a chart whose own notes do not name it: "count()" of the days "where
    next_ret > 0" drew 15 closes under a period to 2026-01-07, that day left out unsaid
    (p48i 2). Tables and groups write it under their axis."""
    notes = unjudged_notes(result, words)
    if not notes:
        return []
    note = notes[0]
    drawn = " ".join(t.get_text() for t in fig.findobj(Text)).replace("\n", " ")
    return [] if note in drawn else wrap(fig, note, SUBTITLE_PT, 2)


def _says_noise(headline: str, name: str, words: Words) -> bool:
    """Whether the ``headline`` drawn is of the column ``name`` ("average range: …") and says
    its groups are within noise: each form that does ends its words so, "(differences within
    noise)", "(within noise)", «(в пределах шума)»."""
    marker = words("compared_within_noise", compared="").strip().lstrip("(")
    return headline.startswith(f"{name}:") and marker in headline

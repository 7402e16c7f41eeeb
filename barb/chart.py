"""The chart that proves an answer: one 1280×720 PNG per result, chosen from its shape.

- grouped: one bar per group, the highest and lowest in their own colours;
- rows over time: price (candles for a few consecutive bars, else a line) with the query's
  own columns overlaid when they are on the price's scale, or in a lower panel; a short
  ranked or filtered list of days is one horizontal bar per day, which reads better than
  a few dots spread over 18 years;
- a number or a few numbers: the rows behind them, as a histogram of the averaged column
  with each answer marked, or, for ``count()``, when the counted rows occurred.

Figures are built with ``Figure`` + ``FigureCanvasAgg``, never through pyplot, so rendering
touches no global state and needs no display. Sizes are in points at 100 dpi and the dpi
follows ``width_px``, so the picture scales as a whole.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import Formatter, MaxNLocator

from barb.proof_names import as_list, axis_label, chart_subtitle, chart_title, column_unit
from barb.result import Result

FIG_W_IN, FIG_H_IN = 12.8, 7.2
PX_PER_PT = 100 / 72

# Point sizes at 100 dpi: the title is ~27 px tall, tick labels ~18 px.
TITLE_PT = 19.5
SUBTITLE_PT = 13.5
LABEL_PT = 14
TICK_PT = 13
VALUE_PT = 12.5
FOOTER_PT = 11

INK = "#111827"
MUTED = "#4b5563"
GRID = "#e5e7eb"
BAND = "#f3f4f6"
AXIS = "#6b7280"
ACCENT = "#1d4ed8"
ACCENT_LIGHT = "#93b4f5"
NEUTRAL = "#9ca3af"
HIGH = "#ea580c"
LOW = "#2563eb"
UP = "#15803d"
DOWN = "#dc2626"
SYNTHETIC = "#b91c1c"
OVERLAY_COLORS = ("#ea580c", "#7c3aed", "#0d9488", "#be185d")
ANSWER_COLORS = ("#dc2626", "#7c3aed", "#0d9488", "#ea580c", "#be185d")

# Layout in figure fractions: a header band, the plot, a footer line.
LEFT, RIGHT = 0.085, 0.975
PLOT_TOP, PLOT_BOTTOM = 0.845, 0.115
PANEL_SPLIT = 0.40  # price above, the query's column below
TITLE_Y, SUBTITLE_Y, FOOTER_Y = 0.948, 0.893, 0.022
LEGEND_ROW_PX = 27

MAX_GROUP_BARS = 150  # more groups than this are drawn as a line
MAX_VALUE_LABELS = 20  # bars labelled with their value up to this many
MAX_CANDLES = 120  # consecutive bars drawn as candles up to this many
MAX_MARKERS = 1_500  # never scatter more points than this
MAX_COUNTED_DOTS = 60  # counted bars in a short period shown one dot each up to this many
MAX_EVENT_LINES = 120  # event days (a join's flag) drawn as vertical lines up to this many
MAX_RANKED = 40  # a sorted+limited list drawn as ranked bars up to this many rows
MAX_FILTERED_LIST = 25  # a where-filtered list drawn as one bar per day up to this many
MAX_BAR_SERIES = 400  # a lower panel of consecutive values drawn as bars up to this many
GAP_DAYS = 1.5  # a pause in the bars longer than this breaks a line (weekends, holidays)
LINE_POINTS = 2_400  # lines are decimated (min/max per bucket) to about this many points
MAX_HIST_BINS = 50
HIST_TAIL = 0.5  # percent of values cut from each end of a histogram's x range

PRICE_COLUMNS = ("open", "high", "low", "close")
BAR_DAYS = {"daily": 1.0, "weekly": 7.0, "monthly": 30.0, "quarterly": 91.0, "yearly": 365.0}
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# A select item's function and, when it is a bare column, its first argument.
_AGGREGATE = re.compile(r"^\s*(?P<func>[A-Za-z_]\w*)\s*\(\s*(?:(?P<arg>[A-Za-z_]\w*)\s*(?=[,)]))?")


def render_chart(result: Result, *, width_px: int = 1280) -> bytes | None:
    """PNG bytes for the result, or None for an error or when there is nothing to draw."""
    if not result.ok or result.summary is None or result.metadata is None:
        return None
    fig = Figure(figsize=(FIG_W_IN, FIG_H_IN), dpi=width_px / FIG_W_IN, facecolor="white")
    FigureCanvasAgg(fig)
    draw: dict[str, Callable[[Figure, Result], bool]] = {
        "grouped": _draw_grouped,
        "table": _draw_table,
        "scalar": _draw_aggregate,
        "dict": _draw_aggregate,
    }
    if not draw[result.summary.type](fig, result):
        return None
    _decorate(fig, result)
    buffer = io.BytesIO()
    # No "Software" text chunk: the same result always gives the same bytes.
    fig.savefig(buffer, format="png", dpi=fig.dpi, metadata={"Software": None})
    return buffer.getvalue()


# --- grouped --------------------------------------------------------------------------------


def _draw_grouped(fig: Figure, result: Result) -> bool:
    table, summary = result.table, result.summary
    assert summary is not None
    if table is None or table.empty:
        return False
    by = [b for b in summary.by or [] if b in table.columns]
    column = next((c for c in table.columns if c not in by and _is_number(table[c])), None)
    if column is None:
        return False
    if "sort" not in result.query:
        table = _calendar_order(table, by)
    labels = _group_labels(table, by)
    values = _floats(table[column])
    unit = _unit(column, result)

    rotate, step = _label_fit(labels)
    bottom = PLOT_BOTTOM + (0.0115 * max(len(s) for s in labels) if rotate else 0.0)
    ax = _axes(fig, bottom=bottom)
    if len(by) > 1:
        _shade_blocks(ax, table[by[0]].tolist())
    positions = np.arange(len(values), dtype="float64")
    if len(values) > MAX_GROUP_BARS:
        _draw_group_line(ax, positions, values)
    else:
        bars = ax.bar(positions, np.nan_to_num(values), width=0.72)
        for bar, color in zip(bars, _extreme_colors(values), strict=True):
            bar.set_color(color)
        if len(values) <= MAX_VALUE_LABELS:
            size = VALUE_PT if len(values) <= 12 else VALUE_PT - 2.5
            _label_bars(ax, bars, values, unit, size=size)
    _category_ticks(ax, labels, rotate=rotate, step=step)
    _headroom(ax, values, px=LEGEND_ROW_PX + 50)
    ax.set_xlabel(" · ".join(by), fontsize=LABEL_PT)
    ax.set_ylabel(axis_label(column, _timeframe(result), result.query), fontsize=LABEL_PT)
    if np.isfinite(values).sum() >= 2:
        hi, lo = int(np.nanargmax(values)), int(np.nanargmin(values))
        texts = _fmt_all(values, unit)
        handles = [
            Patch(color=HIGH, label=f"highest: {labels[hi]}  {texts[hi]}"),
            Patch(color=LOW, label=f"lowest: {labels[lo]}  {texts[lo]}"),
        ]
        _legend(ax, handles, loc="upper left", ncol=2)
    return True


def _draw_group_line(ax: Axes, positions: np.ndarray, values: np.ndarray) -> None:
    """Hundreds of groups (one per date, say): a line, with the extremes as dots."""
    ax.plot(*_decimate(positions, values), color=NEUTRAL, linewidth=1.6)
    if np.isfinite(values).sum() >= 2:
        for index, color in ((np.nanargmax(values), HIGH), (np.nanargmin(values), LOW)):
            ax.scatter(
                [positions[index]], [values[index]], s=110, color=color, zorder=3, clip_on=False
            )


def _calendar_order(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Weekday and month names in calendar order, not alphabetical (Fri before Mon)."""
    keys = []
    for name in by:
        col = table[name]
        names = set(col.dropna().astype(str))
        if names and names <= set(WEEKDAYS):
            keys.append(col.astype(str).map(WEEKDAYS.index).to_numpy())
        elif names and names <= set(MONTHS):
            keys.append(col.astype(str).map(MONTHS.index).to_numpy())
        else:
            keys.append(col.to_numpy())
    if not keys:
        return table
    order = pd.DataFrame(dict(enumerate(keys))).sort_values(list(range(len(keys))), kind="stable")
    return table.iloc[order.index].reset_index(drop=True)


def _group_labels(table: pd.DataFrame, by: list[str]) -> list[str]:
    """One label per group; several keys join into one: ``2024 · Mon``."""
    if not by:
        return [str(i + 1) for i in range(len(table))]
    rows = zip(*(table[name].tolist() for name in by), strict=True)
    return [" · ".join(_key_text(n, v) for n, v in zip(by, row, strict=True)) for row in rows]


def _key_text(name: str, value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return name if value else f"no {name}"
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return _date_text(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    if name.lower() == "month" and isinstance(value, (int, np.integer)) and 1 <= value <= 12:
        return MONTHS[int(value) - 1]
    return str(value)


def _shade_blocks(ax: Axes, first_key: list[Any]) -> None:
    """With several keys, every other block of the first key (a year, say) is shaded."""
    starts = [i for i in range(len(first_key)) if i == 0 or first_key[i] != first_key[i - 1]]
    ends = [*starts[1:], len(first_key)]
    for block, (start, end) in enumerate(zip(starts, ends, strict=True)):
        if block % 2:
            ax.axvspan(start - 0.5, end - 0.5, color=BAND, zorder=0, linewidth=0)


def _extreme_colors(values: np.ndarray) -> list[str]:
    colors = [NEUTRAL] * len(values)
    if np.isfinite(values).sum() >= 2:
        colors[int(np.nanargmin(values))] = LOW
        colors[int(np.nanargmax(values))] = HIGH
    return colors


# --- rows -----------------------------------------------------------------------------------


def _draw_table(fig: Figure, result: Result) -> bool:
    table = result.table
    if table is None or table.empty:
        return False
    time_col = _time_column(table)
    if time_col is None:
        column = _first_numeric(table, result.focus_columns)
        return column is not None and _draw_histogram(fig, result, table, column, [])
    ranked = _ranked_column(result, table)
    if ranked is not None:
        _draw_ranked(fig, result, table, time_col, ranked)
        return True
    return _draw_timeline(fig, result, table, time_col)


def _ranked_column(result: Result, table: pd.DataFrame) -> str | None:
    """The column to rank days by when the table is a short list rather than a series."""
    query = result.query
    if query.get("sort") and query.get("limit") and len(table) <= MAX_RANKED:
        column = str(query["sort"]).split(",")[0].split()[0]
        if column in table.columns and _is_number(table[column]):
            return column
    if query.get("where") and len(table) <= MAX_FILTERED_LIST:
        candidates = [c for c in result.focus_columns if c not in PRICE_COLUMNS]
        candidates += re.findall(r"[A-Za-z_]\w*", str(query["where"]))
        return next((c for c in candidates if c in table.columns and _is_number(table[c])), None)
    return None


def _draw_ranked(
    fig: Figure, result: Result, table: pd.DataFrame, time_col: str, column: str
) -> None:
    """One horizontal bar per row, labelled with its date, the first row on top."""
    values = _floats(table[column])
    n = len(values)
    dates = [_date_text(t, weekday=True) for t in table[time_col]]
    ranked = bool(result.query.get("sort"))
    labels = [f"{i + 1}. {d}" if ranked else d for i, d in enumerate(dates)]
    size = TICK_PT + 1 if n <= 10 else (TICK_PT - 1 if n <= 20 else TICK_PT - 3.5)
    left = 0.04 + max(len(s) for s in labels) * size * 0.6 / 72 / FIG_W_IN
    ax = _axes(fig, left=left, right=RIGHT - 0.03, grid_axis="x")
    # Signed values (a change, a gap) read by colour: red down, green up.
    signed = bool(np.isfinite(values).any() and np.nanmin(values) < 0)
    bars = ax.barh(np.arange(n), np.nan_to_num(values), height=0.7)
    for bar, v in zip(bars, np.nan_to_num(values), strict=True):
        bar.set_color((DOWN if v < 0 else UP) if signed else ACCENT)
    _label_bars(ax, bars, values, _unit(column, result), size=size)
    ax.set_yticks(np.arange(n), labels)
    ax.tick_params(axis="y", labelsize=size, length=0)
    ax.set_ylim(n - 0.4, -0.6)
    finite = values[np.isfinite(values)]
    lo, hi = min(0.0, float(finite.min(initial=0))), max(0.0, float(finite.max(initial=0)))
    pad = 0.17 * ((hi - lo) or 1.0)  # room for the value labels beyond the bars' ends
    ax.set_xlim(lo - (pad if lo < 0 else 0), hi + (pad if hi > 0 else 0))
    ax.axvline(0, color=AXIS, linewidth=1.2)
    ax.xaxis.set_major_formatter(_TickFormatter())
    ax.set_xlabel(axis_label(column, _timeframe(result), result.query), fontsize=LABEL_PT)


def _draw_timeline(fig: Figure, result: Result, table: pd.DataFrame, time_col: str) -> bool:
    """Price (or the query's main column) over time, with the query's columns beside it."""
    x = mdates.date2num(table[time_col].to_numpy())
    has_close = "close" in table.columns and _is_number(table["close"])
    focus = [c for c in result.focus_columns if c in table.columns and c != time_col]
    flags = [c for c in focus if pd.api.types.is_bool_dtype(table[c])]
    numeric = [c for c in focus if _is_number(table[c]) and c not in PRICE_COLUMNS]
    overlays = [c for c in numeric if has_close and _price_like(table[c], table["close"])]
    lower = [c for c in numeric if c not in overlays]
    if not has_close and not lower:
        first = _first_numeric(table, [])
        if first is None:
            return False
        lower = [first]
    consecutive = _consecutive(result)
    step = _bar_step(x, _timeframe(result))

    price_ax = lower_ax = None
    if has_close and lower:
        price_ax = _axes(fig, bottom=PANEL_SPLIT)
        lower_ax = _axes(fig, top=PANEL_SPLIT - 0.035, sharex=price_ax)
        price_ax.tick_params(axis="x", labelbottom=False)
    elif has_close:
        price_ax = _axes(fig)
    else:
        lower_ax = _axes(fig)

    if price_ax is not None:
        _draw_price(price_ax, x, table, consecutive=consecutive, step=step)
        _draw_overlays(price_ax, x, table, overlays, flags, step=step)
        price_ax.set_ylabel("price", fontsize=LABEL_PT)
    if lower_ax is not None:
        _draw_series(lower_ax, x, table[lower[0]], consecutive=consecutive, step=step)
        label = axis_label(lower[0], _timeframe(result), result.query)
        lower_ax.set_ylabel(label, fontsize=LABEL_PT)
    bottom_ax = lower_ax if lower_ax is not None else price_ax
    assert bottom_ax is not None
    _date_axis(bottom_ax, x, step)
    return True


def _consecutive(result: Result) -> bool:
    """Rows are consecutive bars unless a where or an event filter picked some of them."""
    if result.query.get("where"):
        return False
    joins = result.query.get("join") or []
    return not any(isinstance(j, dict) and j.get("filter") == "only" for j in joins)


def _draw_price(
    ax: Axes, x: np.ndarray, table: pd.DataFrame, *, consecutive: bool, step: float
) -> None:
    close = _floats(table["close"])
    has_ohlc = all(c in table.columns and _is_number(table[c]) for c in PRICE_COLUMNS)
    if consecutive and has_ohlc and len(table) <= MAX_CANDLES:
        _draw_candles(ax, x, table, width=0.65 * step)
    elif consecutive:
        ax.plot(*_gapped(*_decimate(x, close), step=step), color=ACCENT, linewidth=2.2)
    else:
        # Matched rows only: a faint line for the path, a dot on each matched bar.
        ax.plot(*_decimate(x, close), color=ACCENT_LIGHT, linewidth=1.4)
        if len(x) <= MAX_MARKERS:
            size = 70 if len(x) <= 100 else 22
            ax.scatter(x, close, s=size, color=ACCENT, edgecolor="white", linewidth=0.8, zorder=3)
    ax.yaxis.set_major_formatter(_TickFormatter())


def _draw_candles(ax: Axes, x: np.ndarray, table: pd.DataFrame, *, width: float) -> None:
    o, h, low, c = (_floats(table[k]) for k in PRICE_COLUMNS)
    colors = np.where(c >= o, UP, DOWN)
    ax.vlines(x, low, h, colors=colors, linewidth=1.6 if len(x) > 60 else 2.2)
    # A doji still gets a visible body: a hair of the bar's range.
    body = np.where(c != o, c - o, (h - low) * 0.02 + 1e-9)
    ax.bar(x, body, bottom=o, width=width, color=colors, edgecolor=colors, linewidth=0.8)


def _draw_overlays(
    ax: Axes,
    x: np.ndarray,
    table: pd.DataFrame,
    overlays: list[str],
    flags: list[str],
    *,
    step: float,
) -> None:
    """Price-like columns of the query as lines; event flags as markers on the close."""
    handles: list[Any] = []
    for name, color in zip(overlays, OVERLAY_COLORS, strict=False):
        lx, ly = _gapped(*_decimate(x, _floats(table[name])), step=step)
        (line,) = ax.plot(lx, ly, color=color, linewidth=2.2, label=name)
        handles.append(line)
    close = _floats(table["close"])
    for name, color in zip(flags, OVERLAY_COLORS[::-1], strict=False):
        marked = table[name].fillna(False).to_numpy(dtype=bool)
        count = int(marked.sum())
        if 0 < count <= MAX_EVENT_LINES:
            # Event days as full-height lines: a marker on the close hides in the line.
            ax.vlines(
                x[marked],
                0,
                1,
                transform=ax.get_xaxis_transform(),
                colors=color,
                linewidth=1.6,
                alpha=0.55,
                zorder=1,
            )
            handles.append(Line2D([], [], color=color, linewidth=2, label=f"{name} days"))
        elif count <= MAX_MARKERS:
            dots = ax.scatter(x[marked], close[marked], s=40, marker="v", color=color, zorder=4)
            dots.set_label(f"{name} days")
            handles.append(dots)
    if handles:
        _headroom(ax, close, px=LEGEND_ROW_PX + 25, floor=False)
        _legend(ax, handles, loc="upper left", ncol=len(handles))


def _draw_series(
    ax: Axes, x: np.ndarray, series: pd.Series, *, consecutive: bool, step: float
) -> None:
    """A column of the query under the price: bars, stems or a line, whatever fits."""
    values = _floats(series)
    finite = values[np.isfinite(values)]
    signed = finite.size > 0 and finite.min() < 0 < finite.max()
    colors = np.where(values < 0, DOWN, UP) if signed else ACCENT
    if consecutive and len(values) <= MAX_BAR_SERIES:
        ax.bar(x, np.nan_to_num(values), width=0.8 * step, color=colors)
    elif not consecutive and len(values) <= MAX_MARKERS:
        ax.vlines(x, 0, np.nan_to_num(values), colors=colors, linewidth=2.0)
        ax.scatter(x, values, s=28 if len(values) > 100 else 55, color=colors, zorder=3)
    elif len(values) > 3 * LINE_POINTS:
        # Too dense for a line to mean anything: the spread per slice, and its middle.
        bx, lo, mid, hi = _envelope(x, values)
        bx, lo, mid, hi = _gapped(bx, lo, mid, hi, step=_bar_step(bx, ""))
        ax.fill_between(bx, lo, hi, color=ACCENT_LIGHT, linewidth=0)
        ax.plot(bx, mid, color=ACCENT, linewidth=1.6)
    else:
        ax.plot(*_gapped(*_decimate(x, values), step=step), color=ACCENT, linewidth=1.8)
    if signed or not consecutive:
        ax.axhline(0, color=AXIS, linewidth=1.2)
    if (
        "rsi" in str(series.name).lower()
        and finite.size
        and 0 <= finite.min() <= finite.max() <= 100
    ):
        for level in (30, 70):  # the usual overbought/oversold lines
            ax.axhline(level, color=MUTED, linewidth=1.3, linestyle="--")
        ax.set_ylim(0, 100)
    ax.yaxis.set_major_formatter(_TickFormatter())
    ax.yaxis.set_major_locator(MaxNLocator(nbins=4))


# --- a number and the rows behind it --------------------------------------------------------


@dataclass(frozen=True)
class Aggregate:
    """One selected number: its output name, function, bare column argument and value."""

    name: str
    func: str
    column: str | None
    value: Any


def _aggregates(result: Result) -> list[Aggregate]:
    summary = result.summary
    assert summary is not None
    if summary.type == "scalar":
        pairs = [((summary.columns or ["value"])[0], summary.value)]
    else:
        pairs = list((summary.values or {}).items())
    texts = as_list(result.query.get("select"))
    out = []
    for i, (name, value) in enumerate(pairs):
        match = _AGGREGATE.match(texts[i] if i < len(texts) else name)
        func = match.group("func").lower() if match else ""
        out.append(Aggregate(name, func, match.group("arg") if match else None, value))
    return out


def _draw_aggregate(fig: Figure, result: Result) -> bool:
    rows = result.source_rows
    if rows is None or rows.empty:
        return False
    aggs = _aggregates(result)
    main = next(
        (a for a in aggs if a.func != "count" and a.column in rows and _is_number(rows[a.column])),
        None,
    )
    if main is None or main.column is None:
        return _draw_counts(fig, result, rows, aggs)
    if main.func == "sum" and _time_column(rows) is not None:
        return _draw_running_total(fig, result, rows, main, aggs)
    return _draw_histogram(fig, result, rows, main.column, aggs)


def _draw_histogram(
    fig: Figure, result: Result, rows: pd.DataFrame, column: str, aggs: list[Aggregate]
) -> bool:
    """How the column is distributed, with every answer about it as a vertical line."""
    values = _floats(rows[column])
    values = values[np.isfinite(values)]
    if values.size == 0:
        return False
    marked = [a for a in aggs if a.column == column and a.func != "count" and _finite(a.value)]
    lo, hi = _histogram_range(values, [float(a.value) for a in marked])
    inside = values[(values >= lo) & (values <= hi)]
    edges = np.histogram_bin_edges(inside, bins="auto")
    if len(edges) - 1 > MAX_HIST_BINS:
        edges = np.histogram_bin_edges(inside, bins=MAX_HIST_BINS)
    counts, edges = np.histogram(inside, bins=edges)

    ax = _axes(fig)
    ax.bar(
        edges[:-1],
        counts,
        width=np.diff(edges),
        align="edge",
        color=ACCENT_LIGHT,
        edgecolor="white",
        linewidth=0.8,
    )
    unit = _unit(column, result)
    handles: list[Any] = []
    for agg, color in zip(marked, ANSWER_COLORS, strict=False):
        ax.axvline(float(agg.value), color=color, linewidth=3.2)
        handles.append(Line2D([], [], color=color, linewidth=3.2, label=_answer(agg, result)))
    funcs = {a.func for a in marked}
    if "median" not in funcs and (funcs & {"mean", "avg"} or not aggs):
        handles.append(_reference_line(ax, "median", float(np.median(values)), unit))
    elif "median" in funcs and not funcs & {"mean", "avg"}:
        handles.append(_reference_line(ax, "mean", float(np.mean(values)), unit))
    handles += [_text_handle(_answer(a, result)) for a in aggs if a not in marked]
    word = _row_word(result)
    if below := int((values < lo).sum()):
        handles.append(_text_handle(f"{below:,} {word} below {_fmt(lo, unit)} not drawn"))
    if above := int((values > hi).sum()):
        handles.append(_text_handle(f"{above:,} {word} above {_fmt(hi, unit)} not drawn"))
    _headroom(ax, counts.astype("float64"), px=LEGEND_ROW_PX * len(handles) + 30)
    ax.xaxis.set_major_formatter(_TickFormatter())
    ax.yaxis.set_major_formatter(_TickFormatter())
    ax.set_xlabel(axis_label(column, _timeframe(result), result.query), fontsize=LABEL_PT)
    ax.set_ylabel(f"number of {_row_word(result)}", fontsize=LABEL_PT)
    _legend(ax, handles, loc="upper right")
    return True


def _histogram_range(values: np.ndarray, marks: list[float]) -> tuple[float, float]:
    """The x range to draw: a far tail would squeeze the bulk into a few bars, so it is cut
    (and counted in the legend); the answers themselves always stay in view."""
    lo, hi = float(values.min()), float(values.max())
    inner_lo, inner_hi = np.percentile(values, [HIST_TAIL, 100 - HIST_TAIL])
    stretch = 0.25 * ((inner_hi - inner_lo) or 1.0)
    if inner_lo - lo > stretch:
        lo = float(inner_lo)
    if hi - inner_hi > stretch:
        hi = float(inner_hi)
    return min([lo, *marks]), max([hi, *marks])


def _reference_line(ax: Axes, label: str, value: float, unit: str | None) -> Line2D:
    ax.axvline(value, color=INK, linewidth=2.0, linestyle="--")
    text = _with_unit(f"{label} = {_fmt(value, unit)}", unit)
    return Line2D([], [], color=INK, linewidth=2.0, linestyle="--", label=text)


def _draw_counts(fig: Figure, result: Result, rows: pd.DataFrame, aggs: list[Aggregate]) -> bool:
    """When the counted rows occurred: per year, per month, or one mark per row."""
    date_col = "trading_date" if "trading_date" in rows.columns else _time_column(rows)
    if date_col is None:
        return False
    dates = pd.DatetimeIndex(rows[date_col])
    meta = result.metadata
    assert meta is not None
    start = pd.Timestamp(meta.period_start) if meta.period_start else dates.min()
    end = pd.Timestamp(meta.period_end) if meta.period_end else dates.max()
    months = (end.year - start.year) * 12 + end.month - start.month + 1
    if end.year - start.year >= 2:
        freq, per, label = "Y", "year", "%Y"
    elif months >= 3:
        freq, per, label = "M", "month", "%b %Y"
    elif len(rows) > MAX_COUNTED_DOTS:  # intraday bars: how many each day
        freq, per, label = "B", "day", "%b %d"
    else:
        return _draw_counted_days(fig, result, rows, aggs)
    values, labels = _count_per(dates, start, end, freq, label)

    rotate, step = _label_fit(labels)
    ax = _axes(fig, bottom=PLOT_BOTTOM + (0.09 if rotate else 0.0))
    bars = ax.bar(np.arange(len(values)), values, width=0.72, color=ACCENT)
    if len(values) <= MAX_VALUE_LABELS:
        _label_bars(ax, bars, values, None, size=VALUE_PT, bold=False)
    _category_ticks(ax, labels, rotate=rotate, step=step)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=6))
    ax.yaxis.set_major_formatter(_TickFormatter())
    _headroom(ax, values, px=LEGEND_ROW_PX * len(aggs) + 50)
    ax.set_ylabel(f"matched {_row_word(result)} per {per}", fontsize=LABEL_PT)
    _legend(ax, [_text_handle(_answer(a, result)) for a in aggs], loc="upper left")
    return True


def _count_per(
    dates: pd.DatetimeIndex, start: pd.Timestamp, end: pd.Timestamp, freq: str, label: str
) -> tuple[np.ndarray, list[str]]:
    """Rows per year, month or business day from start to end, empty periods included."""
    if freq == "B":
        slots = pd.bdate_range(start.normalize(), end.normalize())
        counts = dates.normalize().value_counts().reindex(slots, fill_value=0)
    else:
        slots = pd.period_range(start, end, freq=freq)
        counts = dates.to_period(freq).value_counts().reindex(slots, fill_value=0)
    return counts.to_numpy(dtype="float64"), [s.strftime(label) for s in slots]


def _draw_counted_days(
    fig: Figure, result: Result, rows: pd.DataFrame, aggs: list[Aggregate]
) -> bool:
    """A short period: the close of every counted bar, on its date."""
    time_col = _time_column(rows)
    if time_col is None or "close" not in rows.columns:
        return False
    x = mdates.date2num(rows[time_col].to_numpy())
    ax = _axes(fig)
    step = _bar_step(x, _timeframe(result))
    _draw_price(ax, x, rows, consecutive=False, step=step)
    _headroom(ax, _floats(rows["close"]), px=LEGEND_ROW_PX * len(aggs) + 30, floor=False)
    ax.set_ylabel(f"close on counted {_row_word(result)}", fontsize=LABEL_PT)
    _date_axis(ax, x, step)
    _legend(ax, [_text_handle(_answer(a, result)) for a in aggs], loc="upper left")
    return True


def _draw_running_total(
    fig: Figure, result: Result, rows: pd.DataFrame, main: Aggregate, aggs: list[Aggregate]
) -> bool:
    """A sum as the running total over time, ending at the answer."""
    time_col = _time_column(rows)
    assert time_col is not None and main.column is not None
    x = mdates.date2num(rows[time_col].to_numpy())
    total = np.nancumsum(_floats(rows[main.column]))
    ax = _axes(fig)
    ax.plot(*_decimate(x, total), color=ACCENT, linewidth=2.4)
    ax.scatter([x[-1]], [total[-1]], s=90, color=ANSWER_COLORS[0], zorder=3)
    ax.axhline(0, color=AXIS, linewidth=1.2)
    ax.yaxis.set_major_formatter(_TickFormatter())
    _headroom(ax, total, px=LEGEND_ROW_PX * len(aggs) + 30, floor=False)
    label = axis_label(main.column, _timeframe(result), result.query)
    ax.set_ylabel(f"running total of {label}", fontsize=LABEL_PT)
    _date_axis(ax, x)
    _legend(ax, [_text_handle(_answer(a, result)) for a in aggs], loc="upper left")
    return True


def _answer(agg: Aggregate, result: Result) -> str:
    """``mean_range = 239.9 points``: the number the person asked for, with its unit."""
    unit = _unit(agg.name, result) or (_unit(agg.column, result) if agg.column else None)
    return _with_unit(f"{agg.name} = {_fmt(agg.value, unit)}", unit)


def _with_unit(text: str, unit: str | None) -> str:
    """Words after the number ("points", "days"); "%" is already glued to it."""
    return text if unit in (None, "%", "price") else f"{text} {unit}"


def _text_handle(label: str) -> Line2D:
    """A legend row with no line: a value that has no place on the axes."""
    return Line2D([], [], linestyle="none", marker="none", label=label)


# --- frame, axes and text -------------------------------------------------------------------


def _decorate(fig: Figure, result: Result) -> None:
    """Title (instrument, session, timeframe, period), what was computed, source, footer."""
    meta = result.metadata
    assert meta is not None
    title = chart_title(meta)
    fig.text(0.016, TITLE_Y, title, fontsize=TITLE_PT, fontweight="bold", color=INK, va="center")
    subtitle = chart_subtitle(result.query)
    fig.text(0.016, SUBTITLE_Y, subtitle, fontsize=SUBTITLE_PT, color=MUTED, va="center")
    footer = f"{meta.rows_matched:,} of {meta.rows_scanned:,} {meta.timeframe} bars matched"
    if meta.truncated:
        footer += " · table cut for display"
    if meta.data_source == "synthetic":
        footer += " · synthetic sample, not market history"
        badge = {"boxstyle": "round,pad=0.45", "facecolor": SYNTHETIC, "edgecolor": "none"}
        fig.text(
            0.984,
            TITLE_Y,
            "SYNTHETIC DATA",
            fontsize=15,
            fontweight="bold",
            color="white",
            ha="right",
            va="center",
            bbox=badge,
        )
    fig.text(0.016, FOOTER_Y, footer, fontsize=FOOTER_PT, color=MUTED, va="center")
    fig.text(
        0.984,
        FOOTER_Y,
        "Barb",
        fontsize=FOOTER_PT,
        fontweight="bold",
        color=MUTED,
        ha="right",
        va="center",
    )


def _axes(
    fig: Figure,
    *,
    left: float = LEFT,
    right: float = RIGHT,
    bottom: float = PLOT_BOTTOM,
    top: float = PLOT_TOP,
    grid_axis: str = "y",
    sharex: Axes | None = None,
) -> Axes:
    """Axes at a fixed place: faster than a layout engine, and every chart lines up."""
    ax = fig.add_axes((left, bottom, right - left, top - bottom), sharex=sharex)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set(color=AXIS, linewidth=1.2)
    ax.tick_params(labelsize=TICK_PT, colors=INK, length=5, width=1.2)
    ax.xaxis.label.set_color(INK)
    ax.yaxis.label.set_color(INK)
    ax.grid(True, axis=grid_axis, color=GRID, linewidth=1.0)
    ax.set_axisbelow(True)
    return ax


def _legend(ax: Axes, handles: list[Any], *, loc: str, ncol: int = 1) -> None:
    if not handles:
        return
    text_only = all(isinstance(h, Line2D) and h.get_linestyle() == "None" for h in handles)
    legend = ax.legend(
        handles=handles,
        loc=loc,
        ncol=ncol,
        fontsize=LABEL_PT,
        frameon=True,
        handlelength=0 if text_only else 1.6,
        handletextpad=0 if text_only else 0.8,
        borderpad=0.5,
        labelspacing=0.4,
        columnspacing=1.6,
    )
    legend.get_frame().set(edgecolor=GRID, linewidth=1.0, alpha=0.95)
    for text in legend.get_texts():
        text.set_color(INK)


def _label_bars(
    ax: Axes,
    bars: BarContainer,
    values: np.ndarray,
    unit: str | None,
    *,
    size: float,
    bold: bool = True,
) -> None:
    labels = _fmt_all(values, unit)
    ax.bar_label(
        bars,
        labels=labels,
        padding=3,
        fontsize=size,
        color=INK,
        fontweight="bold" if bold else "normal",
    )


def _label_fit(labels: list[str]) -> tuple[bool, int]:
    """Whether category labels need rotating, and every how many to show, so none overlap."""
    char_px = TICK_PT * PX_PER_PT * 0.62
    slot_px = (RIGHT - LEFT) * FIG_W_IN * 100 / max(len(labels), 1)
    longest = max(len(s) for s in labels)
    widest = longest * char_px + 10
    if widest <= slot_px:
        return False, 1
    if longest <= 5:  # years, hours: thin them out, keep them level
        return False, math.ceil(widest / slot_px)
    # Rotated labels need about two line heights each, and more than ~24 is a wall of text.
    step = max(math.ceil(TICK_PT * PX_PER_PT * 1.9 / slot_px), math.ceil(len(labels) / 24))
    return True, max(1, step)


def _category_ticks(ax: Axes, labels: list[str], *, rotate: bool, step: int) -> None:
    positions = np.arange(0, len(labels), step)
    ax.set_xticks(positions, [labels[i] for i in positions])
    if rotate:
        for text in ax.get_xticklabels():
            text.set(rotation=40, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.yaxis.set_major_formatter(_TickFormatter())


def _date_axis(ax: Axes, x: np.ndarray, step: float = 1.0) -> None:
    locator = mdates.AutoDateLocator(minticks=4, maxticks=9)
    # Every label names its day or month ("Jan 07", not "07"): the offset line is dropped,
    # the title already carries the dates.
    formatter = mdates.ConciseDateFormatter(
        locator,
        formats=["%Y", "%b", "%b %d", "%H:%M", "%H:%M", "%S.%f"],
        zero_formats=["", "%Y", "%b", "%b %d", "%H:%M", "%H:%M"],
        show_offset=False,
    )
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(formatter)
    if len(x):
        lo, hi = float(np.nanmin(x)), float(np.nanmax(x))
        # A few bars still get an axis of dates around them, not hours around one candle.
        pad = max(0.01 * (hi - lo), (8 * step - (hi - lo)) / 2, step)
        ax.set_xlim(lo - pad, hi + pad)


def _headroom(ax: Axes, values: np.ndarray, *, px: float, floor: bool = True) -> None:
    """Room above the data for value labels and a legend, ``px`` pixels tall."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return
    lo, hi = float(finite.min()), float(finite.max())
    if floor:  # bars start at zero
        lo, hi = min(0.0, lo), max(0.0, hi)
    span = (hi - lo) or abs(hi) or 1.0
    bottom = lo - (0.06 * span if lo < 0 or not floor else 0)
    height_px = ax.get_position().height * FIG_H_IN * 100
    share = min(px / height_px, 0.5)
    ax.set_ylim(bottom, hi + share * (hi - bottom) / (1 - share))


class _TickFormatter(Formatter):
    """Thousands separators and only the decimals the tick step needs (4, not 4.0)."""

    def __init__(self) -> None:
        self.decimals = 0

    def set_locs(self, locs: Any) -> None:
        super().set_locs(locs)
        steps = np.diff(np.sort(np.asarray(locs, dtype="float64")))
        step = float(steps.min()) if steps.size else 1.0
        self.decimals = 0
        while self.decimals < 4:
            scaled = step * 10**self.decimals
            if abs(scaled - round(scaled)) <= 1e-6 * max(1.0, scaled):
                break
            self.decimals += 1

    def __call__(self, x: float, pos: int | None = None) -> str:
        return _signed(f"{x + 0.0:,.{self.decimals}f}")


def _decimals(values: np.ndarray) -> int:
    """One precision for a whole chart's labels, from its largest value."""
    finite = np.abs(values[np.isfinite(values)])
    if finite.size == 0 or np.all(finite == np.round(finite)):
        return 0
    top = float(finite.max())
    return 0 if top >= 1000 else 1 if top >= 10 else 2 if top >= 1 else 3


def _fmt_all(values: np.ndarray, unit: str | None) -> list[str]:
    decimals = _decimals(values)
    return [_fmt(v, unit, decimals=decimals) for v in values]


def _fmt(value: Any, unit: str | None = None, *, decimals: int | None = None) -> str:
    """A value as a trader reads it: 4,512 · 245.4 · 1.27 · −5.06%."""
    if not _finite(value):
        return "n/a" if not isinstance(value, str) else value
    v = float(value)
    if decimals is None:
        decimals = _decimals(np.array([v]))
    text = _signed(f"{v + 0.0:,.{decimals}f}")
    return text + "%" if unit == "%" else text


def _signed(text: str) -> str:
    """A true minus sign; "-0.0" rounds to plain zero."""
    if text.startswith("-") and not text.strip("-0.,"):
        text = text[1:]
    return text.replace("-", "\u2212")


def _envelope(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per slice of the x axis: its first x, and the lowest, middle and highest y."""
    grid, offsets = _buckets(y, LINE_POINTS // 2)
    with np.errstate(all="ignore"):
        lo = np.nanmin(np.where(np.isnan(grid), np.inf, grid), axis=1)
        hi = np.nanmax(np.where(np.isnan(grid), -np.inf, grid), axis=1)
        mid = np.nanmean(grid, axis=1)
    return x[offsets], lo, mid, hi


def _decimate(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep each slice's lowest and highest point: the line looks the same, drawn fast."""
    if len(x) <= LINE_POINTS:
        return x, y
    grid, offsets = _buckets(y, LINE_POINTS // 2)
    lows = np.argmin(np.where(np.isnan(grid), np.inf, grid), axis=1) + offsets
    highs = np.argmax(np.where(np.isnan(grid), -np.inf, grid), axis=1) + offsets
    keep = np.unique(np.concatenate((lows, highs)))
    keep = keep[keep < len(x)]
    return x[keep], y[keep]


def _gapped(x: np.ndarray, *ys: np.ndarray, step: float) -> tuple[np.ndarray, ...]:
    """A break (NaN) where the bars pause for long, a weekend say, instead of a straight
    line bridging it. The daily maintenance hour is no break: lines stay whole each week."""
    if len(x) < 2:
        return (x, *ys)
    gaps = np.flatnonzero(np.diff(x) > max(4.5 * step, GAP_DAYS)) + 1
    if not gaps.size:
        return (x, *ys)
    return tuple(np.insert(np.asarray(a, dtype="float64"), gaps, np.nan) for a in (x, *ys))


def _buckets(y: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``y`` as ``count`` rows of equal length (the last padded with NaN), and row starts."""
    size = math.ceil(len(y) / count)
    count = math.ceil(len(y) / size)
    padded = np.full(count * size, np.nan)
    padded[: len(y)] = y
    return padded.reshape(count, size), np.arange(count) * size


def _unit(column: str, result: Result) -> str | None:
    return column_unit(column, _timeframe(result), result.query)


def _floats(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def _finite(value: Any) -> bool:
    numeric = isinstance(value, (int, float, np.integer, np.floating))
    return numeric and not isinstance(value, bool) and math.isfinite(value)


def _is_number(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _first_numeric(frame: pd.DataFrame, preferred: list[str]) -> str | None:
    names = [c for c in preferred if c in frame.columns] + list(frame.columns)
    return next((c for c in names if _is_number(frame[c])), None)


def _time_column(frame: pd.DataFrame) -> str | None:
    for name in ("timestamp", "trading_date"):
        if name in frame.columns and pd.api.types.is_datetime64_any_dtype(frame[name]):
            return name
    return None


def _price_like(series: pd.Series, close: pd.Series) -> bool:
    """A column on the price's scale (a moving average, a level) belongs on the price axes."""
    level, ref = pd.to_numeric(series, errors="coerce").median(), close.median()
    return bool(np.isfinite(level) and ref and 0.7 <= level / ref <= 1.3)


def _bar_step(x: np.ndarray, timeframe: str) -> float:
    """Days between bars: the usual gap in the data, or the timeframe's length for one bar."""
    if len(x) > 1:
        return float(np.median(np.diff(x)))
    return BAR_DAYS.get(timeframe) or _intraday_days(timeframe)


def _intraday_days(timeframe: str) -> float:
    match = re.fullmatch(r"(\d+)([mh])", timeframe)
    if not match:
        return 1.0
    minutes = int(match.group(1)) * (60 if match.group(2) == "h" else 1)
    return minutes / 1440


def _timeframe(result: Result) -> str:
    return result.metadata.timeframe if result.metadata else "daily"


def _row_word(result: Result) -> str:
    return "days" if _timeframe(result) == "daily" else "bars"


def _date_text(value: Any, *, weekday: bool = False) -> str:
    ts = pd.Timestamp(value)
    text = ts.strftime("%Y-%m-%d %H:%M" if ts.hour or ts.minute else "%Y-%m-%d")
    return f"{ts.strftime('%a')} {text}" if weekday else text

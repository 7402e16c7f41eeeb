"""How every chart looks: figure size, font sizes, colours, layout, and the frame around the
plot (title, what was computed, the synthetic-data badge, the footer)."""

from __future__ import annotations

from matplotlib.figure import Figure

from barb.proof_names import chart_subtitle, chart_title
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


def new_figure(width_px: int) -> Figure:
    """A blank 16:9 figure ``width_px`` wide; sizes are in points at 100 dpi, so the dpi
    follows the width and the picture scales as a whole."""
    return Figure(figsize=(FIG_W_IN, FIG_H_IN), dpi=width_px / FIG_W_IN, facecolor="white")


def decorate(fig: Figure, result: Result) -> None:
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
    if meta.data_source != "synthetic":
        footer += f" · data: {meta.data_description}"  # the imported file and its dates
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

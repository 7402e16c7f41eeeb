"""How every chart looks: a portrait figure for a phone, font sizes, colours and layout.

The figure is 6 × 7.5 inches (4:5, portrait) and sizes are in points at 100 dpi: whatever
``width_px`` it is rendered at, a Telegram photo shown 360 px wide draws a point as
360 / 432 ≈ 0.83 px, so tick labels (13.5 pt) come out about 11 px tall and the title
(19 pt) about 16 px, readable on a phone without zooming.
"""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

FIG_W_IN, FIG_H_IN = 6.0, 7.5
PX_PER_PT = 100 / 72
DEFAULT_WIDTH_PX = 900  # a phone's width at 2.5 device pixels per point

# Point sizes at 100 dpi, relative to a figure 432 pt wide.
TITLE_PT = 19
SCOPE_PT = 12.5
SUBTITLE_PT = 12
LABEL_PT = 14
LEGEND_PT = 13
TICK_PT = 13.5
VALUE_PT = 13
FOOTER_PT = 11.5
BADGE_PT = 11

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
# A where's mean over all the period's rows (the base rate the answer is read against):
# grey and dashed, unlike any answer's solid coloured line or the histogram's black median.
BASELINE_LINE = {"color": AXIS, "linewidth": 2.6, "linestyle": (0, (4, 2.5))}
OVERLAY_COLORS = ("#ea580c", "#7c3aed", "#0d9488", "#be185d")
ANSWER_COLORS = ("#dc2626", "#7c3aed", "#0d9488", "#ea580c", "#be185d")

# Layout in figure fractions: a header band (title of up to two lines, the data's scope,
# what was computed), the plot, a footer line. Axis names sit above each plot, level, so
# the narrow figure spends no width on rotated y labels.
MARGIN_X = 0.03
LEFT, RIGHT = 0.15, 0.965
PLOT_TOP, PLOT_BOTTOM = 0.74, 0.125
PANEL_GAP = 0.075  # between stacked panels: room for the lower panel's axis name
PANEL_SPLIT = 0.45  # price above, the query's column below
TITLE_TOP = 0.985
FOOTER_Y = 0.022
LEGEND_ROW_PX = 30


def new_figure(width_px: int) -> Figure:
    """A blank portrait figure ``width_px`` wide; sizes are in points at 100 dpi, so the dpi
    follows the width and the picture scales as a whole. It comes with its Agg canvas: the
    drawing measures text as it goes (a legend fitted to the width), which needs a renderer."""
    fig = Figure(figsize=(FIG_W_IN, FIG_H_IN), dpi=width_px / FIG_W_IN, facecolor="white")
    FigureCanvasAgg(fig)
    return fig


def chars_per_line(points: float, width: float = 1 - 2 * MARGIN_X) -> int:
    """About how many characters of a ``points`` font fit across ``width`` of the figure."""
    return int(width * FIG_W_IN * 72 / (points * 0.58))

"""The chart that proves an answer: one 1280×720 PNG per result, chosen from its shape.

- grouped (``grouped.py``): one bar per group, the highest and lowest in their own colours;
- rows over time (``rows.py``, ``price.py``): price (candles for a few consecutive bars, else
  a line) with the query's own columns overlaid when they are on the price's scale, or in a
  lower panel; a short ranked or filtered list of days is one horizontal bar per day, which
  reads better than a few dots spread over 18 years;
- a number or a few numbers (``aggregates.py``, ``histogram.py``): the rows behind them, as
  a histogram of the averaged column with each answer marked, or, for ``count()``, when the
  counted rows occurred.

Figures are built with ``Figure`` + ``FigureCanvasAgg``, never through pyplot, so rendering
touches no global state and needs no display. Sizes are in points at 100 dpi and the dpi
follows ``width_px``, so the picture scales as a whole.

A chart is rendered per answered question, so its cost counts: bars are one collection
(``bars.py``), ticks are pinned to those in view before drawing (``axes.fix_ticks``), the
PNG is written without Pillow's filter search (``png.py``), and the figure's garbage is
collected while young (``render.py``). None of it changes a pixel.
"""

from barb.charts.render import render_chart

__all__ = ["render_chart"]

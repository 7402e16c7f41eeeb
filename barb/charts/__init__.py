"""The chart that proves an answer: one portrait PNG per result, sized for a phone, in the
person's language (``language="en"`` or ``"ru"``; the words are in the ``barb`` catalog,
``locales/<lang>/LC_MESSAGES/barb.po``, read by ``words.py``).

What the number means picks the drawing:

- a correlation (``scatter.py``): the rows as points of its two columns, the fit line, r in
  the headline;
- a value "now" (``latest.py``): the series it is the latest value of, the value marked;
- grouped (``grouped.py``): one bar per group, the highest and lowest in their own colours,
  each aggregate in its own panel, empty groups of a count shown as zero, times of day as
  ``09:30``;
- rows over time (``rows.py``, ``price.py``, ``series.py``): price (candles for a few
  consecutive bars, else a line) with the query's own columns overlaid when they are on the
  price's scale, or in a lower panel, those in one unit together (NQ's and ES's returns); a
  short ranked or filtered list of days is one horizontal bar per day; one row is a card of
  its values (``one_row.py``);
- a number or a few numbers (``aggregates.py``, ``histogram.py``): the rows behind them, as
  a histogram of the averaged column with each answer marked, or, for ``count()``, when the
  counted rows occurred;
- a share of rows, the mean of a condition (``shares.py``): the share per year, month, week
  or day as bars, the answer as a line across them, the rows each bar counts in it;
- a min or max of a column measured from a running high or low, a drawdown
  (``drawdown.py``): the column over time, the answer and the high it fell from marked and
  dated.

Every chart is headed by its headline (``headline.py``), the number it proves in one line,
which is also the photo's caption: ``render_answer`` gives both from one computation.

Figures are built with ``Figure`` + ``FigureCanvasAgg``, never through pyplot, so rendering
touches no global state and needs no display. Sizes are in points at 100 dpi and the dpi
follows ``width_px``, so the picture scales as a whole.

A chart is rendered per answered question, so its cost counts: bars are one collection
(``bars.py``), ticks are pinned to those in view before drawing (``axes.fix_ticks``), the
PNG is written without Pillow's filter search (``png.py``), and the figure's garbage is
collected while young (``render.py``). None of it changes a pixel.
"""

from barb.charts.headline import chart_headline
from barb.charts.render import RenderedChart, draw_chart, render_answer, render_chart

__all__ = ["RenderedChart", "chart_headline", "draw_chart", "render_answer", "render_chart"]

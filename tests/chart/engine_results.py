"""Running a query on the sample and reading back the chart drawn for it."""

from __future__ import annotations

import numpy as np
from asking import as_read as as_read  # as the model's text gives a number
from duckdb_answers import RTH as RTH  # the chart tests' RTH is the engine tests' own
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.text import Text

from barb import execute
from barb.charts import draw_chart
from barb.result import Result
from barb.settings import EngineSettings


def run(query: dict, settings: EngineSettings) -> Result:
    result = execute(query, "NQ", settings=settings)
    assert result.ok, result.to_dict()
    return result


def figure(result: Result, language: str = "en") -> Figure:
    fig = draw_chart(result, language=language)
    assert fig is not None
    fig.canvas.draw()
    return fig


def title(fig: Figure) -> str:
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return max(texts, key=lambda t: t.get_fontsize()).get_text()


def bar_heights(ax: Axes) -> np.ndarray:
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return np.array([p.vertices[2, 1] - p.vertices[0, 1] for p in bars.get_paths()])


def bar_widths(ax: Axes) -> np.ndarray:
    """The lengths of horizontal bars, signed, from the base at zero."""
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    return np.array([p.vertices[2, 0] - p.vertices[0, 0] for p in bars.get_paths()])

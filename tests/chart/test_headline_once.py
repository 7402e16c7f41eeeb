"""An answer's headline is worked out once: a worker drew the chart (its title fitted from the
headline's forms) and then worked the caption out again with ``chart_headline``, reading the
groups and writing every value twice. ``render_answer`` gives both from one computation, the
same PNG and the same caption."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import chart_factories as make
import pandas as pd
import pytest

import barb.charts.headline
import barb.charts.render
from bot.pool.jobs import QueryJob, run_query_job

RU_WEEKDAYS = ["Пн", "Вт", "Ср", "Чт", "Пт"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every call of ``headline_forms``, wherever it is called from, counted."""
    calls: list[int] = []
    real: Callable[..., Any] = barb.charts.headline.headline_forms

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    for module in (barb.charts.headline, barb.charts.render):
        monkeypatch.setattr(module, "headline_forms", counting)
    return calls


@pytest.mark.slow
def test_an_answer_works_out_its_headline_once(
    sample_settings, days, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "dayname()",
        "select": "mean(range) as mean_range",
    }
    means = (days["high"] - days["low"]).groupby(pd.DatetimeIndex(days.index).dayofweek).mean()
    high, low = int(means.idxmax()), int(means.idxmin())
    top, bottom = (f"{means[d]:.2f}".replace(".", ",") for d in (high, low))
    calls = counted(monkeypatch)
    outcome = run_query_job(QueryJob(query=query, language="ru", csv=False))
    assert len(calls) == 1
    # NQ's weekdays are within noise of each other: their span, no winner (p47d D1).
    assert outcome.headline == (
        f"средний диапазон: {RU_WEEKDAYS[low]} {bottom} – {RU_WEEKDAYS[high]} {top} "
        "пункта (разница в пределах шума)"
    )
    assert outcome.chart_png is not None and outcome.chart_png.startswith(PNG_SIGNATURE)


@pytest.mark.parametrize("shape", sorted(make.ALL_SHAPES))
def test_render_answer_is_the_chart_and_its_caption(shape: str) -> None:
    from barb.charts import chart_headline, render_answer, render_chart

    result = make.ALL_SHAPES[shape]()
    for language in ("en", "ru"):
        answer = render_answer(result, language=language)
        assert answer.headline == chart_headline(result, language)
        assert answer.png == render_chart(result, language=language)

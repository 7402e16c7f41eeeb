"""A chart's title names what it measures whenever a form of it that does fits, in three
lines if it must: ETH's hours by their average range read "▲ 15:00 62.06 · ▼ 21:00 17.54,
within noise of 7 others", two lines that never said it was the range (now "average range:
▲ 15:00 62.06 · ▼ 21:00 17.54 (+7 within noise)"). Checked on the drawn
figure against DuckDB over the sample's minute bars."""

from __future__ import annotations

import duckdb
import pytest
from engine_results import figure, run
from test_reading_texts import numbers, title_lines

from barb.settings import EngineSettings

MARKS = {"highest": "▲\u00a0", "lowest": "▼\u00a0"}
QUERY = {"session": "ETH", "from": "1h", "group_by": "hour()", "select": "mean(range)"}


@pytest.mark.parametrize(
    ("language", "name"), [("en", "average range: "), ("ru", "средний диапазон: ")]
)
def test_hours_title_names_the_range_with_both_ends(
    sample_settings: EngineSettings, con: duckdb.DuckDBPyConnection, language: str, name: str
) -> None:
    hours = con.execute(
        """
        WITH bars AS (SELECT date_trunc('hour', timestamp) AS t, max(high) - min(low) AS r
                      FROM nq GROUP BY 1)
        SELECT hour(t) AS h, avg(r) AS r FROM bars GROUP BY 1 ORDER BY r
        """
    ).df()
    low, high = hours.iloc[0], hours.iloc[-1]
    lines = title_lines(figure(run(QUERY, sample_settings), language))
    drawn = " ".join(lines)
    assert drawn.startswith(name), lines
    assert len(lines) <= 3 and "…" not in drawn
    assert f"{int(high.h):02d}:00" in drawn and f"{int(low.h):02d}:00" in drawn
    values = numbers(drawn.replace(f"{int(high.h):02d}:00", "").replace(f"{int(low.h):02d}:00", ""))
    if language == "ru":
        assert values[0] == pytest.approx(high.r, abs=0.006)
        assert values[1] == pytest.approx(low.r, abs=0.006)
    else:  # "highest 15:00 62.06, …" or "▲ 15:00 62.06 · ▼ 21:00 17.54 (+7 within noise)"
        for word, value in (("highest", high.r), ("lowest", low.r)):
            side = drawn.split(f"{word} " if f"{word} " in drawn else MARKS[word])[1]
            assert float(side.split()[1].rstrip(",")) == pytest.approx(value, abs=0.006)

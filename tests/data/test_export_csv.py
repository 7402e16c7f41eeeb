"""What leaves Barb is clean: CSV times with their offset, prices on the tick, plain numbers,
UTF-8, and the data's source named in the file and on the chart."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import bar_files as bf
import pandas as pd
import pytest

from barb.charts import draw_chart
from barb.data.importer import import_file
from barb.export import csv_bytes
from barb.interpreter import execute
from barb.settings import EngineSettings


@pytest.fixture
def imported(tmp_path: Path, settings: EngineSettings) -> pd.DataFrame:
    bars = bf.week_of_bars()
    import_file(bf.plain_csv(tmp_path / "my bars.csv", bars), "NQ", settings)
    return bars


def rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))


def test_times_carry_their_offset_and_read_back_to_the_same_instants(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    result = execute({"session": "ETH", "from": "1h"}, "NQ", settings=settings)
    assert result.error is None
    data = csv_bytes(result)
    first = rows(data)[0]
    assert first["timestamp"] == "2024-03-17T18:00:00-04:00"
    back = pd.read_csv(io.BytesIO(data))
    instants = pd.to_datetime(back["timestamp"], utc=True)
    hourly = imported.set_index("timestamp").resample("1h").first().dropna()
    assert instants.tolist()[:5] == hourly.index.tz_convert("UTC").tolist()[:5]


def test_prices_are_on_the_tick_and_numbers_plain(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    query = {"session": "RTH", "from": "daily", "map": {"mid": "(high + low) / 2"}}
    result = execute(query, "NQ", settings=settings)
    assert result.error is None
    table = rows(csv_bytes(result))
    assert table[0]["date"] == "2024-03-18"  # a daily bar is named by its date
    for row in table:
        for column in ("open", "high", "low", "close", "range"):
            price = row[column]
            assert float(price) * 4 == int(float(price) * 4)  # NQ's tick is 0.25
            assert len(price.split(".")[1]) == 2
        assert "e" not in row["volume"].lower() and "," not in row["volume"]
    # A computed column keeps its precision, written without an exponent.
    big = execute(
        {"session": "ETH", "from": "daily", "map": {"v": "volume * 1000000.5"}, "select": "v"},
        "NQ",
        settings=settings,
    )
    value = rows(csv_bytes(big))[0]["v"]
    assert "e" not in value.lower() and "," not in value
    assert float(value) == pytest.approx(big.table["v"].iloc[0], rel=1e-9)


def test_the_source_is_named_in_the_csv_and_the_chart(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    result = execute(
        {"session": "RTH", "from": "daily", "select": "mean(range)"}, "NQ", settings=settings
    )
    source = rows(csv_bytes(result))[0]["source"]
    # The file's dates as a chart's scope writes a period, in any language: not "… to …".
    assert source == "my bars.csv, 2024-03-18 — 2024-03-22"
    assert result.metadata.data_description == source
    fig = draw_chart(result)
    assert fig is not None
    # A footer too wide for the phone-width figure wraps to a second line.
    footers = [t.get_text().replace("\n", " ") for t in fig.texts if "bars" in t.get_text()]
    assert footers == [f"5 of 5 daily bars matched · data: {source}"]
    fig = draw_chart(result, language="ru")
    assert fig is not None
    footers = [t.get_text().replace("\n", " ") for t in fig.texts if "бары" in t.get_text()]
    assert footers == [f"подошло 5 из 5 (дневные бары) · данные: {source}"]


@pytest.mark.slow
def test_the_sample_is_named_synthetic_in_the_csv(sample_settings: EngineSettings) -> None:
    result = execute(
        {"session": "RTH", "from": "daily", "period": "2024-01", "select": "close"},
        "NQ",
        settings=sample_settings,
    )
    assert {row["source"] for row in rows(csv_bytes(result))} == {
        "synthetic sample, not market data"
    }


def test_only_traded_prices_are_rounded(
    tmp_path: Path, imported: pd.DataFrame, settings: EngineSettings
) -> None:
    import_file(bf.plain_csv(tmp_path / "es.csv", imported), "ES", settings)
    joined = execute(
        {"session": "RTH", "from": "1h", "join": {"instrument": "ES"}, "period": "2024-03-18"},
        "NQ",
        settings=settings,
    )
    assert joined.error is None
    first = rows(csv_bytes(joined))[0]
    assert first["es_close"] == f"{joined.table['es_close'].iloc[0]:.2f}"
    grouped = execute(
        {"session": "ETH", "from": "1h", "group_by": "hour()", "select": "mean(range)"},
        "NQ",
        settings=settings,
    )
    name = grouped.table.columns[-1]
    values = [float(r[name]) for r in rows(csv_bytes(grouped))]
    assert values == pytest.approx(grouped.table[name].tolist(), rel=1e-9)
    assert any(v * 4 != int(v * 4) for v in values)  # means are not forced onto the tick


def test_prices_off_the_tick_are_written_as_they_are(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A back-adjusted series sits off NQ's 0.25 tick: the answer said open 18100.13 and the
    CSV, rounding to the tick, 18100.25."""
    bars = bf.week_of_bars()
    for column in ("open", "high", "low", "close"):
        bars[column] = bars[column] + 0.13
    import_file(bf.plain_csv(tmp_path / "adjusted.csv", bars), "NQ", settings)
    result = execute({"session": "ETH", "from": "daily"}, "NQ", settings=settings)
    assert result.error is None
    # Trading dates by pandas: a bar from 18:00 New York counts for the next day.
    dates = (bars["timestamp"].dt.tz_localize(None) + pd.Timedelta(hours=6)).dt.date
    daily = bars.groupby(dates).agg(open=("open", "first"), high=("high", "max"))
    table = rows(csv_bytes(result))
    assert [row["date"] for row in table] == [str(d) for d in daily.index]
    assert [float(row["open"]) for row in table] == daily["open"].tolist()
    assert [float(row["high"]) for row in table] == daily["high"].tolist()
    assert table[0]["open"] == f"{daily['open'].iloc[0]:.2f}"  # 18002.13, no float noise

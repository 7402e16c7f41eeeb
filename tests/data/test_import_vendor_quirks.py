"""What real vendor files do that the plain layouts do not: day-first slash dates, prices
quoted in full, decimal commas after whole-number rows, missing volume columns, macOS zips.
Each file is made by the test from ``bar_files``' week of bars, and what is stored is
compared with the bars that went in."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bar_files as bf
import numpy as np
import pandas as pd
import pytest

from barb.data import formats
from barb.data.importer import ImportRefused, check_file, import_file
from barb.data.store import data_path, read_bars
from barb.errors import DataError
from barb.settings import EngineSettings

PRICES = ["open", "high", "low", "close", "volume"]


def assert_stored(settings: EngineSettings, bars: pd.DataFrame, volume: bool = True) -> None:
    frame, _ = read_bars(data_path("NQ", settings))
    wall = bars["timestamp"].dt.tz_localize(None)
    assert frame["timestamp"].tolist() == wall.tolist()
    for column in PRICES if volume else PRICES[:4]:
        assert frame[column].tolist() == pytest.approx(bars[column].tolist()), column


# --- slash dates: day first or month first -------------------------------------------------


@pytest.mark.parametrize(
    "first_sunday",
    [
        dt.date(2024, 3, 3),  # 4-8 March: every field 12 or less, told by --date-order
        dt.date(2024, 3, 10),  # 10-15 March: a day over 12 says day first
    ],
)
def test_day_first_slash_dates_are_read_day_first(
    first_sunday: dt.date, tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars(first_sunday)
    path = bf.european_csv(tmp_path / "eu.csv", bars, date_format="%d/%m/%Y")
    order = "day-first" if first_sunday.day < 10 else None
    result = import_file(path, "NQ", settings, date_order=order)
    assert_stored(settings, bars)
    assert result.report.first_date == first_sunday + dt.timedelta(days=1)
    assert result.report.trading_dates == 5


def test_month_first_slash_dates_stay_month_first(tmp_path: Path, settings: EngineSettings) -> None:
    bars = bf.week_of_bars(dt.date(2024, 3, 3))
    path = bf.european_csv(tmp_path / "us.csv", bars, date_format="%m/%d/%Y")
    with pytest.raises(DataError, match="nothing in the file tells which"):
        import_file(path, "NQ", settings)  # 03/04-03/08: no day over 12
    import_file(path, "NQ", settings, date_order="month-first")
    assert_stored(settings, bars)


def test_dates_in_both_orders_are_refused_naming_day_first(
    tmp_path: Path, settings: EngineSettings
) -> None:
    path = tmp_path / "mixed.csv"
    path.write_text(
        "Date,Time,Open,High,Low,Close,Volume\n"
        "13/03/2024,09:30,100,101,99.5,100.5,10\n"
        "03/14/2024,09:30,100,101,99.5,100.5,10\n"
    )
    with pytest.raises(DataError, match=r"'13/03/2024' \(day first\).*'03/14/2024' \(month"):
        import_file(path, "NQ", settings)


# --- prices quoted as in the file -----------------------------------------------------------

HEADER = "timestamp,open,high,low,close,volume\n"


def test_problems_quote_prices_as_the_file_writes_them(
    tmp_path: Path, settings: EngineSettings
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(
        HEADER + "2024-01-08 09:30:00,17940.5,17939.25,17943.0,17941.75,10\n"
        "2024-01-08 09:31:00,17612.5,17614.75,17611.25,17616.75,10\n"
    )
    with pytest.raises(DataError) as err:
        import_file(path, "NQ", settings)
    report = err.value.report.text()  # type: ignore[attr-defined]
    assert "high 17939.25 is below low 17943." in report
    assert "close 17616.75 is outside the bar's low..high (17611.25..17614.75)." in report


def test_an_append_that_disagrees_quotes_both_prices_in_full(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars(dt.date(2024, 1, 7), days=2)
    last = len(bars) - 1
    bars.loc[last, ["open", "high", "low", "close"]] = [18843.5, 18844.0, 18843.25, 18843.5]
    import_file(bf.plain_csv(tmp_path / "a.csv", bars), "NQ", settings)
    changed = bars.copy()
    changed.loc[last, "close"] = 18843.75  # one tick off on the last stored bar
    with pytest.raises(DataError) as err:
        import_file(bf.plain_csv(tmp_path / "b.csv", changed), "NQ", settings, mode="append")
    assert "the file has close 18843.75, the stored data has close 18843.5." in str(err.value)


# --- decimal commas after whole-number bars ---------------------------------------------------


@pytest.mark.parametrize("whole_bars", [1, 1500])  # within the lines sampled, and beyond them
def test_a_decimal_comma_is_found_after_whole_number_bars(
    whole_bars: int, tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars(dt.date(2024, 3, 17))
    # Whole-number prices at the start, as a quiet market prints them.
    head = bars.index[:whole_bars]
    bars.loc[head, ["open", "high", "low", "close"]] = 18000.0
    path = tmp_path / "eu.csv"
    wall = bf.in_zone(bars, bf.NY)
    lines = ["Date;Time;Open;High;Low;Close;Volume"]
    for t, r in zip(wall, bars.itertuples(), strict=True):
        prices = ";".join(
            str(p).removesuffix(".0").replace(".", ",") for p in (r.open, r.high, r.low, r.close)
        )
        lines.append(f"{t:%d.%m.%Y};{t:%H:%M};{prices};{r.volume}")
    path.write_text("\n".join(lines) + "\n")
    assert lines[1].split(";")[2:6] == ["18000"] * 4
    import_file(path, "NQ", settings)
    assert_stored(settings, bars)


def _grouped(volume: int, mark: str) -> str:
    """``volume`` as Excel writes it "with 1000 separator": 12000 -> 12.000."""
    return f"{volume:,}".replace(",", mark)


def test_thousands_separators_are_refused_saying_so_never_read_as_decimals(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A European export with its volume column grouped ("12.000" beside prices "4500,25")
    was read with '.' as a decimal point: 12,000 contracts stored as 12 without a word (and
    1.260 refused as "not a whole number", which did not say what to change). Prices grouped
    the US way ("17,850.25") were "not a number". Each now says it is a thousands separator
    and how to save the file without one, naming its line."""
    bars = bf.week_of_bars(dt.date(2024, 3, 17))
    bars["volume"] = (bars["volume"] // 100 + 1) * 1000  # every volume a whole thousand
    path = bf.european_csv(tmp_path / "eu.csv", bars)
    lines = path.read_text().splitlines()
    grouped = [lines[0]] + [
        line.rsplit(";", 1)[0] + ";" + _grouped(int(line.rsplit(";", 1)[1]), ".")
        for line in lines[1:]
    ]
    path.write_text("\n".join(grouped) + "\n")
    assert grouped[1].rsplit(";", 1)[1] == _grouped(int(bars["volume"].iloc[0]), ".")
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings)
    message = str(refused.value)
    assert "eu.csv, line 2: volume is written with a thousands separator" in message
    assert "Use 1000 Separator" in message
    assert not data_path("NQ", settings).exists()

    wall = bf.in_zone(bars, bf.NY)
    us = tmp_path / "us.csv"
    rows = ["Date,Time,Open,High,Low,Close,Volume"] + [
        f"{t:%m/%d/%Y},{t:%H:%M},"
        + ",".join(f'"{p:,.2f}"' for p in (r.open, r.high, r.low, r.close))
        + f",{r.volume}"
        for t, r in zip(wall, bars.itertuples(), strict=True)
    ]
    us.write_text("\n".join(rows) + "\n")
    with pytest.raises(DataError, match="line 2: open is written with a thousands separator"):
        import_file(us, "NQ", settings)
    assert not data_path("NQ", settings).exists()


# --- headers: no volume column, names with spaces ---------------------------------------------


def _split_without_volume(path: Path, bars: pd.DataFrame, header: str, extra: bool) -> Path:
    wall = bf.in_zone(bars, bf.NY)
    lines = [header]
    for t, r in zip(wall, bars.itertuples(), strict=True):
        tail = f",{r.volume // 2},{r.volume - r.volume // 2}" if extra else ""
        lines.append(f"{t:%m/%d/%Y},{t:%H:%M},{r.open},{r.high},{r.low},{r.close}{tail}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_date_and_time_columns_without_volume_are_not_tradingview(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars()
    header = "Date,Time,Open,High,Low,Close"
    path = _split_without_volume(tmp_path / "novol.csv", bars, header, False)
    result = import_file(path, "NQ", settings)
    assert result.report.layout_name == "split"
    assert_stored(settings, bars, volume=False)
    frame, _ = read_bars(data_path("NQ", settings))
    assert (frame["volume"] == 0).all()
    assert any("no volume column" in note for note in result.report.notes)


@pytest.mark.parametrize(("up", "down"), [("Up", "Down"), ("UpVol", "DownVol")])
def test_tradestation_up_and_down_volumes_are_summed(
    up: str, down: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """TradeStation writes a bar's volume as its Up and Down volumes, with no Volume column:
    every bar was stored with volume 0 under "the file has no volume column". The stored
    volume is Up + Down, as pandas reads the file."""
    bars = bf.week_of_bars()
    header = f'"Date","Time","Open","High","Low","Close","{up}","{down}"'
    path = _split_without_volume(tmp_path / "ts.txt", bars, header, True)
    result = import_file(path, "NQ", settings)
    assert result.report.layout_name == "split"
    written = pd.read_csv(path)
    frame, _ = read_bars(data_path("NQ", settings))
    wall = pd.to_datetime(written["Date"] + " " + written["Time"], format="%m/%d/%Y %H:%M")
    assert frame["timestamp"].tolist() == wall.tolist()
    assert frame["volume"].tolist() == (written[up] + written[down]).tolist()
    assert frame["volume"].tolist() == bars["volume"].tolist()
    assert frame["close"].tolist() == written["Close"].tolist()
    assert not any("no volume column" in note for note in result.report.notes)
    assert any("sum of its Up and Down" in note for note in result.report.notes)


def test_a_volume_column_beside_up_and_down_is_the_volume(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars()
    header = "Date,Time,Open,High,Low,Close,Up,Down,Volume"
    path = _split_without_volume(tmp_path / "ts.txt", bars, header, True)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], *(f"{line},7" for line in lines[1:])]) + "\n")
    import_file(path, "NQ", settings)
    frame, _ = read_bars(data_path("NQ", settings))
    assert (frame["volume"] == 7).all()


def test_one_timestamp_column_without_volume_stores_zero_and_says_so(
    tmp_path: Path, settings: EngineSettings
) -> None:
    # docs/data.md: "A file without a volume column gets volume 0 on every bar, and the
    # report says so"; the plain layout used to refuse timestamp,open,high,low,close.
    bars = bf.week_of_bars()
    path = bf.plain_csv(tmp_path / "bars.csv", bars.drop(columns="volume"))
    assert path.read_text().splitlines()[0] == "timestamp,open,high,low,close"
    result = import_file(path, "NQ", settings)
    assert result.report.layout_name == "plain"
    assert_stored(settings, bars, volume=False)
    frame, _ = read_bars(data_path("NQ", settings))
    assert (frame["volume"] == 0).all()
    assert any("no volume column" in note for note in result.report.notes)


@pytest.mark.parametrize(
    ("header", "layout"),
    [
        ("Date Time,Open,High,Low,Close,Vol", "plain"),
        ("timestamp,open,high,low,close,Vol.", "plain"),
        ("time,open,high,low,close,Vol,MA", "tradingview"),
    ],
)
def test_a_vol_column_is_the_volume(
    header: str, layout: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """An Excel export's "Vol" (investing.com's "Vol.") beside one timestamp column was not
    taken as the volume: every bar was stored with volume 0, the report saying "the file has
    no volume column". The split layout already took MetaTrader's <VOL>."""
    bars = bf.week_of_bars()
    if layout == "tradingview":
        path = bf.tradingview_csv(tmp_path / "bars.csv", bars)
    else:
        path = bf.plain_csv(tmp_path / "bars.csv", bars)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([header, *lines[1:]]) + "\n")
    result = import_file(path, "NQ", settings)
    assert result.report.layout_name == layout
    assert_stored(settings, bars)  # volumes included
    assert not any("no volume column" in note for note in result.report.notes)


def test_volume_questions_on_data_imported_without_volumes_are_refused(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A file without a volume column is stored with volume 0 (and its report says so), and
    then "mean(volume)" answered 0 and vwap() n/a, with nothing saying the data holds no
    volumes. Refused, naming the file; questions of prices are answered as before."""
    from barb.interpreter import execute

    bars = bf.week_of_bars()
    import_file(bf.plain_csv(tmp_path / "novol.csv", bars.drop(columns="volume")), "NQ", settings)
    for query in (
        {"session": "RTH", "from": "daily", "select": "mean(volume)"},
        {"session": "RTH", "from": "1m", "select": "vwap()"},
        {"session": "RTH", "from": "daily", "where": "volume > 1000", "select": "count()"},
    ):
        result = execute(query, "NQ", settings=settings)
        assert result.error is not None and result.error.error_type == "NoData", query
        assert result.error.message.startswith(
            "NQ data holds no volumes: it was imported from novol.csv without a volume column"
        )
    wall = bars["timestamp"].dt.tz_localize(None)
    minute = wall.dt.hour * 60 + wall.dt.minute
    rth = bars[(minute >= 570) & (minute < 1020)]
    day = (wall[rth.index] + pd.Timedelta(hours=6)).dt.normalize()
    daily = rth.groupby(day.to_numpy()).agg(high=("high", "max"), low=("low", "min"))
    ranges = execute(
        {"session": "RTH", "from": "daily", "select": "mean(range)"}, "NQ", settings=settings
    )
    assert ranges.error is None
    assert ranges.summary.value == pytest.approx((daily["high"] - daily["low"]).mean())
    # With volumes, the same question is answered: pandas' mean of the days' RTH volumes.
    import_file(bf.plain_csv(tmp_path / "vol.csv", bars), "NQ", settings, mode="replace")
    volume = execute(
        {"session": "RTH", "from": "daily", "select": "mean(volume)"}, "NQ", settings=settings
    )
    assert volume.error is None
    assert volume.summary.value == pytest.approx(rth.groupby(day.to_numpy())["volume"].sum().mean())


def test_volume_questions_over_stored_dates_without_volumes_are_refused(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """Data that already mixes dates without volumes (stored 0, appended before such a mix
    was refused) with dates with volumes: "mean(volume)" averaged the zeros in without a
    word (the check asked only whether any bar had a volume). Refused, naming the dates;
    over the dates with volumes it is answered, as pandas computes it."""
    from barb.interpreter import execute

    bars = bf.week_of_bars()
    wall = bars["timestamp"].dt.tz_localize(None)
    day = (wall + pd.Timedelta(hours=6)).dt.normalize()
    silent = day.isin([pd.Timestamp("2024-03-20"), pd.Timestamp("2024-03-21")])
    mixed = bars.assign(volume=bars["volume"].where(~silent, 0))
    import_file(bf.plain_csv(tmp_path / "mixed.csv", mixed), "NQ", settings)
    query = {"session": "RTH", "from": "daily", "select": "mean(volume)"}
    for period in (None, "2024-03-19:2024-03-20", "last_3_bars"):
        asked = query if period is None else {**query, "period": period}
        result = execute(asked, "NQ", settings=settings)
        assert result.error is not None and result.error.error_type == "NoData", period
        assert "NQ data holds no volumes on" in result.error.message
        assert "2024-03-20" in result.error.message
    whole = execute(query, "NQ", settings=settings).error
    assert "on 2 trading dates of the period (2024-03-20, 2024-03-21)" in whole.message
    # Over the dates with volumes: pandas' mean of the days' RTH volumes.
    minute = wall.dt.hour * 60 + wall.dt.minute
    rth = mixed[
        (minute >= 570) & (minute < 1020) & day.isin(pd.to_datetime(["2024-03-18", "2024-03-19"]))
    ]
    expected = rth.groupby(day[rth.index].to_numpy())["volume"].sum().mean()
    answered = execute({**query, "period": "2024-03-18:2024-03-19"}, "NQ", settings=settings)
    assert answered.error is None
    assert answered.summary.value == pytest.approx(expected)
    prices = execute({**query, "select": "mean(range)"}, "NQ", settings=settings)
    assert prices.error is None


def test_fill_volumes_mends_stored_dates_without_volumes(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """The mixed data above answered volume questions only over periods without its silent
    dates, and nothing mended it: --append refuses a file that starts before the stored
    bars (and disagrees with their zero volumes), --replace needs every bar again.
    --fill-volumes takes a file's volumes for those dates, its bars being the stored ones;
    nothing else changes, the previous file is kept, and mean(volume) over the week is then
    pandas' over the true volumes."""
    from click.testing import CliRunner

    from barb.data import store
    from barb.data.cli import data as data_cli
    from barb.interpreter import execute

    bars = bf.week_of_bars()
    wall = bars["timestamp"].dt.tz_localize(None)
    day = (wall + pd.Timedelta(hours=6)).dt.normalize()
    silent = day.isin([pd.Timestamp("2024-03-20"), pd.Timestamp("2024-03-21")])
    mixed = bars.assign(volume=bars["volume"].where(~silent, 0))
    import_file(bf.plain_csv(tmp_path / "mixed.csv", mixed), "NQ", settings)
    query = {"session": "RTH", "from": "daily", "select": "mean(volume)"}
    error = execute(query, "NQ", settings=settings).error
    assert error is not None and "--fill-volumes` fills them in" in (error.hint or "")
    before = data_path("NQ", settings).read_bytes()
    runner = CliRunner()

    def fill(path: Path) -> object:
        args = ["import", str(path), "-i", "NQ", "--fill-volumes"]
        return runner.invoke(data_cli, args, obj=settings)

    # A file whose bars are not the stored ones is refused, nothing written.
    moved = bars.copy()
    moved.loc[silent[silent].index[5], "close"] += 0.25
    refused = fill(bf.plain_csv(tmp_path / "moved.csv", moved))
    assert refused.exit_code == 1
    assert "the file's close is" in refused.output
    assert "volumes are filled in only from the same bars" in refused.output
    missing = fill(bf.plain_csv(tmp_path / "part.csv", bars.drop(silent[silent].index[3])))
    assert "that the file lacks, on a date whose volumes it gives" in missing.output
    no_volumes = fill(bf.plain_csv(tmp_path / "novol.csv", mixed.assign(volume=0)))
    assert "the file has no volumes to fill in" in no_volumes.output
    assert data_path("NQ", settings).read_bytes() == before
    # Wednesday's file alone fills Wednesday and says that Thursday still has none.
    wednesday = fill(bf.plain_csv(tmp_path / "wed.csv", bars[day == "2024-03-20"]))
    assert wednesday.exit_code == 0, wednesday.output
    assert "NQ: filled in the volumes of 1,380 bars" in wednesday.output
    assert "1 date still has none (2024-03-21)" in wednesday.output
    # The whole week with its volumes fills Thursday: nothing else changes.
    done = fill(bf.plain_csv(tmp_path / "week.csv", bars))
    assert done.exit_code == 0, done.output
    assert "on 1 trading date that had none (2024-03-21) from week.csv" in done.output
    frame, meta = read_bars(data_path("NQ", settings))
    assert frame["timestamp"].tolist() == wall.tolist()
    for column in ("open", "high", "low", "close", "volume"):
        assert frame[column].tolist() == bars[column].tolist(), column
    assert meta.rows == len(bars)
    minute = wall.dt.hour * 60 + wall.dt.minute
    rth = bars[(minute >= 570) & (minute < 1020)]
    expected = rth.groupby(day[rth.index].to_numpy())["volume"].sum().mean()
    answered = execute(query, "NQ", settings=settings)
    assert answered.error is None
    assert answered.summary.value == pytest.approx(expected)
    # Nothing left to fill; the kept file is the data before this fill.
    again = fill(tmp_path / "week.csv")
    assert "every trading date of the stored NQ data has volumes" in again.output
    store.restore_previous(data_path("NQ", settings))
    kept, _ = read_bars(data_path("NQ", settings))
    assert int((kept["volume"] == 0).sum()) == int(
        (day == "2024-03-21").sum()
    )  # Wednesday filled, Thursday not


@pytest.mark.parametrize("stored_volumes", [False, True])
def test_an_append_that_mixes_volumes_with_none_is_refused(
    stored_volumes: bool, tmp_path: Path, settings: EngineSettings
) -> None:
    """A week imported without a volume column (volume 0 on every bar), then the next week
    appended with volumes: "mean(volume)" over both averaged the zeros in (the engine
    refuses volume questions only on data with no volume at all) and read about half the
    true mean. Refused either way round, the stored bars left as they were."""
    first = bf.week_of_bars(dt.date(2024, 3, 17))
    second = bf.week_of_bars(dt.date(2024, 3, 24), seed=8)
    second[["open", "high", "low", "close"]] += first["close"].iloc[-1] - second["open"].iloc[0]
    old, new = (
        (first, second.drop(columns="volume"))
        if stored_volumes
        else (
            first.drop(columns="volume"),
            second,
        )
    )
    stored_path = bf.plain_csv(tmp_path / "stored.csv", old)
    import_file(stored_path, "NQ", settings)
    before = data_path("NQ", settings).read_bytes()
    with pytest.raises(DataError) as refused:
        import_file(bf.plain_csv(tmp_path / "next.csv", new), "NQ", settings, mode="append")
    said = str(refused.value)
    if stored_volumes:
        assert "the file has no volumes" in said and "append a file with a volume column" in said
    else:
        assert "the file has volumes, and the stored NQ bars (imported from stored.csv)" in said
        assert "with --replace" in said
    assert data_path("NQ", settings).read_bytes() == before
    frame, _ = read_bars(data_path("NQ", settings))
    written = pd.read_csv(stored_path, parse_dates=["timestamp"])
    assert frame["timestamp"].tolist() == written["timestamp"].tolist()
    expected = written["volume"] if stored_volumes else 0
    assert (frame["volume"] == expected).all()


def test_header_names_match_without_regard_to_spaces(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars()
    path = bf.plain_csv(tmp_path / "bars.csv", bars)
    text = path.read_text()
    path.write_text(
        text.replace(
            "timestamp,open,high,low,close,volume", "Date Time,Open,High,Low,Close,Volume", 1
        )
    )
    result = import_file(path, "NQ", settings)
    assert result.report.layout_name == "plain"
    assert_stored(settings, bars)


def test_columns_option_without_volume_stores_zero_and_says_so(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars()
    odd = pd.DataFrame(
        {
            "Zeit": bf.in_zone(bars, bf.NY).dt.strftime("%Y-%m-%d %H:%M"),
            **{name.title(): bars[name] for name in ("open", "high", "low", "close")},
        }
    )
    path = tmp_path / "odd.csv"
    odd.to_csv(path, index=False)
    result = import_file(
        path, "NQ", settings, columns="timestamp=Zeit,open=Open,high=High,low=Low,close=Close"
    )
    assert_stored(settings, bars, volume=False)
    assert any("no volume column" in note for note in result.report.notes)


def test_a_metatrader_4_history_export_is_read_without_its_tick_counts(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """MetaTrader 4's History Center writes "2024.03.17,18:00,o,h,l,c,ticks" with no header:
    refused as "not a layout Barb knows", with --columns advice that needs a header. Its bars
    are read; the last column counts ticks, not contracts, so volume is stored as 0 (and
    volume questions are refused) rather than answered in ticks."""
    from barb.interpreter import execute

    bars = bf.week_of_bars()
    wall = bf.in_zone(bars, bf.NY)
    path = tmp_path / "NQ1.csv"
    path.write_text(
        "\n".join(
            f"{t:%Y.%m.%d},{t:%H:%M},{r.open},{r.high},{r.low},{r.close},{r.volume * 3}"
            for t, r in zip(wall, bars.itertuples(), strict=True)
        )
        + "\n"
    )
    result = import_file(path, "NQ", settings)
    assert result.report.layout_name == "metatrader"
    written = pd.read_csv(path, header=None, names=["d", "t", *PRICES[:4], "ticks"])
    frame, _ = read_bars(data_path("NQ", settings))
    stamps = pd.to_datetime(written["d"] + " " + written["t"], format="%Y.%m.%d %H:%M")
    assert frame["timestamp"].tolist() == stamps.tolist()
    for column in PRICES[:4]:
        assert frame[column].tolist() == written[column].tolist(), column
    assert (frame["volume"] == 0).all()
    assert any("counts ticks, not contracts" in note for note in result.report.notes)
    volume = execute(
        {"session": "RTH", "from": "daily", "select": "mean(volume)"}, "NQ", settings=settings
    )
    assert volume.error is not None and volume.error.error_type == "NoData"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le-bom"])
def test_utf16_text_is_read(encoding: str, tmp_path: Path, settings: EngineSettings) -> None:
    """Excel's "Unicode Text" is UTF-16 with a byte-order mark, tab-separated: refused as
    "not UTF-8 text: is it a CSV or Parquet file?". Read as the text it is."""
    bars = bf.week_of_bars()
    text = bf.plain_csv(tmp_path / "bars.csv", bars).read_text().replace(",", "\t")
    path = tmp_path / "unicode.txt"
    data = (
        b"\xff\xfe" + text.encode("utf-16-le")
        if encoding.endswith("bom")
        else text.encode(encoding)
    )
    path.write_bytes(data)
    result = import_file(path, "NQ", settings)
    written = pd.read_csv(path, sep="\t", encoding="utf-16", parse_dates=["timestamp"])
    frame, _ = read_bars(data_path("NQ", settings))
    assert frame["timestamp"].tolist() == written["timestamp"].tolist()
    for column in PRICES:
        assert frame[column].tolist() == written[column].tolist(), column
    assert any("UTF-16" in note for note in result.report.notes)


# --- times at 59 seconds ------------------------------------------------------------------------


@pytest.mark.parametrize("fraction", ["", ".999"])
def test_times_at_59_seconds_are_read_as_the_bars_last_second(
    fraction: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """A file stamping each bar at its last second (18:00:59 for the bar 18:00-18:01) was
    refused with ten lines of "… is not on a whole minute" and 6,899 more. Read as bar-close
    stamps one second early: the 18:00:59 bar is stored as the bar opening at 18:00, said once
    in the report."""
    bars = bf.week_of_bars()
    wall = bf.in_zone(bars, bf.NY)
    path = tmp_path / "last_second.csv"
    bars.assign(timestamp=wall.dt.strftime(f"%Y-%m-%d %H:%M:59{fraction}")).to_csv(
        path, index=False
    )
    result = import_file(path, "NQ", settings)
    written = pd.read_csv(path)
    opens = pd.to_datetime(written["timestamp"]).dt.floor("min")
    frame, _ = read_bars(data_path("NQ", settings))
    assert frame["timestamp"].tolist() == opens.tolist()
    for column in PRICES:
        assert frame[column].tolist() == written[column].tolist(), column
    said = [note for note in result.report.notes if "59 seconds" in note]
    assert len(said) == 1
    assert said[0].startswith("Every time is at 59 seconds (2024-03-17 18:00:59")
    assert said[0].endswith("is the bar closing at 2024-03-17 18:01:00).")
    assert result.report.stamp == "close"


def test_times_at_59_seconds_with_stamp_open_are_the_minute_they_fall_in(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars()
    wall = bf.in_zone(bars, bf.NY)
    path = tmp_path / "last_second.csv"
    bars.assign(timestamp=wall.dt.strftime("%Y-%m-%d %H:%M:59")).to_csv(path, index=False)
    result = import_file(path, "NQ", settings, stamp="open")
    frame, _ = read_bars(data_path("NQ", settings))
    written = pd.to_datetime(pd.read_csv(path)["timestamp"])
    assert frame["timestamp"].tolist() == written.dt.floor("min").tolist()
    assert any("with --stamp open, each is read as the minute" in n for n in result.report.notes)


def test_hourly_times_at_59_minutes_59_seconds_are_the_hours_they_end(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """10:59:59 ends the bar 10:00-11:00: stored as the 10:00 bar, not at 10:59."""
    minutes = bf.week_of_bars()
    prices = {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}
    hourly = minutes.set_index("timestamp").resample("60min").agg(prices).dropna().reset_index()
    last_second = hourly["timestamp"] + pd.Timedelta(minutes=59, seconds=59)
    path = tmp_path / "hourly.csv"
    stamps = bf.in_zone(hourly.assign(timestamp=last_second), bf.NY)
    hourly.assign(timestamp=stamps.dt.strftime("%Y-%m-%d %H:%M:%S")).to_csv(path, index=False)
    import_file(path, "NQ", settings, interval="1h")
    frame, _ = read_bars(data_path("NQ", settings))
    written = pd.read_csv(path)
    ends = pd.to_datetime(written["timestamp"]) + pd.Timedelta(seconds=1)
    assert frame["timestamp"].tolist() == (ends - pd.Timedelta(hours=1)).tolist()
    assert frame["high"].tolist() == written["high"].tolist()


def test_times_off_the_minute_are_named_once(tmp_path: Path, settings: EngineSettings) -> None:
    """Times at 30 seconds are refused naming the first one, the rest counted: the report
    listed ten lines of the same sentence."""
    bars = bf.week_of_bars()
    wall = bf.in_zone(bars, bf.NY)
    path = tmp_path / "half_minute.csv"
    bars.assign(timestamp=wall.dt.strftime("%Y-%m-%d %H:%M:30")).to_csv(path, index=False)
    with pytest.raises(ImportRefused) as refused:
        import_file(path, "NQ", settings)
    text = refused.value.report.text()
    assert text.count("is not on a whole minute") == 1
    assert "2024-03-17 18:00:30 is not on a whole minute" in text
    assert not data_path("NQ", settings).exists()


def _seconds(path: Path, step: str, ticks: bool = False) -> Path:
    """Bars (or trades, when ``ticks``) ``step`` apart from 09:30 on 2024-03-18."""
    times = pd.date_range("2024-03-18 09:30", periods=3000, freq=step)
    if ticks:  # several trades in one second, at the exchange's millisecond
        times = times.repeat(2)
    price = 18000 + (np.arange(len(times)) % 7) * 0.25
    frame = pd.DataFrame(
        {"open": price, "high": price + 0.25, "low": price, "close": price, "volume": 1}
    )
    frame.insert(0, "timestamp", times.strftime("%Y-%m-%d %H:%M:%S.%f").str[:-3])
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("step", "ticks", "said"),
    [
        (
            "1s",
            False,
            "the file holds bars 1 s long (the first inside a minute at "
            "2024-03-18 09:30:01), and Barb takes bars of one minute or longer: resample",
        ),
        ("5s", False, "the file holds bars 5 s long"),
        ("1s", True, "the file holds trades (ticks) or bars shorter than a second"),
        ("250ms", False, "the file holds trades (ticks) or bars shorter than a second"),
    ],
)
def test_second_bars_and_ticks_are_told_to_be_resampled_in_one_sentence(
    step: str, ticks: bool, said: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """A file of 1-second bars or of trades was refused with each bar "not on a whole
    minute" (2,950 of them), never saying that Barb takes minute bars and how to make them."""
    path = _seconds(tmp_path / "fast.csv", step, ticks)
    with pytest.raises(DataError) as refused:
        check_file(path, "NQ", settings)
    message = str(refused.value)
    assert said in message
    assert message.endswith("last close and summed volume) and import those.")
    assert "\n" not in message and "whole minute" not in message
    with pytest.raises(DataError, match="соберите из них минутные бары"):
        check_file(path, "NQ", settings, lang="ru")


def test_a_header_of_trades_is_told_to_be_resampled(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A tick export (a price, no open, high or low) was told its columns were not
    recognised and to name them with --columns, which no mapping could satisfy."""
    path = tmp_path / "ticks.csv"
    path.write_text("Date,Time,Last,Volume\n03/18/2024,09:30:00.013,18000.25,1\n")
    with pytest.raises(DataError) as refused:
        check_file(path, "NQ", settings)
    assert str(refused.value).endswith(
        "line 1: the columns (Date, Time, Last, Volume) are trades (ticks), not bars, and "
        "Barb takes bars of one minute or longer: resample them to 1-minute bars (each "
        "minute's first open, highest high, lowest low, last close and summed volume) and "
        "import those."
    )


# --- archives -------------------------------------------------------------------------------


def test_a_macos_finder_zip_imports_its_one_file(tmp_path: Path, settings: EngineSettings) -> None:
    bars = bf.week_of_bars()
    csv_path = bf.plain_csv(tmp_path / "nq_may.csv", bars)
    archive = tmp_path / "nq_may.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.write(csv_path, "nq_may.csv")
        out.writestr("__MACOSX/", b"")
        out.writestr("__MACOSX/._nq_may.csv", b"\x00\x05\x16\x07Mac OS X        ")
        out.writestr(".DS_Store", b"\x00\x00\x00\x01Bud1")
    import_file(archive, "NQ", settings)
    assert_stored(settings, bars)


def test_a_zip_of_two_files_is_still_refused(tmp_path: Path, settings: EngineSettings) -> None:
    bars = bf.week_of_bars()
    csv_path = bf.plain_csv(tmp_path / "a.csv", bars)
    archive = tmp_path / "two.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.write(csv_path, "a.csv")
        out.write(csv_path, "b.csv")
        out.writestr("__MACOSX/._a.csv", b"\x00")
    with pytest.raises(DataError, match=r"holds a\.csv, b\.csv; put exactly one"):
        import_file(archive, "NQ", settings)


# --- counting problems once, in good English -------------------------------------------------


def test_a_missing_volume_is_one_problem(tmp_path: Path, settings: EngineSettings) -> None:
    path = tmp_path / "na.csv"
    path.write_text(
        HEADER + "2024-01-08 09:30:00,100,101,99.5,100.5,N/A\n"
        "2024-01-08 09:31:00,100,101,99.5,100.5,7\n"
    )
    with pytest.raises(ImportRefused) as err:
        import_file(path, "NQ", settings)
    report = err.value.report
    assert [(c.name, c.count) for c in report.errors] == [("missing volume", 1)]
    assert "not a whole number" not in report.text()
    assert "more problem" not in str(err.value)

    path.write_text(
        HEADER + "2024-01-08 09:30:00,100,101,99.5,100.5,N/A\n"
        "2024-01-08 09:31:00,100,99,101,100,7\n"  # high below low
    )
    with pytest.raises(ImportRefused) as err:
        import_file(path, "NQ", settings)
    assert str(err.value).endswith("missing volume. (1 more problem in the report)")


def test_one_trading_date_is_singular(tmp_path: Path, settings: EngineSettings) -> None:
    path = tmp_path / "one.csv"
    path.write_text(HEADER + "2024-01-08 09:30:00,100,101,99.5,100.5,3\n")
    result = import_file(path, "NQ", settings, stamp="open", any_level=True)
    assert "2024-01-08 to 2024-01-08, 1 trading date; 1-minute bars." in result.report.text()


# --- the CLI exits cleanly after a parse error --------------------------------------------------


def test_cli_exits_1_after_a_parse_error_near_the_top(tmp_path: Path) -> None:
    # Arrow's read-ahead, pending after an early parse error, aborted the process at exit
    # (exit 134) about one run in seven when the machine was busy; ten runs, four at a time.
    bars = bf.week_of_bars()
    path = bf.plain_csv(tmp_path / "early.csv", bars)
    lines = path.read_text().splitlines()
    cells = lines[2].split(",")
    cells[3] = "abc"  # low, on line 3
    lines[2] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    command = [sys.executable, "-c", "from bot.cli import main; main()"]
    command += ["data", "import", str(path), "-i", "NQ"]
    env = {**os.environ, "BARB_DATA_DIR": str(tmp_path / "data")}
    runs = []
    for _ in range(10):
        runs.append(
            subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        )
        if len(runs) % 4 == 0:
            runs[-4].wait()
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 1, err.decode()
        assert err.decode().strip() == f"Error: {path}, line 3: low is not a number: 'abc'."


# --- p46ab: MetaTrader dates, footers, daily files, empty rows, workbooks -----------------


def test_metatrader5_export_reads_year_first_dotted_dates_and_vol(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """MT5's ``<DATE>\\t<TIME>…<TICKVOL>\\t<VOL>`` with 2024.03.18: refused as unrecognised
    columns, and with --columns as "expected dates like 01/31/2024, month first"."""
    bars = bf.week_of_bars(days=2)
    wall = bars["timestamp"].dt.tz_localize(None)
    mt5 = pd.DataFrame(
        {
            "<DATE>": wall.dt.strftime("%Y.%m.%d"),
            "<TIME>": wall.dt.strftime("%H:%M:%S"),
            **{f"<{c.upper()}>": bars[c] for c in ("open", "high", "low", "close")},
            "<TICKVOL>": bars["volume"] * 3,
            "<VOL>": bars["volume"],
            "<SPREAD>": 0,
        }
    )
    path = tmp_path / "NQ_M1.csv"
    mt5.to_csv(path, sep="\t", index=False)
    import_file(path, "NQ", settings)
    assert_stored(settings, bars)


def test_a_vendor_footer_is_left_out_and_said(tmp_path: Path, settings: EngineSettings) -> None:
    """Barchart's "Downloaded from Barchart.com as of …" under the bars was refused ("delete
    it and import the file again": from the bot, on a phone). The file is read without it,
    the report names the line, and the bars are the file's."""
    bars = bf.week_of_bars(days=1)
    path = bf.plain_csv(tmp_path / "barchart.csv", bars)
    with path.open("a") as fh:
        fh.write('"Downloaded from Barchart.com as of 03-19-2024 05:12pm CDT"\n')
    result = import_file(path, "NQ", settings)
    lines = len(bars) + 2  # the header, the bars, the footer
    assert f"Line {lines} is not a bar ('\"Downloaded from Barchart.com" in result.report.text()
    assert "the vendor's footer: the file is read without it." in result.report.text()
    assert_stored(settings, bars)
    # A short line inside the file is still counted as one.
    inside = tmp_path / "cut.csv"
    text = path.read_text().splitlines()
    inside.write_text("\n".join([*text[:3], "2024-03-17 18:02:00,1", *text[3:-1]]) + "\n")
    with pytest.raises(DataError, match="line 4: expected 6 fields, found 2"):
        import_file(inside, "NQ", settings, mode="replace")


@pytest.mark.parametrize("end", ["\r", "\r\n"])
def test_a_footer_under_old_mac_line_ends_is_found_on_its_line(
    end: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """Lines ended by a lone \r (old Mac files), as Arrow and the line numbers read them:
    the footer's byte offset was counted by \n alone (the file's end), so the footer was
    refused on its line instead of left out. A damaged line after a lone \r mid-file is
    named by the same count as every other refusal."""
    bars = bf.week_of_bars(days=1)
    lines = bf.plain_csv(tmp_path / "b.csv", bars).read_text().splitlines()
    path = tmp_path / "mac.csv"
    footer = '"Downloaded from Barchart.com as of 03-19-2024 05:12pm CDT"'
    path.write_bytes(end.join([*lines, footer, ""]).encode())
    result = import_file(path, "NQ", settings)
    assert f"Line {len(lines) + 1} is not a bar" in result.report.text()
    assert_stored(settings, bars)
    damaged = [*lines[:699], lines[699].replace(",", ",,", 1), *lines[700:]]
    path.write_bytes(end.join(damaged).encode())
    with pytest.raises(DataError, match="line 700: expected 6 fields, found 7"):
        check_file(path, "NQ", settings)


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 1 << 20])
def test_line_offsets_count_every_line_end_across_read_chunks(
    chunk_size: int, tmp_path: Path
) -> None:
    """\n, \r\n and a lone \r each end one line, a \r\n split between two reads too."""
    path = tmp_path / "ends.txt"
    path.write_bytes(b"ab\rc\r\nd\ne\r\r\nf")
    starts = [0, 3, 6, 8, 10, 12]  # ab | c | d | e | (empty) | f
    for line, start in enumerate(starts, start=1):
        assert formats._line_offset(path, line, chunk_size) == start, line
    assert formats._line_offset(path, 9, chunk_size) == 13


def test_a_last_line_cut_short_is_said_to_be_cut(tmp_path: Path, settings: EngineSettings) -> None:
    """A download that stopped inside its last bar ("2024-03-18 16:59:00,1808") was refused
    as "expected 6 fields, found 2", which did not say what happened to the file."""
    bars = bf.week_of_bars(days=1)
    path = bf.plain_csv(tmp_path / "nq.csv", bars)
    text = path.read_text().splitlines()
    path.write_text("\n".join([*text[:-1], text[-1][:25]]))
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings)
    assert str(refused.value) == (
        f"{path}, line {len(bars) + 1}: the file's last line holds 2 of the 6 fields of each "
        "bar: the file looks cut short (a download or copy that stopped). Nothing was "
        "written; download the file again, or delete that line."
    )
    assert not data_path("NQ", settings).exists()


def test_barchart_and_firstrate_files_are_read(tmp_path: Path, settings: EngineSettings) -> None:
    """Barchart's download ("Time,Open,High,Low,Last,Change,%Chg,Volume", newest bar first,
    its footer under them) was "unrecognised columns"; FirstRate Data's headerless
    "2024-03-18 09:30:00,o,h,l,c,v" was "not a layout Barb knows". Both store the bars
    that went in."""
    bars = bf.week_of_bars(days=2)
    wall = bars["timestamp"].dt.tz_localize(None)
    newest_first = bars.iloc[::-1]
    rows = [
        f"{t:%m/%d/%Y %H:%M},{r.open},{r.high},{r.low},{r.close},0.25,+0.01%,{r.volume}"
        for t, r in zip(wall.iloc[::-1], newest_first.itertuples(), strict=True)
    ]
    barchart = tmp_path / "nqm24_intraday-1min_historical-data-03-19-2024.csv"
    barchart.write_text(
        "Time,Open,High,Low,Last,Change,%Chg,Volume\n"
        + "\n".join(rows)
        + '\n"Downloaded from Barchart.com as of 03-19-2024 05:12pm CDT"\n'
    )
    result = import_file(barchart, "NQ", settings)
    assert result.report.layout == "Barchart historical data download"
    assert_stored(settings, bars)
    firstrate = tmp_path / "NQ_1min.txt"
    firstrate.write_text(
        "".join(
            f"{t:%Y-%m-%d %H:%M:%S},{r.open},{r.high},{r.low},{r.close},{r.volume}\n"
            for t, r in zip(wall, bars.itertuples(), strict=True)
        )
    )
    result = import_file(firstrate, "NQ", settings, mode="replace")
    assert result.report.layout == "FirstRate Data, no header"
    assert_stored(settings, bars)


@pytest.mark.parametrize(
    ("text", "date"),
    [
        (
            "Date,Open,High,Low,Close,Volume,Open Interest\n2024-03-04,1,2,0.5,1.5,10,5\n",
            "2024-03-04",
        ),
        ("20240304,1,2,0.5,1.5,10,5\n20240305,1,2,0.5,1.5,10,5\n", "20240304"),
    ],
)
def test_a_daily_file_is_said_to_be_daily_at_once(
    text: str, date: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """Norgate's and CSI's daily files were first sent to --columns or "add a header"."""
    path = tmp_path / "daily.csv"
    path.write_text(text)
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings)
    assert f"the file holds daily bars (its dates, such as '{date}'" in str(refused.value)
    assert "export 1-minute bars instead" in str(refused.value)


def test_empty_rows_at_the_end_are_skipped_and_said(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """Excel's CSV keeps cleared rows as ",,,,,": "cannot read the timestamp ''"."""
    bars = bf.week_of_bars(days=1)
    path = bf.plain_csv(tmp_path / "excel.csv", bars)
    with path.open("a") as fh:
        fh.write(",,,,,\r\n,,,,,\r\n")
    result = import_file(path, "NQ", settings)
    assert_stored(settings, bars)
    assert "(only separators, 2 in all) were skipped." in result.report.text()


def test_an_excel_workbook_is_named(tmp_path: Path, settings: EngineSettings) -> None:
    path = tmp_path / "nq.xlsx"
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("[Content_Types].xml", "<Types/>")
        book.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(DataError, match="an Excel workbook, not a CSV file: open it in Excel"):
        import_file(path, "NQ", settings)


def test_a_days_end_written_24_00_is_the_next_days_midnight(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """Bars stamped at their close, the day's last as "2024-03-17,24:00" (ISO 8601's end of
    the day, as some vendors write it): refused as a date and time that cannot be read.
    It is the next day's 00:00, the close of the bar opening 23:59."""
    bars = bf.week_of_bars()
    close = bars["timestamp"].dt.tz_localize(None) + pd.Timedelta(minutes=1)
    day_end = close.dt.strftime("%H:%M") == "00:00"
    date = close.dt.strftime("%Y-%m-%d").where(
        ~day_end, (close - pd.Timedelta(days=1)).dt.strftime("%Y-%m-%d")
    )
    path = tmp_path / "t2400.csv"
    pd.DataFrame(
        {
            "Date": date,
            "Time": close.dt.strftime("%H:%M").where(~day_end, "24:00"),
            **{c.title(): bars[c] for c in ("open", "high", "low", "close", "volume")},
        }
    ).to_csv(path, index=False)
    assert "2024-03-17,24:00," in path.read_text()

    result = import_file(path, "NQ", settings)

    assert result.report.stamp == "close"
    assert_stored(settings, bars)


@pytest.mark.parametrize("form", ["HHMM", "HMM", "HHMMSS"])
def test_times_written_as_digits_alone_are_read(
    form: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """CQG's export (``F.US.ENQM24,20240317,1800,…``) and TradeStation's (``930`` for 09:30)
    write a bar's time without its colon: refused as a date and time that cannot be read."""
    bars = bf.week_of_bars()
    wall = bars["timestamp"].dt.tz_localize(None)
    times = wall.dt.strftime("%H%M%S" if form == "HHMMSS" else "%H%M")
    if form == "HMM":
        times = times.str.lstrip("0").where(times != "0000", "0")
    path = tmp_path / "cqg.csv"
    pd.DataFrame(
        {
            "Symbol": "F.US.ENQM24",
            "Date": wall.dt.strftime("%Y%m%d"),
            "Time": times,
            **{c.title(): bars[c] for c in ("open", "high", "low", "close", "volume")},
        }
    ).to_csv(path, index=False)

    import_file(path, "NQ", settings)

    assert_stored(settings, bars)


@pytest.mark.parametrize(
    ("form", "line"),
    [
        ("%Y-%m-%d %H:%M:%S", "2024-03-17 24:00:00,"),
        ("%Y-%m-%dT%H:%M", "2024-03-17T24:00,"),
        ("%Y-%m-%dT%H:%M:%S%z", "2024-03-17T24:00:00-0400,"),
    ],
)
def test_a_days_end_24_00_in_one_timestamp_column_is_the_next_days_midnight(
    form: str, line: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """The same close stamps in the plain layout's one timestamp column: "2024-03-17
    24:00:00" was refused as a timestamp that cannot be read, though the Date and Time
    columns' "24:00" is read."""
    bars = bf.week_of_bars()
    close = bars["timestamp"] + pd.Timedelta(minutes=1)
    shown = close.dt.strftime(form)
    day_end = close.dt.strftime("%H:%M") == "00:00"
    before = (close - pd.Timedelta(days=1)).dt.strftime(form)
    shown = shown.where(
        ~day_end, before.str.replace("T00:00", "T24:00").str.replace(" 00:", " 24:")
    )
    path = tmp_path / "plain2400.csv"
    pd.DataFrame(
        {"timestamp": shown, **{c: bars[c] for c in ("open", "high", "low", "close", "volume")}}
    ).to_csv(path, index=False)
    assert f"\n{line}" in path.read_text()

    result = import_file(path, "NQ", settings)

    assert result.report.stamp == "close"
    assert_stored(settings, bars)


def test_a_header_repeated_mid_file_is_read_around_and_said(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """Two exports joined with ``cat`` repeat the header where the second starts (with its
    byte-order mark, and here the bars where they overlap): it was refused ("delete this
    line"; from the bot, on a phone). The header's exact repeat is left out and said, the
    overlap kept once, and a bad line after it is still named by its own line."""
    bars = bf.week_of_bars()
    first = bf.plain_csv(tmp_path / "a.csv", bars.iloc[:3000]).read_text()
    second = bf.plain_csv(tmp_path / "b.csv", bars.iloc[2900:]).read_text()
    path = tmp_path / "joined.csv"
    path.write_bytes(("\ufeff" + first + "\ufeff" + second).replace("\n", "\r\n").encode())

    result = import_file(path, "NQ", settings)

    text = result.report.text()
    assert "header is repeated on later lines, as where two exports are joined into one " in text
    assert "(1 in all, the first on line 3002)" in text
    assert "each is imported once" in text  # the 100 bars the two exports share
    assert_stored(settings, bars)
    ru = check_file(path, "NQ", settings, lang="ru").report.text()
    assert "Заголовок файла повторяется ниже" in ru

    # A bar that is not one, after the repeat, is named by the file's line.
    lines = path.read_text().splitlines()
    lines[3010] = lines[3010].replace(",", ",x", 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match="line 3011: open is not a number: 'x"):
        check_file(path, "NQ", settings)


def test_a_different_header_mid_file_is_refused(tmp_path: Path, settings: EngineSettings) -> None:
    """Exports with other columns joined: refused on the second header's line, saying so
    (it was "open is not a number: 'Open'"), and nothing stored changes."""
    bars = bf.week_of_bars(days=2)
    import_file(bf.plain_csv(tmp_path / "a.csv", bars), "NQ", settings)
    stored = data_path("NQ", settings).read_bytes()
    first = bf.sierra_txt(tmp_path / "s.txt", bars.iloc[:1000]).read_text()
    path = tmp_path / "joined.csv"
    path.write_text(first + bf.plain_csv(tmp_path / "p.csv", bars.iloc[1000:]).read_text())

    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings, mode="replace")
    assert str(refused.value) == (
        f"{path}, line 1002: this line is a header (timestamp, open, high, low, close, volume) "
        "other than line 1's: two exports with different columns were joined into one file. "
        "Import them one at a time."
    )
    assert data_path("NQ", settings).read_bytes() == stored


def test_a_russian_excel_csv_in_windows_1251_is_read(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A Russian Excel saves "CSV" in Windows-1251, its header the only letters: it was
    refused, asking to save it again as UTF-8. It is read, and the report says so; a file
    in another code page (a German header in Windows-1252) is still refused so."""
    bars = bf.week_of_bars()
    path = tmp_path / "ru.csv"
    header = ["Дата и время", "Откр", "Макс", "Мин", "Закр", "Объём"]
    text = bars.assign(timestamp=bars["timestamp"].dt.strftime("%d.%m.%Y %H:%M")).to_csv(
        sep=";", decimal=",", index=False, header=header
    )
    path.write_bytes(text.encode("cp1251"))

    result = import_file(path, "NQ", settings)
    assert "Windows-1251" in result.report.text()
    assert_stored(settings, bars)
    assert "Windows-1251" in check_file(path, "NQ", settings, lang="ru").report.text()

    german = tmp_path / "de.csv"
    header = ["Zeitstempel", "Eröffnung", "Hoch", "Tief", "Schluß", "Volumen"]
    body = text.split("\n", 1)[1]
    german.write_bytes((";".join(header) + "\n" + body).encode("cp1252"))
    with pytest.raises(DataError, match=r"de\.csv: the file is text, but not in UTF-8: Excel"):
        check_file(german, "NQ", settings)
    with pytest.raises(DataError, match=r"файл — текст, но не в кодировке UTF-8"):
        check_file(german, "NQ", settings, lang="ru")


def _finam_rows(bars: pd.DataFrame) -> tuple[str, str]:
    """A Finam-style export's header, and its bars with a Cyrillic ticker on every line."""
    header = "<TICKER>;<PER>;<DATE>;<TIME>;<OPEN>;<HIGH>;<LOW>;<CLOSE>;<VOL>"
    wall = bf.in_zone(bars, bf.NY)
    lines = [
        f"Фьючерс NQ;1;{t:%d.%m.%Y};{t:%H:%M};{r.open};{r.high};{r.low};{r.close};{r.volume}"
        for t, r in zip(wall, bars.itertuples(), strict=True)
    ]
    return header, "\r\n".join(lines) + "\r\n"


@pytest.mark.parametrize(
    ("encoding", "end", "note"),
    [
        # Refused as "not in UTF-8": only a Cyrillic header was taken for Windows-1251.
        ("cp1251", "", True),
        ("cp1251", "Загружено с finam.ru\r\n", True),
        # Cyrillic on every line, cut by the 64 KiB read: still UTF-8.
        ("utf-8", "", False),
        ("utf-8-sig", "Загружено с finam.ru\r\n", False),
    ],
)
def test_cyrillic_on_the_bars_lines_tells_windows_1251_from_utf8(
    encoding: str, end: str, note: bool, tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars(days=2)
    header, body = _finam_rows(bars)
    path = tmp_path / "finam.csv"
    path.write_bytes(f"{header}\r\n{body}{end}".encode(encoding))
    assert path.stat().st_size > 2 * 64 * 1024
    result = import_file(path, "NQ", settings)
    assert_stored(settings, bars)
    assert ("Windows-1251" in result.report.text()) == note


@pytest.mark.parametrize(
    "header",
    ["Date;Heure;Ouverture;Plus haut;Plus bas;Clôture;Volume", "Datum;Zeit;Eröffnung;Hoch"],
)
def test_latin_1_letters_are_not_taken_for_windows_1251(
    header: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """Read as Windows-1251, «Clôture» is «Clфture»: two alphabets in one word. Refused
    naming the encoding to save it in."""
    path = tmp_path / "fr.csv"
    path.write_bytes(f"{header}\n17.03.2024;18:00;1;1;1;1;1\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"not in UTF-8: .* \"CSV UTF-8 \(Comma delimited\)\""):
        check_file(path, "NQ", settings)


def test_a_time_column_of_another_name_is_not_taken_for_a_daily_file(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A French export (Date;Heure;Ouverture;…) was refused as daily bars, "export 1-minute
    bars instead", though its bars were minutes: its columns are named, and --columns."""
    path = tmp_path / "fr.csv"
    header = "Date;Heure;Ouverture;Plus haut;Plus bas;Clôture;Volume"
    path.write_text(f"{header}\n17.03.2024;18:00;1;1;1;1;1\n", encoding="utf-8")
    with pytest.raises(DataError) as refused:
        check_file(path, "NQ", settings)
    assert "line 1: unrecognised columns. Found: Date, Heure, Ouverture" in str(refused.value)
    assert "daily" not in str(refused.value)
    daily = tmp_path / "daily.csv"
    daily.write_text("Date,Open,High,Low,Close,Volume\n2024-03-18,1,1,1,1,1\n")
    with pytest.raises(DataError, match="the file holds daily bars"):
        check_file(daily, "NQ", settings)


# --- Russian terminals and Finam ------------------------------------------------------------


def _rows(path: Path, header: str, lines: list[str]) -> Path:
    path.write_text("\r\n".join([header, *lines]) + "\r\n", encoding="utf-8")
    return path


def _comma(value: float) -> str:
    return f"{value}".replace(".", ",")


@pytest.mark.parametrize(
    ("header", "row"),
    [
        # QUIK's and a Russian Excel's: decimal comma, day-first dotted dates.
        (
            "Дата;Время;Открытие;Максимум;Минимум;Закрытие;Объём",
            lambda t, r: f"{t:%d.%m.%Y};{t:%H:%M};{_comma(r.open)};{_comma(r.high)};"
            f"{_comma(r.low)};{_comma(r.close)};{r.volume}",
        ),
        (
            "Дата,Время,Открытие,Максимум,Минимум,Закрытие,Объем",
            lambda t,
            r: f"{t:%Y-%m-%d},{t:%H:%M:%S},{r.open},{r.high},{r.low},{r.close},{r.volume}",
        ),
        (
            "Дата и время;Откр.;Макс.;Мин.;Закр.;Объём",
            lambda t, r: f"{t:%d.%m.%Y %H:%M};{r.open};{r.high};{r.low};{r.close};{r.volume}",
        ),
        # Finam's export (and QUIK's): <TICKER>,<PER> beside the bars, yyyymmdd and hhmmss.
        (
            "<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>",
            lambda t, r: f"NQ,1,{t:%Y%m%d},{t:%H%M%S},{r.open},{r.high},{r.low},{r.close},"
            f"{r.volume}",
        ),
        (
            "<TICKER>;<PER>;<DATE>;<TIME>;<OPEN>;<HIGH>;<LOW>;<CLOSE>;<VOL>",
            lambda t, r: f"NQ;1;{t:%d/%m/%y};{t:%H:%M:%S};{r.open};{r.high};{r.low};{r.close};"
            f"{r.volume}",
        ),
    ],
    ids=["quik", "russian-iso", "russian-one-cell", "finam", "finam-semicolon"],
)
def test_russian_and_finam_headers_are_read(
    header: str, row: Callable[[pd.Timestamp, Any], str], tmp_path: Path, settings: EngineSettings
) -> None:
    """«Дата;Время;Открытие;Максимум;Минимум;Закрытие;Объём» was "unrecognised columns"."""
    bars = bf.week_of_bars(days=2)
    wall = bf.in_zone(bars, bf.NY)
    lines = [row(t, r) for t, r in zip(wall, bars.itertuples(), strict=True)]
    path = _rows(tmp_path / "ru.csv", header, lines)
    import_file(path, "NQ", settings)
    assert_stored(settings, bars)


def test_a_russian_header_naming_moscow_time_is_read_in_it(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """«Время (МСК)»: the bars are converted from Moscow time, and the report says it was
    declared by the header."""
    bars = bf.week_of_bars(days=2)
    wall = bf.in_zone(bars, "Europe/Moscow")
    lines = [
        f"{t:%d.%m.%Y};{t:%H:%M};{r.open};{r.high};{r.low};{r.close};{r.volume}"
        for t, r in zip(wall, bars.itertuples(), strict=True)
    ]
    header = "Дата;Время (МСК);Открытие;Максимум;Минимум;Закрытие;Объём"
    result = import_file(_rows(tmp_path / "msk.csv", header, lines), "NQ", settings)
    assert "Moscow time (Europe/Moscow), as declared" in result.report.text()
    assert_stored(settings, bars)


# --- damaged lines: one sentence naming the line, never Arrow's words or a crash ------------


def _damaged(path: Path, line: int, edit: Callable[[str], str]) -> Path:
    lines = path.read_text().splitlines()
    lines[line - 1] = edit(lines[line - 1])
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("write", "edit", "said"),
    [
        # A ';' file with '.' numbers was retried as decimal commas, and refused by that
        # retry's words: "line 1: open is not a number: '18002.0'".
        (bf.ninjatrader_txt, lambda x: x.replace(";", ";;", 1), "expected 6 fields, found 7."),
        (bf.ninjatrader_txt, lambda x: x.replace(";18", ";1x8", 1), "open is not a number: '1x8"),
        # Read as ISO, named by the first bar: "line 2: cannot read the timestamp '17107…'".
        (bf.tradingview_csv, lambda x: "abc" + x, "cannot read the timestamp 'abc1710"),
        # Arrow read on to the next quote, lines later: "volume: Failed to parse string: …".
        (bf.european_csv, lambda x: x.replace(";", ';"', 6).replace(';"', ";", 5), 'quote (")'),
        # Python's csv module raised "field larger than field limit (131072)": a traceback.
        (bf.plain_csv, lambda x: "x" * 200_000, "200000 characters long"),
    ],
    ids=["ninjatrader-fields", "ninjatrader-number", "unix-time", "open-quote", "long-line"],
)
def test_a_damaged_line_is_named_in_one_sentence(
    write: Callable[[Path, pd.DataFrame], Path],
    edit: Callable[[str], str],
    said: str,
    tmp_path: Path,
    settings: EngineSettings,
) -> None:
    bars = bf.week_of_bars(days=1)
    path = _damaged(write(tmp_path / "bars.csv", bars), 700, edit)
    with pytest.raises(DataError) as refused:
        check_file(path, "NQ", settings)
    message = str(refused.value)
    assert message.startswith(f"{path}, line 700: "), message
    assert said in message
    assert "Failed to parse" not in message and "\n" not in message


@pytest.mark.parametrize("header_too", [False, True, None])  # None: the header's alone
@pytest.mark.parametrize(
    ("write", "separator"),
    [(bf.plain_csv, ","), (bf.european_csv, ";"), (bf.sierra_txt, ","), (bf.kibot_txt, ",")],
    ids=["plain", "european", "sierra", "headerless"],
)
def test_a_separator_ending_every_line_is_an_empty_column_left_unread(
    write: Callable[[Path, pd.DataFrame], Path],
    separator: str,
    header_too: bool,
    tmp_path: Path,
    settings: EngineSettings,
) -> None:
    """Some exports end every bar's line with a separator, the header's or not: an empty
    last field. Every bar was refused as "expected 6 fields, found 7"; the bars are read
    as they are, and the report says nothing of it."""
    bars = bf.week_of_bars(days=2)
    path = write(tmp_path / "bars.csv", bars)
    lines = path.read_text().splitlines()
    headed = write is not bf.kibot_txt
    ended = [
        not headed or (header_too is not False if i == 0 else header_too is not None)
        for i in range(len(lines))
    ]
    path.write_text(
        "".join(f"{line}{separator * e}\n" for line, e in zip(lines, ended, strict=True))
    )
    order = "month-first" if write is bf.kibot_txt else None
    result = import_file(path, "NQ", settings, date_order=order)
    assert_stored(settings, bars)
    assert not result.report.warnings


def test_spaces_around_decimal_comma_numbers_are_read(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A volume aligned by its exporter (";  490") beside decimal commas was refused in
    Arrow's words, "volume: Failed to parse string: '  490' as a scalar of type double"."""
    bars = bf.week_of_bars(days=1)
    path = bf.european_csv(tmp_path / "eu.csv", bars)
    path.write_text(path.read_text().replace(";", ";  ").replace("\n", " \n"))
    import_file(path, "NQ", settings)
    assert_stored(settings, bars)


def test_a_line_of_spaces_under_the_bars_is_said_as_such(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """It was read without, as "Line 1382 is not a bar ('') but the vendor's footer"."""
    bars = bf.week_of_bars(days=1)
    path = bf.plain_csv(tmp_path / "nq.csv", bars)
    path.write_text(path.read_text() + "   \n")
    result = import_file(path, "NQ", settings)
    assert f"Line {len(bars) + 2} holds only spaces: the file is read without it." in (
        result.report.text()
    )
    assert "footer" not in result.report.text()
    assert_stored(settings, bars)


@pytest.mark.parametrize(
    "header",
    ["Date,Open,High,Low,Close,Volume", "Дата,Открытие,Максимум,Минимум,Закрытие,Объём"],
)
def test_a_date_column_holding_date_and_time_is_read(
    header: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """pandas' and many platforms' exports name the one date-and-time column "Date": it
    was "unrecognised columns". A daily file's "Date" (Yahoo's) is still refused as daily."""
    bars = bf.week_of_bars(days=2)
    path = bf.plain_csv(tmp_path / "bars.csv", bars)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([header, *lines[1:]]) + "\n")
    import_file(path, "NQ", settings)
    assert_stored(settings, bars)

    daily = tmp_path / "daily.csv"
    daily.write_text(f"{header},Adj Close\n2024-03-18,1,2,0.5,1.5,100,1.5\n")
    with pytest.raises(DataError, match="the file holds daily bars"):
        check_file(daily, "NQ", settings)

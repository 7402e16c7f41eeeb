"""Importing vendor files: each layout, timezones and DST, and errors that name the line."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from barb.data.importer import import_file
from barb.data.store import data_path, read_bars
from barb.errors import DataError
from barb.settings import EngineSettings

PLAIN_HEADER = "timestamp,open,high,low,close,volume"
BAR = "100,101,99.5,100.5,10"


def write(tmp_path: Path, text: str, name: str = "bars.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def bars_of(settings: EngineSettings, symbol: str = "NQ") -> pd.DataFrame:
    frame, _ = read_bars(data_path(symbol, settings))
    return frame


def stamps(frame: pd.DataFrame) -> list[str]:
    return [str(t) for t in frame["timestamp"]]


# --- layouts ---------------------------------------------------------------------------


def test_plain_csv_naive_times_are_the_instruments_wall_clock(
    tmp_path: Path, settings: EngineSettings
) -> None:
    path = write(
        tmp_path,
        f"{PLAIN_HEADER}\n"
        "2024-01-05 16:59:00,100,101,99.5,100.5,10\n"
        "2024-01-07 18:00:00,100.5,102.25,100,102,7\n"
        "2024-01-08 09:30:00,102,103,101.75,102.5,900\n",
    )
    meta = import_file(path, "nq", settings, any_level=True).meta

    frame = bars_of(settings)
    assert stamps(frame) == ["2024-01-05 16:59:00", "2024-01-07 18:00:00", "2024-01-08 09:30:00"]
    assert [str(d.date()) for d in frame["trading_date"]] == [
        "2024-01-05",
        "2024-01-08",  # Sunday evening belongs to Monday
        "2024-01-08",
    ]
    assert list(frame["minute"]) == [16 * 60 + 59, 18 * 60, 9 * 60 + 30]
    assert list(frame["volume"]) == [10, 7, 900]
    assert frame["high"].tolist() == [101, 102.25, 103]
    assert meta.source == "imported"
    assert meta.instrument == "NQ"
    assert meta.timezone == "America/New_York"
    assert (meta.first_date, meta.last_date, meta.rows) == (
        dt.date(2024, 1, 5),
        dt.date(2024, 1, 8),
        3,
    )
    assert meta.description == "imported from bars.csv (plain CSV, times in America/New_York)"


def test_plain_csv_with_offsets_converts_across_a_dst_change(
    tmp_path: Path, settings: EngineSettings
) -> None:
    # US clocks went forward on 2024-03-10: 09:30 New York is 14:30 UTC before, 13:30 after.
    path = write(
        tmp_path,
        f"{PLAIN_HEADER}\n"
        f"2024-03-08T09:30:00-05:00,{BAR}\n"
        f"2024-03-08T08:31:00-06:00,{BAR}\n"  # Chicago's offset, same instant as 09:31 ET
        f"2024-03-11T13:30:00Z,{BAR}\n"
        f"2024-03-11T09:31:00-04:00,{BAR}\n",
    )
    import_file(path, "NQ", settings, any_level=True)
    assert stamps(bars_of(settings)) == [
        "2024-03-08 09:30:00",
        "2024-03-08 09:31:00",
        "2024-03-11 09:30:00",
        "2024-03-11 09:31:00",
    ]


def test_timezone_option_reads_naive_times_in_another_zone(
    tmp_path: Path, settings: EngineSettings
) -> None:
    path = write(
        tmp_path,
        f"{PLAIN_HEADER}\n2024-07-01 08:30:00,{BAR}\n2024-12-02 08:30:00,{BAR}\n",
    )
    import_file(path, "CL", settings, timezone="America/Chicago", stamp="open")
    assert stamps(bars_of(settings, "CL")) == ["2024-07-01 09:30:00", "2024-12-02 09:30:00"]


def test_split_date_time_layout(tmp_path: Path, settings: EngineSettings) -> None:
    us = write(
        tmp_path,
        "Date,Time,Open,High,Low,Close,Volume\n"
        "01/02/2024,09:30,100,101,99.5,100.5,10\n"
        "01/02/2024,09:31,100.5,101,100,100.75,20\n",
        "us.csv",
    )
    # One day's bars with no day over 12 cannot tell 2 January from 1 February: the order
    # is given (without it the file is refused: test_import_vendor_quirks).
    import_file(us, "ES", settings, date_order="month-first", any_level=True)
    assert stamps(bars_of(settings, "ES")) == ["2024-01-02 09:30:00", "2024-01-02 09:31:00"]

    iso = write(
        tmp_path,
        "date;time;open;high;low;close;volume\n"
        "2024-01-02;09:30:00;100;101;99.5;100.5;10\n"
        "2024-01-02;09:31:00;100.5;101;100;100.75;20\n",
        "iso.csv",
    )
    meta = import_file(iso, "ES", settings, mode="replace").meta
    assert stamps(bars_of(settings, "ES")) == ["2024-01-02 09:30:00", "2024-01-02 09:31:00"]
    assert "split CSV" in meta.description


DATABENTO_HEADER = "ts_event,rtype,publisher_id,instrument_id,open,high,low,close,volume,symbol"


def test_databento_utc_nanoseconds_map_to_new_york_wall_clock(
    tmp_path: Path, settings: EngineSettings
) -> None:
    path = write(
        tmp_path,
        f"{DATABENTO_HEADER}\n"
        # 2024-03-08 14:30 UTC = 09:30 EST; 2024-03-11 13:30 UTC = 09:30 EDT (after the change)
        "1709908200000000000,33,1,4321,17000.25,17001,16999,17000.5,120,NQH4\n"
        "1710163800000000000,33,1,4321,17100.25,17101,17099,17100.5,90,NQH4\n"
        # 2024-11-04 14:30 UTC = 09:30 EST, after clocks went back on 2024-11-03
        "1730730600000000000,33,1,5678,20000,20001,19999,20000.5,90,NQZ4\n",
    )
    meta = import_file(path, "NQ", settings).meta
    assert stamps(bars_of(settings)) == [
        "2024-03-08 09:30:00",
        "2024-03-11 09:30:00",
        "2024-11-04 09:30:00",
    ]
    assert meta.description == "imported from bars.csv (databento CSV, times in UTC)"


def test_databento_iso_times_and_fixed_point_prices(
    tmp_path: Path, settings: EngineSettings
) -> None:
    path = write(
        tmp_path,
        f"{DATABENTO_HEADER}\n"
        "2024-07-01T13:30:00.000000000Z,33,1,7,81250000000,81300000000,81200000000,"
        "81270000000,1500,CL.c.0\n"
        "2024-07-01T13:31:00.000000000Z,33,1,7,81270000000,81270000000,81010000000,"
        "81010000000,900,CL.c.0\n",
    )
    import_file(path, "CL", settings)
    frame = bars_of(settings, "CL")
    assert stamps(frame) == ["2024-07-01 09:30:00", "2024-07-01 09:31:00"]
    assert frame["open"].tolist() == [81.25, 81.27]
    assert frame["low"].tolist() == [81.2, 81.01]


def test_databento_several_symbols_must_form_one_series(
    tmp_path: Path, settings: EngineSettings
) -> None:
    interleaved = write(
        tmp_path,
        f"{DATABENTO_HEADER}\n"
        "1709908200000000000,33,1,1,100,101,99,100,1,NQH4\n"
        "1709908200000000000,33,1,2,100,101,99,100,1,NQM4\n"
        "1709908260000000000,33,1,1,100,101,99,100,1,NQH4\n",
    )
    with pytest.raises(DataError) as err:
        import_file(interleaved, "NQ", settings)
    assert err.value.line == 4
    assert "bars of NQH4 resume" in str(err.value)
    assert "2 series (NQH4, NQM4)" in str(err.value)
    assert "one continuous series" in str(err.value)

    rolled = write(
        tmp_path,
        f"{DATABENTO_HEADER}\n"
        "1709908200000000000,33,1,1,100,101,99,100,1,NQH4\n"
        "1709908260000000000,33,1,2,100,101,99,100,1,NQM4\n",
        "rolled.csv",
    )
    assert import_file(rolled, "NQ", settings, any_level=True).meta.rows == 2


def test_databento_other_record_types_are_refused(tmp_path: Path, settings: EngineSettings) -> None:
    path = write(
        tmp_path,
        f"{DATABENTO_HEADER}\n"
        "1709908200000000000,33,1,1,100,101,99,100,1,NQH4\n"
        "1709911800000000000,34,1,1,100,101,99,100,1,NQH4\n",
    )
    with pytest.raises(DataError, match="rtype 34 is not one-minute bars") as err:
        import_file(path, "NQ", settings)
    assert err.value.line == 3


def test_parquet_input(tmp_path: Path, settings: EngineSettings) -> None:
    utc = pd.to_datetime(["2024-03-08 14:30", "2024-03-11 13:30"]).tz_localize("UTC")
    table = pa.table(
        {
            "Timestamp": pa.array(utc, type=pa.timestamp("ns", tz="UTC")),
            "Open": [1.0, 2.0],
            "High": [1.5, 2.5],
            "Low": [0.5, 1.5],
            "Close": [1.25, 2.25],
            "Volume": pa.array([3, 4], type=pa.int32()),
        }
    )
    path = tmp_path / "bars.data"  # detected by content, not by name
    pq.write_table(table, path)
    meta = import_file(path, "NQ", settings, stamp="open", any_level=True).meta
    frame = bars_of(settings)
    assert stamps(frame) == ["2024-03-08 09:30:00", "2024-03-11 09:30:00"]
    assert frame["volume"].tolist() == [3, 4]
    assert meta.description == "imported from bars.data (plain Parquet, times in UTC)"

    naive = table.set_column(0, "Timestamp", pa.array(utc.tz_localize(None)))
    pq.write_table(naive, path)
    import_file(path, "NQ", settings, fmt="parquet", timezone="UTC", stamp="open", mode="replace")
    assert stamps(bars_of(settings)) == ["2024-03-08 09:30:00", "2024-03-11 09:30:00"]


def test_parquet_errors_name_the_row(tmp_path: Path, settings: EngineSettings) -> None:
    table = pa.table(
        {
            "timestamp": pa.array(pd.to_datetime(["2024-01-02 09:30", "2024-01-02 09:31"])),
            "open": [1.0, 2.0],
            "high": [1.5, 1.0],
            "low": [0.5, 1.5],
            "close": [1.25, 1.25],
            "volume": [3, 4],
        }
    )
    path = tmp_path / "bars.parquet"
    pq.write_table(table, path)
    with pytest.raises(DataError, match=r"row 2: high 1 is below low 1\.5"):
        import_file(path, "NQ", settings)


# --- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        (f"2024-01-02 09:30:00,{BAR}\n2024-01-02 9h31,{BAR}\n", 3, "cannot read the timestamp"),
        (
            f"2024-01-02 09:30:00,{BAR}\n2024-01-02 09:30:00,100,101,99.5,100.25,10\n",
            3,
            "duplicate time: 2024-01-02 09:30:00 is also earlier in the file, with close 100.5 "
            "there and 100.25 here; if two exports were pasted together, keep one of them",
        ),
        ("2024-01-02 09:30:00,100,99,101,100,10\n", 2, "high 99 is below low 101"),
        ("2024-01-02 09:30:00,102,101,99,100,10\n", 2, "open 102 is outside the bar's low..high"),
        ("2024-01-02 09:30:00,100,101,99,98.5,10\n", 2, "close 98.5 is outside"),
        (f"2024-01-02 09:30:00,{BAR}\n2024-01-02 09:31:00,1,2,0,1,-5\n", 3, "negative volume -5"),
        ("2024-01-02 09:30:00,100,101,99,100,1.5\n", 2, "volume 1.5 is not a whole number"),
        ("2024-01-02 09:30:00,100,,99,100,1\n", 2, "missing high"),
        (
            f"2024-01-02 09:30:00,{BAR}\n2024-01-02 09:31:00,abc,1,1,1,1\n",
            3,
            "open is not a number",
        ),
        (
            f"2024-01-02 09:30:00,{BAR}\n2024-01-02 09:31:00,1,1,1\n",
            3,
            "expected 6 fields, found 4",
        ),
        (f"2024-01-02 09:30:30,{BAR}\n", 2, "not on a whole minute"),
        (
            f"2024-01-02T09:30:00Z,{BAR}\n2024-01-02 09:31:00,{BAR}\n",
            3,
            "lacks a UTC offset, unlike the first bar's",
        ),
    ],
)
def test_errors_name_the_line_and_the_problem(
    tmp_path: Path, settings: EngineSettings, body: str, line: int, message: str
) -> None:
    path = write(tmp_path, f"{PLAIN_HEADER}\n{body}")
    with pytest.raises(DataError) as err:
        import_file(path, "NQ", settings)
    assert err.value.line == line
    assert err.value.path == str(path)
    assert message in str(err.value)
    assert str(err.value).startswith(f"{path}, line {line}: ")


def test_line_numbers_count_blank_lines(tmp_path: Path, settings: EngineSettings) -> None:
    # Sorted by time before the checks: the repeat is still named by its own line.
    path = write(
        tmp_path,
        f"{PLAIN_HEADER}\n2024-01-02 09:31:00,{BAR}\n\n\n2024-01-02 09:30:00,{BAR}\n"
        "2024-01-02 09:31:00,100,101,99.5,101,10\n",
    )
    with pytest.raises(DataError, match="duplicate time: 2024-01-02 09:31:00") as err:
        import_file(path, "NQ", settings)
    assert err.value.line == 6


def test_the_earliest_problem_is_reported(tmp_path: Path, settings: EngineSettings) -> None:
    path = write(
        tmp_path,
        f"{PLAIN_HEADER}\n"
        f"2024-01-02 09:30:00,{BAR}\n"
        "2024-01-02 09:31:00,100,99,101,100,10\n"  # high below low
        "2024-01-02 09:31:00,100,101,99,100,-1\n",  # duplicate, negative volume
    )
    with pytest.raises(DataError, match="high 99 is below low 101") as err:
        import_file(path, "NQ", settings)
    assert err.value.line == 3


def test_missing_columns_lists_found_and_expected(tmp_path: Path, settings: EngineSettings) -> None:
    path = write(tmp_path, "timestamp,open,close\n2024-01-02 09:30:00,1,1\n")
    with pytest.raises(DataError) as err:
        import_file(path, "NQ", settings)
    message = str(err.value)
    assert "Found: timestamp, open, close" in message
    assert "timestamp,open,high,low,close,volume" in message
    assert "ts_event" in message  # every layout is offered

    with pytest.raises(DataError, match="missing columns high, low of") as err:
        import_file(path, "NQ", settings, fmt="plain")


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "the file is empty"), ("\n\n", "the file is empty"), (f"{PLAIN_HEADER}\n", "no bars")],
)
def test_empty_files(tmp_path: Path, settings: EngineSettings, text: str, message: str) -> None:
    with pytest.raises(DataError, match=message):
        import_file(write(tmp_path, text), "NQ", settings)


def test_times_a_clock_change_skips_are_refused(tmp_path: Path, settings: EngineSettings) -> None:
    # 02:30 on 2024-03-10 never happened in Chicago.
    path = write(tmp_path, f"{PLAIN_HEADER}\n2024-03-10 02:30:00,{BAR}\n")
    with pytest.raises(DataError, match="does not exist or occurs twice in America/Chicago"):
        import_file(path, "NQ", settings, timezone="America/Chicago", stamp="open")


def test_bad_options_are_refused(tmp_path: Path, settings: EngineSettings) -> None:
    path = write(tmp_path, f"{PLAIN_HEADER}\n2024-01-02T09:30:00Z,{BAR}\n")
    with pytest.raises(DataError, match="unknown timezone 'Mars/Olympus'"):
        import_file(path, "NQ", settings, timezone="Mars/Olympus")
    with pytest.raises(DataError, match="--timezone does not apply"):
        import_file(path, "NQ", settings, timezone="America/Chicago")
    with pytest.raises(DataError, match="unknown format 'xls'"):
        import_file(path, "NQ", settings, fmt="xls")
    with pytest.raises(DataError, match="no such file"):
        import_file(tmp_path / "nope.csv", "NQ", settings)


def test_a_failed_import_leaves_the_existing_data_untouched(
    tmp_path: Path, settings: EngineSettings
) -> None:
    good = write(tmp_path, f"{PLAIN_HEADER}\n2024-01-02 09:30:00,{BAR}\n", "good.csv")
    import_file(good, "NQ", settings, stamp="open", any_level=True)
    target = data_path("NQ", settings)
    before, stat = target.read_bytes(), target.stat()

    bad = write(
        tmp_path,
        f"{PLAIN_HEADER}\n2024-01-03 09:30:00,{BAR}\n2024-01-03 09:29:00,{BAR}\n",
        "bad.csv",
    )
    with pytest.raises(DataError):
        import_file(bad, "NQ", settings, stamp="open")

    assert target.read_bytes() == before
    assert target.stat().st_mtime_ns == stat.st_mtime_ns
    assert sorted(p.name for p in target.parent.iterdir()) == ["NQ.parquet"]


def test_binary_junk_is_refused_plainly(tmp_path: Path, settings: EngineSettings) -> None:
    path = tmp_path / "junk.csv"
    path.write_bytes(b"\xff\xfe\x00\x01garbage\n")
    with pytest.raises(DataError, match="not UTF-8 text"):
        import_file(path, "NQ", settings)

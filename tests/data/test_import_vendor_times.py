"""Times as real exports write them (p46ab #5, #6, #9, #12): Interactive Brokers' zone names,
Excel's one date-time column in either day order, two exports pasted together, Databento
Parquet without a zone. Each file is written from ``bar_files``' week of bars; what is
stored is compared with the file read independently by pandas, and a refused file leaves
the stored data byte for byte as it was."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import bar_files as bf
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from barb.data.importer import ImportRefused, check_file, import_file
from barb.data.store import data_path, read_bars
from barb.errors import DataError
from barb.settings import EngineSettings

NY = bf.NY
PRICES = ["open", "high", "low", "close", "volume"]


def assert_stored(settings: EngineSettings, expected: pd.DataFrame) -> None:
    """The stored bars are ``expected`` (naive New York ``timestamp`` and OHLCV)."""
    frame, _ = read_bars(data_path("NQ", settings))
    assert frame["timestamp"].tolist() == expected["timestamp"].tolist()
    for column in PRICES:
        assert frame[column].tolist() == pytest.approx(expected[column].tolist()), column


def stored_bytes(settings: EngineSettings) -> bytes:
    return data_path("NQ", settings).read_bytes()


def refused_unchanged(settings: EngineSettings, path: Path, match: str, **options: object) -> None:
    """Importing ``path`` over the stored data is refused with ``match``; nothing changes."""
    before = stored_bytes(settings)
    with pytest.raises(DataError, match=match):
        import_file(path, "NQ", settings, mode="replace", **options)
    assert stored_bytes(settings) == before


@pytest.fixture
def stored(tmp_path: Path, settings: EngineSettings) -> None:
    """Other NQ bars already stored, for the refusals to leave alone."""
    import_file(
        bf.plain_csv(tmp_path / "stored.csv", bf.week_of_bars(dt.date(2024, 3, 17))), "NQ", settings
    )


# --- Interactive Brokers: "20240318 09:30:00 US/Eastern" ----------------------------------


def ib_csv(path: Path, bars: pd.DataFrame, zone: str | None, time_format: str) -> Path:
    """TWS's layout: ``date,open,high,low,close,volume,average,barCount``, the date as
    ``time_format`` in ``zone``, followed by the zone's name when ``zone`` is named."""
    wall = bf.in_zone(bars, zone or NY).dt.strftime(time_format)
    date = wall + f" {zone}" if zone else wall
    out = pd.DataFrame({"date": date, **{c: bars[c] for c in PRICES}})
    out["average"] = (bars["high"] + bars["low"]) / 2
    out["barCount"] = bars["volume"] // 3 + 1
    out.to_csv(path, index=False)
    return path


def read_ib(path: Path) -> pd.DataFrame:
    """The IB file read by pandas alone: the zone name after the time, localized there."""
    frame = pd.read_csv(path)
    parts = frame["date"].str.extract(r"^(\d{8}\s+\S+)\s*(\S*)$")
    naive = pd.to_datetime(parts[0].str.replace(r"\s+", " ", regex=True), format="%Y%m%d %H:%M:%S")
    zone = parts[1].iloc[0] or NY
    wall = naive.dt.tz_localize(zone).dt.tz_convert(NY).dt.tz_localize(None)
    return frame.assign(timestamp=wall)


@pytest.mark.parametrize("zone", ["US/Eastern", "US/Central", "Europe/London", "Asia/Kolkata"])
def test_ib_times_are_read_in_the_zone_they_name(
    zone: str, tmp_path: Path, settings: EngineSettings
) -> None:
    # The week of 10 March: New York on summer time, London not yet (a 4-hour gap, not 5).
    bars = bf.week_of_bars(dt.date(2024, 3, 10))
    path = ib_csv(tmp_path / "NQ_ib.csv", bars, zone, "%Y%m%d %H:%M:%S")
    result = import_file(path, "NQ", settings)
    assert_stored(settings, read_ib(path))
    assert result.report.layout == "Interactive Brokers TWS export"
    assert f"Times read in the zone the file names, {zone}." in result.report.text()
    # The zone is the file's: declaring it again is refused, as for any time with an offset.
    with pytest.raises(DataError, match=r"carry their own zone .*a zone's name"):
        check_file(path, "NQ", settings, timezone="America/Chicago")


def test_ib_times_without_a_zone_follow_the_naive_rules(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars(dt.date(2024, 3, 10))
    path = ib_csv(tmp_path / "NQ_ib.csv", bars, None, "%Y%m%d  %H:%M:%S")  # two spaces
    result = import_file(path, "NQ", settings)
    assert_stored(settings, read_ib(path))
    assert "Times read as New York time" in result.report.text()


def test_ib_daily_bars_are_named_daily(tmp_path: Path, settings: EngineSettings) -> None:
    days = bf.week_of_bars(dt.date(2024, 3, 10)).iloc[::1380].reset_index(drop=True)
    path = ib_csv(tmp_path / "NQ_ib_daily.csv", days, None, "%Y%m%d")
    with pytest.raises(
        DataError, match=r"csv: the file holds daily bars \(its dates, such as '20240310'"
    ):
        import_file(path, "NQ", settings)


def test_ib_zones_that_differ_are_refused_on_their_line(
    tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    path = ib_csv(
        tmp_path / "NQ_ib.csv",
        bf.week_of_bars(dt.date(2024, 3, 10)),
        "US/Eastern",
        "%Y%m%d %H:%M:%S",
    )
    lines = path.read_text().splitlines()
    lines[101] = lines[101].replace("US/Eastern", "US/Central")
    path.write_text("\n".join(lines) + "\n")
    refused_unchanged(
        settings,
        path,
        r"line 102: the time '\d{8} [\d:]+ US/Central' and the first bar's '\d{8} [\d:]+ "
        r"US/Eastern' are not in the same zone; export the file again with every time in one",
    )


# --- Excel: one date-time column, month or day first ---------------------------------------


def excel_csv(path: Path, bars: pd.DataFrame, time_format: str) -> Path:
    """One ``Date Time`` column as Excel saves it: BOM, CRLF, no leading zeros with ``#``."""
    wall = bf.in_zone(bars, NY)
    text = wall.dt.strftime(time_format.replace("#", ""))
    if "#" in time_format:  # Excel's m/d/yyyy h:mm: 3/4/2024 9:30
        text = wall.map(lambda t: f"{t.month}/{t.day}/{t.year} {t.hour}:{t.minute:02d}")
    out = pd.DataFrame({"Date Time": text, **{c.title(): bars[c] for c in PRICES}})
    path.write_bytes(b"\xef\xbb\xbf" + out.to_csv(index=False, lineterminator="\r\n").encode())
    return path


@pytest.mark.parametrize(
    ("time_format", "read_as"),
    [
        ("%m/%d/%Y %H:%M", "%m/%d/%Y %H:%M"),
        ("#", "%m/%d/%Y %H:%M"),
        ("%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %I:%M:%S %p"),
        ("%d.%m.%Y %H:%M", "%d.%m.%Y %H:%M"),
        ("%d/%m/%Y %H:%M", "%d/%m/%Y %H:%M"),
    ],
)
@pytest.mark.parametrize(
    "first_sunday",
    [
        dt.date(2024, 3, 3),  # 4-8 March: no day over 12, told by the bars' running on
        dt.date(2024, 3, 10),  # 11-15 March: a day over 12 tells
    ],
)
def test_one_excel_date_time_column_is_read_in_its_own_day_order(
    time_format: str, read_as: str, first_sunday: dt.date, tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars(first_sunday)
    path = excel_csv(tmp_path / "nq_excel.csv", bars, time_format)
    import_file(path, "NQ", settings)
    frame = pd.read_csv(path, encoding="utf-8-sig")
    expected = frame.rename(columns=str.lower).assign(
        timestamp=pd.to_datetime(frame["Date Time"], format=read_as)
    )
    assert_stored(settings, expected)


def test_one_day_of_dates_that_cannot_tell_asks_for_the_order(
    tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    bars = bf.week_of_bars(dt.date(2024, 3, 3), days=1)  # 03/03 18:00 to 03/04 17:00
    bars = bars[bars["timestamp"].dt.day == 4].reset_index(drop=True)
    path = excel_csv(tmp_path / "one_day.csv", bars, "%m/%d/%Y %H:%M")
    refused_unchanged(
        settings,
        path,
        r"dates such as '03/04/2024' may be month first or day first, and nothing in the file "
        r"tells which .*; pass --date-order month-first \(US\) or --date-order day-first\.",
    )
    import_file(path, "NQ", settings, mode="replace", date_order="month-first")
    frame = pd.read_csv(path, encoding="utf-8-sig").rename(columns=str.lower)
    expected = frame.assign(timestamp=pd.to_datetime(frame["date time"], format="%m/%d/%Y %H:%M"))
    assert_stored(settings, expected)
    # An order the dates contradict is refused: 03/13/2024 cannot be day first.
    week = excel_csv(tmp_path / "week.csv", bf.week_of_bars(dt.date(2024, 3, 10)), "%m/%d/%Y %H:%M")
    refused_unchanged(
        settings,
        week,
        r"--date-order day-first does not fit the file's dates \(such as '03/1\d/2024'\), "
        "which are month-first; leave the option out.",
        date_order="day-first",
    )


# --- two exports pasted together -----------------------------------------------------------


def pasted(path: Path, bars: pd.DataFrame, how: str) -> Path:
    """Two exports of ``bars`` that overlap by a day in one file: one after the other
    ("pasted"), the later one first ("later_first"), or their lines sorted by time
    ("sorted": each repeat beside the line it repeats)."""
    first, second = bars.iloc[:4000], bars.iloc[2620:]
    both = pd.concat([second, first] if how == "later_first" else [first, second])
    if how == "sorted":
        both = both.sort_values("timestamp", kind="stable")
    return bf.plain_csv(path, both)


def read_plain(path: Path) -> pd.DataFrame:
    """The file read by pandas, in time order, each repeated line once."""
    frame = pd.read_csv(path, parse_dates=["timestamp"])
    return frame.drop_duplicates().sort_values("timestamp", kind="stable")


@pytest.mark.parametrize("how", ["sorted", "pasted", "later_first"])
def test_identical_repeats_of_pasted_exports_are_kept_once_and_said(
    how: str, tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars(dt.date(2024, 3, 10))
    path = pasted(tmp_path / "two.csv", bars, how)
    result = import_file(path, "NQ", settings)
    expected = read_plain(path)
    assert len(expected) == len(bars)
    assert_stored(settings, expected)
    text = result.report.text()
    assert f"{len(bars) + 1380:,} bars" in text.splitlines()[0]  # the file's lines
    assert "1380 in all (the first at 2024-03-12 14:40:00); each is imported once." in text
    sorted_note = "they are imported sorted by time, which is safe, as no time in the file holds"
    assert (sorted_note in text) == (how != "sorted")


def test_repeats_with_other_prices_are_refused_in_one_sentence(
    tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    bars = bf.week_of_bars(dt.date(2024, 3, 10))
    path = pasted(tmp_path / "two.csv", bars, "later_first")
    frame = pd.read_csv(path)
    frame.loc[frame.index[-1], "close"] = frame["close"].iloc[-1] + 0.25  # a revised last bar
    frame.loc[frame.index[-1], "high"] = frame[["high", "close"]].iloc[-1].max()
    frame.to_csv(path, index=False)
    with pytest.raises(ImportRefused) as refused:
        import_file(path, "NQ", settings, mode="replace")
    message = str(refused.value)
    # Only the revised bar differs from the line of its time earlier in the file.
    last = frame.iloc[-1]
    earlier = frame[frame["timestamp"] == last["timestamp"]].iloc[0]
    assert message == (
        f"{path}, line {len(frame) + 1}: duplicate time: {last['timestamp']} is also earlier in "
        f"the file, with close {earlier['close']:.10g} there and {last['close']:.10g} here; if two "
        "exports were pasted together, keep one of them, or delete the repeated lines."
    )
    assert refused.value.report.count("duplicates") == 1
    refused_unchanged(settings, path, "duplicate time")


# --- Databento Parquet whose ts_event lost its zone ---------------------------------------


@pytest.mark.parametrize("timezone", [None, "UTC"])
def test_databento_parquet_without_a_zone_is_read_as_utc(
    timezone: str | None, tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars(dt.date(2024, 3, 10))
    utc = bars["timestamp"].dt.tz_convert("UTC").dt.tz_localize(None)
    table = pa.table(
        {
            "ts_event": pa.array(utc.to_numpy(), pa.timestamp("ns")),
            "rtype": pa.array([33] * len(bars), pa.uint8()),
            **{c: pa.array(bars[c].to_numpy()) for c in PRICES},
            "symbol": pa.array(["NQM4"] * len(bars)),
        }
    )
    path = tmp_path / "glbx-mdp3.ohlcv-1m.parquet"
    pq.write_table(table, path)
    result = import_file(path, "NQ", settings, timezone=timezone)
    frame = pd.read_parquet(path)
    wall = frame["ts_event"].dt.tz_localize("UTC").dt.tz_convert(NY).dt.tz_localize(None)
    assert_stored(settings, frame.assign(timestamp=wall))
    assert (
        "ts_event has no timezone in the file: read as UTC, which Databento's ts_event always is."
        in result.report.text()
    )

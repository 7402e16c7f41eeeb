"""Times as real exports write them (p46ab #5, #6, #9, #12): Interactive Brokers' zone names,
Excel's one date-time column in either day order, two exports pasted together, Databento
Parquet without a zone. Each file is written from ``bar_files``' week of bars; what is
stored is compared with the file read independently by pandas, and a refused file leaves
the stored data byte for byte as it was."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import bar_files as bf
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from babel import Locale

from barb.data.importer import ImportRefused, check_file, check_options, import_file
from barb.data.store import data_path, read_bars
from barb.data.words import ImportWords
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
    ("time_format", "read_as", "order"),
    [
        ("%m/%d/%Y %H:%M", "%m/%d/%Y %H:%M", "month-first"),
        ("#", "%m/%d/%Y %H:%M", "month-first"),
        ("%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %I:%M:%S %p", "month-first"),
        ("%d.%m.%Y %H:%M", "%d.%m.%Y %H:%M", None),  # dotted dates are day first
        ("%d/%m/%Y %H:%M", "%d/%m/%Y %H:%M", "day-first"),
        ("%m/%d/%y %H:%M", "%m/%d/%y %H:%M", "month-first"),  # Excel's 3/13/24
        ("%d-%m-%Y %H:%M", "%d-%m-%Y %H:%M", "day-first"),  # Dutch 13-03-2024
    ],
)
@pytest.mark.parametrize(
    "first_sunday",
    [
        dt.date(2024, 3, 3),  # 4-8 March: no day over 12, so only --date-order tells
        dt.date(2024, 3, 10),  # 11-15 March: a day over 12 tells
    ],
)
def test_one_excel_date_time_column_is_read_in_its_own_day_order(
    time_format: str,
    read_as: str,
    order: str | None,
    first_sunday: dt.date,
    tmp_path: Path,
    settings: EngineSettings,
) -> None:
    bars = bf.week_of_bars(first_sunday)
    path = excel_csv(tmp_path / "nq_excel.csv", bars, time_format)
    told = first_sunday.day == 10 or order is None
    if not told:
        with pytest.raises(DataError, match=r"\(no day in it is over 12\); pass --date-order"):
            import_file(path, "NQ", settings)
    import_file(path, "NQ", settings, date_order=None if told else order)
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
    said = (
        "ts_event has no zone in the file: read as UTC, Databento's zone for it, under which "
        "the bars fit NQ's session times."
        if timezone is None
        else "ts_event has no zone in the file: its times are read as UTC, as --timezone says."
    )
    assert said in result.report.text()


# --- r47b: what 022412d stored wrong without a word ----------------------------------------


def cash_session_bars(days: list[dt.date], seed: int = 3) -> pd.DataFrame:
    """09:30-15:59 New York bars (tz-aware ``timestamp`` and OHLCV) on each of ``days``."""
    wall = pd.DatetimeIndex([])
    for day in days:
        start = pd.Timestamp(day) + pd.Timedelta(hours=9, minutes=30)
        wall = wall.append(pd.date_range(start, periods=390, freq="1min"))
    rng = np.random.default_rng(seed)
    close = 16000 + np.cumsum(rng.integers(-8, 9, len(wall))) * 0.25
    open_ = np.r_[close[0], close[:-1]]
    return pd.DataFrame(
        {
            "timestamp": wall.tz_localize(NY),
            "open": open_,
            "high": np.maximum(open_, close) + 0.25,
            "low": np.minimum(open_, close) - 0.25,
            "close": close,
            "volume": rng.integers(1, 500, len(wall)),
        }
    )


# Payrolls Fridays: every date's fields are 12 or less, and a month apart under either order.
FIRST_FRIDAYS = [dt.date(2023, 1, 6), dt.date(2023, 2, 3), dt.date(2023, 3, 3)]


def split_csv(path: Path, bars: pd.DataFrame, date_format: str, sep: str = ",") -> Path:
    wall = bf.in_zone(bars, NY)
    out = pd.DataFrame(
        {"Date": wall.dt.strftime(date_format), "Time": wall.dt.strftime("%H:%M")}
        | {c.title(): bars[c] for c in PRICES}
    )
    out.to_csv(path, index=False, sep=sep)
    return path


def read_split(path: Path, date_format: str, sep: str = ",") -> pd.DataFrame:
    frame = pd.read_csv(path, sep=sep, dtype={"Date": str}).rename(columns=str.lower)
    stamp = pd.to_datetime(frame["date"] + " " + frame["time"], format=f"{date_format} %H:%M")
    return frame.assign(timestamp=stamp)


@pytest.mark.parametrize("layout", ["excel", "split"])
def test_first_fridays_ask_for_the_day_order_and_take_the_one_given(
    layout: str, tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    # 022412d guessed day first from the steps between dates: 6 January stored on 1 June,
    # 3 February on 2 March, sorted as "safe". Only a day over 12 may tell.
    bars = cash_session_bars(FIRST_FRIDAYS)
    if layout == "excel":
        path = excel_csv(tmp_path / "nfp.csv", bars, "#")
        frame = pd.read_csv(path, encoding="utf-8-sig").rename(columns=str.lower)
        stamp = pd.to_datetime(frame["date time"], format="%m/%d/%Y %H:%M")
        expected = frame.assign(timestamp=stamp)
    else:
        path = split_csv(tmp_path / "nfp.csv", bars, "%m/%d/%Y")
        expected = read_split(path, "%m/%d/%Y")
    refused_unchanged(
        settings,
        path,
        r"dates such as '0?1/0?6/2023' may be month first or day first, and nothing in the file "
        r"tells which \(no day in it is over 12\); pass --date-order month-first \(US\) or "
        r"--date-order day-first\.$",
    )
    # The order the person gives is taken: nothing in the file contradicts it.
    import_file(path, "NQ", settings, mode="replace", date_order="month-first")
    assert_stored(settings, expected)
    assert sorted(expected["timestamp"].dt.date.unique()) == FIRST_FRIDAYS


def test_the_caption_asks_for_the_day_order_of_first_fridays(
    tmp_path: Path, settings: EngineSettings
) -> None:
    path = excel_csv(tmp_path / "nfp.csv", cash_session_bars(FIRST_FRIDAYS), "#")
    with pytest.raises(DataError) as refused:
        check_file(path, "NQ", settings, advice="caption")
    assert str(refused.value).endswith(
        "send the file again with `--date-order month-first` (US) or `--date-order day-first` "
        "in the caption."
    )


def test_dotted_dates_keep_their_own_order_and_kibot_asks(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = cash_session_bars(FIRST_FRIDAYS)
    # 06.01.2023 is 6 January: dotted dates are day first (022412d read them month first).
    dotted = split_csv(tmp_path / "eu.csv", bars, "%d.%m.%Y", sep=";")
    import_file(dotted, "NQ", settings)
    assert_stored(settings, read_split(dotted, "%d.%m.%Y", sep=";"))
    import_file(dotted, "NQ", settings, mode="replace", date_order="day-first")
    assert_stored(settings, read_split(dotted, "%d.%m.%Y", sep=";"))
    # Kibot writes MM/DD/YYYY: 022412d stored 6 January on 1 June. But a headerless file is
    # Kibot's only by its shape (r47d: a day-first one was stored months off), so it asks.
    kibot = bf.kibot_txt(tmp_path / "kibot.txt", bars)
    refused_unchanged(settings, kibot, r"pass --date-order month-first \(US\) or")
    import_file(kibot, "NQ", settings, mode="replace", date_order="month-first")
    names = ["date", "time", *PRICES]
    frame = pd.read_csv(kibot, header=None, names=names, dtype={"date": str})
    stamp = pd.to_datetime(frame["date"] + " " + frame["time"], format="%m/%d/%Y %H:%M")
    assert_stored(settings, frame.assign(timestamp=stamp))


def ib_abbreviated_csv(path: Path, bars: pd.DataFrame, zone: str, label: str) -> Path:
    """A TWS export whose times are ``zone``'s wall clock, named by ``label`` ("EST")."""
    ib_csv(path, bars, None, "%Y%m%d %H:%M:%S")
    frame = pd.read_csv(path, dtype={"date": str})
    frame["date"] = bf.in_zone(bars, zone).dt.strftime("%Y%m%d %H:%M:%S") + f" {label}"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("label", "zone", "cash_only"),
    [("EST", NY, True), ("EST", NY, False), ("CST", "America/Chicago", False)],
)
def test_ib_zone_abbreviations_are_read_only_in_the_zone_named(
    label: str,
    zone: str,
    cash_only: bool,
    tmp_path: Path,
    settings: EngineSettings,
    stored: None,
) -> None:
    # July: New York on summer time. 022412d read "EST" as IANA's UTC-5 and stored the
    # cash session at 10:30-16:59 as "the zone the file names"; "CST" was unknown, even
    # with --timezone America/Chicago.
    bars = bf.week_of_bars(dt.date(2024, 7, 7))
    if cash_only:
        minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
        bars = bars[(minute >= 570) & (minute < 960)].reset_index(drop=True)
    path = ib_abbreviated_csv(tmp_path / "NQ_ib.csv", bars, zone, label)
    refused_unchanged(
        settings,
        path,
        rf"the file's times name their zone only as '{label}', an abbreviation .*; pass "
        rf"--timezone naming the zone to read them in, such as --timezone {zone}\.$",
    )
    result = import_file(path, "NQ", settings, mode="replace", timezone=zone)
    frame = pd.read_csv(path, dtype={"date": str})
    naive = pd.to_datetime(frame["date"].str[:17], format="%Y%m%d %H:%M:%S")
    wall = naive.dt.tz_localize(zone).dt.tz_convert(NY).dt.tz_localize(None)
    assert_stored(settings, frame.assign(timestamp=wall))
    assert f"name their zone only as '{label}': they are read as" in result.report.text()


@pytest.mark.parametrize(
    ("zone", "first_sunday"),
    [
        (NY, dt.date(2024, 3, 3)),
        (NY, dt.date(2024, 10, 27)),
        ("America/Chicago", dt.date(2024, 3, 3)),
    ],
)
def test_ib_abbreviations_changing_with_the_clock_are_one_zone(
    zone: str, first_sunday: dt.date, tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    """Older TWS names the abbreviation in force at each bar: two weeks across 10 March
    read "EST", then "EDT", and were refused as "not in the same zone; export the file
    again with every time in one zone", which TWS cannot do, and with --timezone
    America/New_York too. They are one clock: asked for --timezone as "EST" alone is, and
    read in it exactly."""
    later = bf.week_of_bars(first_sunday + dt.timedelta(days=7), seed=8)
    bars = pd.concat([bf.week_of_bars(first_sunday), later], ignore_index=True)
    wall = bf.in_zone(bars, zone)
    labels = bars["timestamp"].dt.tz_convert(zone).dt.strftime("%Z")
    assert labels.nunique() == 2  # the file spans the clock change
    path = ib_abbreviated_csv(tmp_path / "NQ_ib.csv", bars, zone, "X")
    frame = pd.read_csv(path, dtype={"date": str})
    frame["date"] = wall.dt.strftime("%Y%m%d %H:%M:%S") + " " + labels
    frame.to_csv(path, index=False)
    pair = "/".join(labels.unique())
    refused_unchanged(
        settings,
        path,
        rf"the file's times name their zone only as '{pair}', an abbreviation .*; pass "
        rf"--timezone naming the zone to read them in, such as --timezone {zone}\.$",
    )
    import_file(path, "NQ", settings, mode="replace", timezone=zone)
    exact = bars["timestamp"].dt.tz_convert(NY).dt.tz_localize(None)
    assert_stored(settings, frame.assign(timestamp=exact))


def databento_naive(path: Path, bars: pd.DataFrame, zone: str, csv: bool = False) -> Path:
    """Databento bars whose ts_event was converted to ``zone`` and lost its zone."""
    local = bars["timestamp"].dt.tz_convert(zone).dt.tz_localize(None)
    columns = {
        "ts_event": pa.array(local.to_numpy(), pa.timestamp("ns")),
        "rtype": pa.array([33] * len(bars), pa.uint8()),
        **{c: pa.array(bars[c].to_numpy()) for c in PRICES},
        "symbol": pa.array(["NQM4"] * len(bars)),
    }
    if csv:
        frame = pa.table(columns).to_pandas()
        frame["ts_event"] = frame["ts_event"].dt.strftime("%Y-%m-%dT%H:%M:%S.000000000")
        frame.to_csv(path, index=False)
    else:
        pq.write_table(pa.table(columns), path)
    return path


@pytest.mark.parametrize(
    ("zone", "cash_only", "csv"),
    [
        (NY, True, False),  # 022412d: stored 5 hours early, "read as UTC"
        (NY, False, False),
        ("America/Chicago", False, False),
        (NY, False, True),
    ],
)
def test_databento_ts_event_without_a_zone_that_is_not_utc_asks_for_it(
    zone: str, cash_only: bool, csv: bool, tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    bars = bf.week_of_bars(dt.date(2024, 3, 10))
    if cash_only:
        bars = cash_session_bars([dt.date(2024, 3, 11) + dt.timedelta(days=k) for k in range(5)])
    name = "glbx-mdp3.ohlcv-1m." + ("csv" if csv else "parquet")
    path = databento_naive(tmp_path / name, bars, zone, csv)
    city = zone.rsplit("/", 1)[-1].replace("_", " ")
    refused_unchanged(
        settings,
        path,
        r"ts_event has no zone in the file, and its times appear not to be UTC: read as UTC, "
        rf"the bars do not fit NQ's session times, and read as {city} time \({zone}\) they do; "
        r"pass --timezone naming the zone they are in\.$",
    )
    import_file(path, "NQ", settings, mode="replace", timezone=zone)
    frame = pd.read_csv(path) if csv else pd.read_parquet(path)
    naive = pd.to_datetime(frame["ts_event"])
    wall = naive.dt.tz_localize(zone).dt.tz_convert(NY).dt.tz_localize(None)
    assert_stored(settings, frame.assign(timestamp=wall))


def test_databento_cash_session_in_utc_without_a_zone_is_read_as_utc(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = cash_session_bars([dt.date(2024, 3, 11) + dt.timedelta(days=k) for k in range(5)])
    path = databento_naive(tmp_path / "glbx.parquet", bars, "UTC")
    import_file(path, "NQ", settings)
    frame = pd.read_parquet(path)
    wall = frame["ts_event"].dt.tz_localize("UTC").dt.tz_convert(NY).dt.tz_localize(None)
    assert_stored(settings, frame.assign(timestamp=wall))


def twelve_hour_csv(path: Path, bars: pd.DataFrame) -> Path:
    """Excel's custom format "m/d/yyyy h:mm" without AM/PM: 13:30 written as 1:30."""
    wall = bf.in_zone(bars, NY)
    text = wall.map(lambda t: f"{t.month}/{t.day}/{t.year} {(t.hour - 1) % 12 + 1}:{t.minute:02d}")
    bf.plain_csv(path, bars)
    frame = pd.read_csv(path)
    frame.insert(0, "Date Time", text)
    frame.drop(columns="timestamp").to_csv(path, index=False)
    return path


@pytest.mark.parametrize("cash_only", [True, False])
@pytest.mark.parametrize("stamp", [None, "open"])
def test_twelve_hour_times_without_am_pm_are_refused_as_such(
    cash_only: bool, stamp: str | None, tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    # 11-15 March: a day over 12 settles the order. 022412d stored the cash session's
    # afternoon at 01:00-03:59 ("sorted, which is safe") with --stamp open, and refused the
    # 24-hour file as thousands of repeats "if two exports were pasted together".
    bars = bf.week_of_bars(dt.date(2024, 3, 10))
    if cash_only:
        bars = cash_session_bars([dt.date(2024, 3, 11) + dt.timedelta(days=k) for k in range(5)])
    path = twelve_hour_csv(tmp_path / "nq.csv", bars)
    before = stored_bytes(settings)
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings, mode="replace", stamp=stamp)
    message = str(refused.value)
    assert "the times have no AM or PM: no hour in the file is over 12, and 2024-03-1" in message
    assert "01:00:00 comes after 2024-03-1" in message
    assert "pasted" not in message
    assert stored_bytes(settings) == before


def test_a_repeat_made_by_a_clock_change_is_not_called_pasted(
    tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    # Tehran turned its clocks back at midnight on Tuesday 21 September 2021: the hour
    # 23:00-23:59 happened twice, with other bars each time.
    bars = bf.week_of_bars(dt.date(2021, 9, 19))
    path = bf.plain_csv(tmp_path / "tehran.csv", bars, zone="Asia/Tehran")
    refused_unchanged(
        settings,
        path,
        r"line \d+: 2021-09-21 23:00:00 does not exist or occurs twice in Asia/Tehran \(a clock "
        r"change\)",
        timezone="Asia/Tehran",
    )


def test_the_sort_is_called_safe_only_for_a_file_that_passes(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars(dt.date(2024, 3, 10))
    path = pasted(tmp_path / "two.csv", bars, "later_first")
    frame = pd.read_csv(path)
    frame.loc[5000, "high"] = frame.loc[5000, "low"] - 1  # a bad bar on line 5002
    frame.to_csv(path, index=False)
    checked = check_file(path, "NQ", settings)
    assert checked.frame is None
    text = checked.report.text()
    assert "line 5002: high" in text
    assert "which is safe" not in text


def test_ib_api_forms_and_ib_insync_files_are_read(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars(dt.date(2024, 3, 10))
    utc = bars["timestamp"].dt.tz_convert("UTC")
    expected = bars.assign(timestamp=bf.in_zone(bars, NY))
    # The API's UTC form "20240310-22:00:00", and Unix seconds (formatDate=2).
    for name, times in (
        ("dash", utc.dt.strftime("%Y%m%d-%H:%M:%S")),
        ("epoch", (utc.astype("int64") // 10**9).astype(str)),
    ):
        path = ib_csv(tmp_path / f"ib_{name}.csv", bars, None, "%Y%m%d %H:%M:%S")
        frame = pd.read_csv(path, dtype={"date": str}).assign(date=times)
        frame.to_csv(path, index=False)
        result = import_file(path, "NQ", settings, mode="replace")
        assert result.report.layout == "Interactive Brokers TWS export"
        assert_stored(settings, expected)
    # ib_insync's util.df(bars).to_csv(): the index, and ISO times with their offset.
    insync = pd.DataFrame(
        {"date": bars["timestamp"].dt.tz_convert("America/Chicago").astype(str)}
        | {c: bars[c] for c in PRICES}
    )
    insync["average"], insync["barCount"] = bars["close"], bars["volume"] // 3 + 1
    path = tmp_path / "NQ_ib_insync.csv"
    insync.to_csv(path)
    result = import_file(path, "NQ", settings, mode="replace")
    assert result.report.layout == "ib_insync (Interactive Brokers API) CSV"
    frame = pd.read_csv(path)
    wall = pd.to_datetime(frame["date"], utc=True).dt.tz_convert(NY).dt.tz_localize(None)
    assert_stored(settings, frame.assign(timestamp=wall))


# --- r47d: what 5653edb still stored wrong without a word -----------------------------------

JULY = [dt.date(2024, 7, 8), dt.date(2024, 7, 9), dt.date(2024, 7, 10)]


def read_naive(path: Path) -> pd.DataFrame:
    """A one-column file of naive New York times, read by pandas alone."""
    frame = pd.read_csv(path)
    return frame.assign(timestamp=pd.to_datetime(frame["timestamp"]))


@pytest.mark.parametrize(
    ("zone", "region", "fixed"),
    [("EST", NY, "Etc/GMT\\+5"), ("MST", "America/Denver", "Etc/GMT\\+7")],
)
def test_fixed_offset_zone_names_are_refused_for_the_region(
    zone: str, region: str, fixed: str, tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    # IANA's EST is UTC-5 all year: 5653edb's refusal of IB "EST" led to --timezone EST,
    # and a July cash session was stored at 10:30-16:59 "as declared".
    bars = cash_session_bars(JULY)
    plain = bf.plain_csv(tmp_path / "nq.csv", bars)
    ib = ib_abbreviated_csv(tmp_path / "NQ_ib.csv", bars, NY, "EST")
    for path in (plain, ib):
        refused_unchanged(
            settings,
            path,
            rf"--timezone {zone} is a fixed offset from UTC all year, not the clock of "
            rf"{region} with its summer time, .*; pass --timezone {region} \(or --timezone "
            rf"{fixed} for times truly kept on that offset all year, summer included\)\.$",
            timezone=zone,
        )
    # Pacific/Honolulu keeps no summer time: HST is its clock, and stays a zone.
    assert check_options(timezone="HST") == (None, None)


def test_a_declared_zone_is_not_said_to_show_the_break_the_file_lacks(
    tmp_path: Path, settings: EngineSettings
) -> None:
    # RTH bars 09:30-16:59 end at the break but never resume after it: the file does not
    # show where the break sits (r47d: "the daily break sits at 16:00–17:00 in the file").
    bars = bf.week_of_bars(dt.date(2024, 7, 7))
    minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    path = bf.plain_csv(tmp_path / "nq.csv", bars[(minute >= 570) & (minute < 1020)])
    result = import_file(path, "NQ", settings, timezone=NY, stamp="open")
    assert_stored(settings, read_naive(path))
    assert "daily break" not in result.report.text()
    assert "as declared, and no bar falls in the exchange's closed hours" in result.report.text()
    # A 24-hour file does show it.
    week = bf.plain_csv(tmp_path / "week.csv", bf.week_of_bars(dt.date(2024, 7, 7)))
    result = import_file(week, "NQ", settings, mode="replace", timezone=NY, stamp="open")
    assert "the daily break sits at 17:00–18:00 in the file" in result.report.text()


@pytest.mark.parametrize("label", ["EST", "EDT"])
def test_an_abbreviation_and_a_timezone_that_disagree_are_refused(
    label: str, tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    # "EST" is New York's clock; --timezone America/Chicago stored the July cash session an
    # hour late, with "the daily break sits at 16:00–17:00 in the file".
    path = ib_abbreviated_csv(tmp_path / "NQ_ib.csv", cash_session_bars(JULY), NY, label)
    refused_unchanged(
        settings,
        path,
        rf"the file's times name their zone as '{label}', which is New York time "
        r"\(America/New_York\), and --timezone America/Chicago keeps other offsets from UTC "
        r"on the file's dates; pass --timezone America/New_York\.$",
        timezone="America/Chicago",
    )
    # A name for the same clock is taken: exact.
    import_file(path, "NQ", settings, mode="replace", timezone="US/Eastern")
    frame = pd.read_csv(path, dtype={"date": str})
    naive = pd.to_datetime(frame["date"].str[:17], format="%Y%m%d %H:%M:%S")
    assert_stored(settings, frame.assign(timestamp=naive))


def test_a_headerless_file_of_days_up_to_12_asks_for_the_day_order(
    tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    # 4-6 March written day first, as a European tool's headerless export: 5653edb read it
    # month first by Kibot's convention and stored 3 April, 3 May and 3 June, without a note.
    days = [dt.date(2024, 3, 4), dt.date(2024, 3, 5), dt.date(2024, 3, 6)]
    path = tmp_path / "nq.txt"
    bf.kibot_txt(path, cash_session_bars(days))
    frame = pd.read_csv(path, header=None, names=["date", "time", *PRICES], dtype={"date": str})
    day, month = frame["date"].str[3:5], frame["date"].str[:2]
    frame["date"] = day + "/" + month + frame["date"].str[5:]
    frame.to_csv(path, header=False, index=False)
    refused_unchanged(
        settings,
        path,
        r"dates such as '04/03/2024' may be month first or day first, and nothing in the file "
        r"tells which \(no day in it is over 12\); pass --date-order month-first \(US\) or "
        r"--date-order day-first\.$",
    )
    import_file(path, "NQ", settings, mode="replace", date_order="day-first")
    stamp = pd.to_datetime(frame["date"] + " " + frame["time"], format="%d/%m/%Y %H:%M")
    assert_stored(settings, frame.assign(timestamp=stamp))
    assert sorted(stamp.dt.date.unique()) == days


@pytest.mark.parametrize("shape", ["newest_first", "no_12_hour"])
def test_twelve_hour_times_without_am_pm_are_refused_in_any_order(
    shape: str, tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    # 5653edb looked only at 12:59 -> 1:00 steps in file order: newest first (1:00 -> 12:59)
    # or without the 12:xx hour (11:59 -> 1:00), --stamp open stored 13:00-15:59 at
    # 01:00-03:59, "sorted by time, which is safe".
    bars = cash_session_bars([dt.date(2024, 3, 11) + dt.timedelta(days=k) for k in range(5)])
    if shape == "no_12_hour":
        bars = bars[bars["timestamp"].dt.hour != 12].reset_index(drop=True)
    path = twelve_hour_csv(tmp_path / "nq.csv", bars)
    if shape == "newest_first":
        pd.read_csv(path).iloc[::-1].to_csv(path, index=False)
    end = "12:59" if shape == "newest_first" else "11:59"
    refused_unchanged(
        settings,
        path,
        rf"the times have no AM or PM: no hour in the file is over 12, and on 2024-03-11 the "
        rf"bars run 01:00–03:59 and again 09:30–{end}, as an afternoon written without its PM "
        r"would; .*\(13:00\)\.$",
        stamp="open",
    )
    # The same bars on a 24-hour clock are read: the check does not refuse real mornings.
    plain = bf.plain_csv(tmp_path / "plain.csv", bars)
    import_file(plain, "NQ", settings, mode="replace", timezone=NY)
    assert_stored(settings, read_naive(plain))


def test_a_morning_file_that_fits_two_zones_asks_for_the_zone(
    tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    # 09:30-12:59 New York fits Los Angeles at both ends (12:30-16:00 on New York's clock):
    # read as LA time, it was stored 3 hours late.
    bars = cash_session_bars([dt.date(2024, 3, 4) + dt.timedelta(days=k) for k in range(5)])
    bars = bars[bars["timestamp"].dt.hour < 13].reset_index(drop=True)
    path = bf.plain_csv(tmp_path / "nq.csv", bars)
    refused_unchanged(
        settings,
        path,
        r"the file's days start or end on the session's times read in more than one zone "
        r"\(America/New_York 09:30–13:00, America/Los_Angeles 12:30–16:00 on the instrument's "
        r"clock\), .*such as --timezone America/New_York\.$",
    )
    import_file(path, "NQ", settings, mode="replace", timezone=NY)
    assert_stored(settings, read_naive(path))
    # 09:30-11:59 fits no other zone at both ends: read as New York, as before.
    morning = bars[bars["timestamp"].dt.hour < 12].reset_index(drop=True)
    path = bf.plain_csv(tmp_path / "early.csv", morning)
    import_file(path, "NQ", settings, mode="replace")
    assert_stored(settings, read_naive(path))


def test_float_unix_seconds_and_iso_times_naming_est_are_read(
    tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    bars = cash_session_bars(JULY)
    # Unix seconds as a float column writes them: "cannot read the timestamp '1720445400.0'".
    seconds = bars["timestamp"].astype("int64") // 10**9
    path = tmp_path / "unix.csv"
    bars.assign(timestamp=seconds.astype(float)).to_csv(path, index=False)
    assert pd.read_csv(path)["timestamp"].astype(str).str.endswith(".0").all()
    import_file(path, "NQ", settings, mode="replace")
    frame = pd.read_csv(path)
    wall = pd.to_datetime(frame["timestamp"], unit="s", utc=True).dt.tz_convert(NY)
    assert_stored(settings, frame.assign(timestamp=wall.dt.tz_localize(None)))
    # ISO times followed by "EST": refused as IB's abbreviation is, with the way in.
    path = tmp_path / "est.csv"
    text = bf.in_zone(bars, NY).dt.strftime("%Y-%m-%d %H:%M:%S") + " EST"
    bars.assign(timestamp=text).to_csv(path, index=False)
    refused_unchanged(
        settings, path, r"name their zone only as 'EST', .* such as --timezone America/New_York\.$"
    )
    import_file(path, "NQ", settings, mode="replace", timezone=NY)
    frame = pd.read_csv(path)
    assert_stored(settings, frame.assign(timestamp=pd.to_datetime(frame["timestamp"].str[:19])))


def test_the_report_says_how_zoned_times_were_read_in_whole_sentences(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A TradingView file's report read "Times carry their own zone (converted from UTC)."
    then "times are Unix seconds (UTC).", lower case, and an IB file's "converted from UTC"
    beside "read in the zone the file names, US/Eastern"."""
    bars = bf.week_of_bars()
    tv = check_file(bf.tradingview_csv(tmp_path / "tv.csv", bars), "NQ", settings)
    lines = tv.report.text().splitlines()
    assert (
        "Times carry their own zone (an offset, a zone's name, or UTC) and are converted "
        "from it exactly." in lines
    )
    assert "Times are Unix seconds (UTC)." in lines
    ru = check_file(tmp_path / "tv.csv", "NQ", settings, lang="ru").report.text().splitlines()
    assert "Время — Unix в секундах (UTC)." in ru
    assert not any("converted from UTC" in line for line in lines)


# --- a zone named in the header ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "zone"),
    [
        ("Time (UTC)", "UTC"),
        ("timestamp UTC", "UTC"),
        ("datetime_utc", "UTC"),
        ("Gmt time", "UTC"),  # Dukascopy's
        ("Time (America/Chicago)", "America/Chicago"),
        ("Time [CT]", "America/Chicago"),
        ("Time (ET)", "America/New_York"),
        ("Time (EST)", "America/New_York"),
        ("Date Time (EDT)", "America/New_York"),
        ("Time (CST)", "America/Chicago"),
        ("Time [CDT]", "America/Chicago"),
        ("Time (MST)", "America/Denver"),
        ("Time (PDT)", "America/Los_Angeles"),
    ],
)
def test_a_zone_named_in_the_header_reads_the_times_in_it(
    header: str, zone: str, tmp_path: Path, settings: EngineSettings
) -> None:
    """A time column named with its zone ("Time (UTC)", "Gmt time") was "unrecognised
    columns". Its times are read in that zone, as if declared, and the report says so."""
    bars = bf.week_of_bars()
    wall = bf.in_zone(bars, zone).dt.strftime("%Y-%m-%d %H:%M:%S")
    path = tmp_path / "zoned.csv"
    bars.assign(timestamp=wall).rename(columns={"timestamp": header}).to_csv(path, index=False)
    result = import_file(path, "NQ", settings)
    written = pd.read_csv(path)
    expected = (
        pd.to_datetime(written[header]).dt.tz_localize(zone).dt.tz_convert(bf.NY)
    ).dt.tz_localize(None)
    frame, _ = read_bars(data_path("NQ", settings))
    assert frame["timestamp"].tolist() == expected.tolist()
    assert frame["close"].tolist() == written["close"].tolist()
    assert result.report.timezone == zone
    assert f"The file's header names the times' zone, {zone}" in result.report.text()


def test_a_header_zone_the_times_contradict_is_refused_and_timezone_overrides_it(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = bf.week_of_bars()
    wall = bf.in_zone(bars, bf.NY).dt.strftime("%Y-%m-%d %H:%M:%S")
    path = tmp_path / "wrong.csv"
    bars.assign(timestamp=wall).rename(columns={"timestamp": "Time (UTC)"}).to_csv(
        path, index=False
    )
    with pytest.raises(DataError, match="pass --timezone America/New_York"):
        import_file(path, "NQ", settings)
    assert not data_path("NQ", settings).exists()
    result = import_file(path, "NQ", settings, timezone=bf.NY)
    frame, _ = read_bars(data_path("NQ", settings))
    assert frame["timestamp"].tolist() == pd.to_datetime(wall).tolist()
    assert "names the times' zone as UTC; they are read in America/New_York" in (
        result.report.text()
    )


@pytest.mark.parametrize(
    ("label", "region", "fixed", "first_sundays"),
    [
        # March 2024's summer time: EST's UTC-5 is Chicago's clock then, not in winter.
        ("EST", NY, "Etc/GMT+5", [dt.date(2024, 3, 17)]),
        # Across the clock change of 10 March: no zone with summer time fits.
        ("EST", NY, "Etc/GMT+5", [dt.date(2024, 3, 3), dt.date(2024, 3, 17)]),
        ("CST", "America/Chicago", "Etc/GMT+6", [dt.date(2024, 3, 17)]),
        # January: EDT's UTC-4 is an hour ahead of New York's winter clock.
        ("EDT", NY, "Etc/GMT+4", [dt.date(2024, 1, 14)]),
        ("CDT", "America/Chicago", "Etc/GMT+5", [dt.date(2024, 1, 14)]),
        # Arizona's clock, MST all year, under a Denver reading in summer.
        ("MST", "America/Denver", "Etc/GMT+7", [dt.date(2024, 3, 17)]),
        ("PST", "America/Los_Angeles", "Etc/GMT+8", [dt.date(2024, 3, 17)]),
    ],
)
def test_a_header_abbreviation_the_stamps_clock_contradicts_is_refused(
    label: str,
    region: str,
    fixed: str,
    first_sundays: list[dt.date],
    tmp_path: Path,
    settings: EngineSettings,
) -> None:
    """ "Time (EST)" over times kept on a fixed UTC-5 all year (EST proper): in March 2024's
    summer time they are an hour behind New York's clock, so read as America/New_York the
    bars fall in the exchange's daily break. Refused, nothing stored, naming the fixed zone:
    the refusal advised America/Chicago, which is UTC-5 only in summer (a file reaching into
    winter then stored its winter bars an hour off), and for "Time (EDT)" in January listed
    the bars in the break with no advice at all. --timezone as advised reads them right."""
    bars = pd.concat(
        [bf.week_of_bars(day, seed=i) for i, day in enumerate(first_sundays)], ignore_index=True
    )
    wall = bf.in_zone(bars, fixed).dt.strftime("%Y-%m-%d %H:%M:%S")
    path = tmp_path / "fixed.csv"
    bars.assign(timestamp=wall).rename(columns={"timestamp": f"Time ({label})"}).to_csv(
        path, index=False
    )
    for lang, said in (("en", f"pass --timezone {fixed}."), ("ru", f"укажите --timezone {fixed}.")):
        with pytest.raises(DataError) as refused:
            check_file(path, "NQ", settings, lang=lang)
        assert str(refused.value).endswith(said), str(refused.value)
        assert f"as {label}" in str(refused.value) or f"назван {label}" in str(refused.value)
        assert "America/Chicago;" not in str(refused.value)
    with pytest.raises(DataError, match=f"caption `--timezone {re.escape(fixed)}`"):
        check_file(path, "NQ", settings, advice="caption")
    with pytest.raises(DataError):
        import_file(path, "NQ", settings)
    assert not data_path("NQ", settings).exists()
    import_file(path, "NQ", settings, timezone=fixed)
    frame, _ = read_bars(data_path("NQ", settings))
    assert frame["timestamp"].tolist() == bars["timestamp"].dt.tz_localize(None).tolist()


def test_times_on_one_offset_all_year_are_sent_to_it(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A headerless file on UTC-5 all year across the clock change of 10 March fits no zone
    with summer time: it was sent to "an IANA name such as Asia/Dubai". The one offset that
    leaves the daily break empty is named, and reads the bars right."""
    bars = pd.concat(
        [bf.week_of_bars(dt.date(2024, 3, 3), seed=1), bf.week_of_bars(dt.date(2024, 3, 17))],
        ignore_index=True,
    )
    path = bf.plain_csv(tmp_path / "nq.csv", bars, "Etc/GMT+5")
    with pytest.raises(DataError, match=r"one offset from UTC kept all year, UTC−5: pass "):
        import_file(path, "NQ", settings)
    assert not data_path("NQ", settings).exists()
    import_file(path, "NQ", settings, timezone="Etc/GMT+5")
    frame, _ = read_bars(data_path("NQ", settings))
    assert frame["timestamp"].tolist() == bars["timestamp"].dt.tz_localize(None).tolist()


def test_two_zones_in_the_header_are_refused(tmp_path: Path, settings: EngineSettings) -> None:
    path = tmp_path / "two.csv"
    path.write_text(
        "Date (UTC),Time (America/Chicago),Open,High,Low,Close,Volume\n"
        "2024-03-18,09:30,100,101,99,100,5\n"
    )
    with pytest.raises(DataError, match="names two zones beside the date and the time"):
        import_file(path, "NQ", settings)


# --- MetaTrader servers on New York time + 7 hours ------------------------------------------

#: Weeks (their first Sunday) around the clock changes of 2024: the US moved on 10 March
#: and 3 November, the EU on 31 March and 27 October. In the weeks of 17 and 24 March and
#: of 27 October, New York + 7 hours is not Athens time.
MT_WEEKS = [dt.date(2024, 3, d) for d in (3, 17, 24)] + [
    dt.date(2024, 4, 7),
    dt.date(2024, 10, 27),
    dt.date(2024, 11, 10),
]


def metatrader_csv(path: Path, bars: pd.DataFrame, hours: int = 7) -> Path:
    """A MetaTrader 4 history export ("2024.03.17,18:00,o,h,l,c,ticks") on a broker's
    server clock: New York's wall clock moved by ``hours``, its clock changes included."""
    wall = bf.in_zone(bars, NY) + pd.Timedelta(hours=hours)
    lines = [
        f"{t:%Y.%m.%d},{t:%H:%M},{o},{h},{lo},{c},{v}"
        for t, o, h, lo, c, v in zip(
            wall,
            bars["open"],
            bars["high"],
            bars["low"],
            bars["close"],
            bars["volume"],
            strict=True,
        )
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_metatrader_clock_of_new_york_plus_7_is_named_and_read(
    tmp_path: Path, settings: EngineSettings, stored: None
) -> None:
    """A broker's MetaTrader file on New York + 7 hours (the FX week opens at 00:00 Monday)
    fitted no IANA zone: it was refused as fitting none, and `--timezone Europe/Athens` was
    sent to Moscow time in March and filled the daily break in the weeks the US and EU
    clocks disagree. Both refusals now name `--timezone America/New_York+7` (as the
    caption too), nothing stored changes, and so read the stored bars are the bars that
    went in, across both March weeks and the one of 27 October."""
    bars = pd.concat(
        [bf.week_of_bars(week, seed=i) for i, week in enumerate(MT_WEEKS)], ignore_index=True
    )
    path = metatrader_csv(tmp_path / "NQ1.csv", bars)
    named = r"New York time \+7 hours \(America/New_York\+7\) all through, clock changes included"
    refused_unchanged(settings, path, rf"{named} .*: pass --timezone America/New_York\+7\.$")
    refused_unchanged(
        settings,
        path,
        r"^.*: the file's times are not Athens time \(Europe/Athens\): so read, \d+ bars fall "
        rf"where the exchange is shut, .*{named} .*: pass --timezone America/New_York\+7\.$",
        timezone="Europe/Athens",
    )
    with pytest.raises(DataError, match=r"с подписью `--timezone America/New_York\+7`\.$") as ru:
        check_file(path, "NQ", settings, lang="ru", advice="caption", timezone="EET")
    # The count of bars and its words agree, by the CLDR rule (Babel's, not the catalog's).
    found = re.search(r"прочитанные, (\d+) (бар|бара|баров) (попадает|попадают) ", str(ru.value))
    assert found is not None, ru.value
    count, noun, verb = int(found[1]), found[2], found[3]
    form = Locale("ru").plural_form(count)
    assert noun == {"one": "бар", "few": "бара", "many": "баров"}[form]
    assert verb == ("попадает" if form == "one" else "попадают")
    result = import_file(path, "NQ", settings, mode="replace", timezone="America/New_York+7")
    assert "New York time +7 hours (America/New_York+7), as declared" in result.report.text()
    # MetaTrader 4's last column counts ticks: stored as volume 0.
    expected = bars.assign(timestamp=bars["timestamp"].dt.tz_localize(None), volume=0)
    assert_stored(settings, expected)


def test_new_york_plus_hours_without_a_clock_change_is_named_as_a_possibility(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A January week on New York + 7 hours spans no clock change: Europe/Athens, EET or a
    fixed UTC+2 read it alike. The refusal names the MetaTrader clock only as what fits on
    its dates, and the zone's own name as the other way."""
    bars = bf.week_of_bars(dt.date(2024, 1, 14))
    path = metatrader_csv(tmp_path / "NQ1.csv", bars)
    with pytest.raises(
        DataError,
        match=r"on its dates they are New York time \+7 hours \(America/New_York\+7\)\. If the "
        r"file's clock changes on the same dates as New York time \(America/New_York\) .*, pass "
        r"--timezone America/New_York\+7; otherwise pass the IANA name of its zone",
    ):
        import_file(path, "NQ", settings)
    assert not data_path("NQ", settings).exists()


@pytest.mark.parametrize(
    ("zone", "accepted"),
    [
        ("America/New_York+7", True),
        ("America/New_York-2", True),
        ("Etc/GMT+5", True),
        ("America/New_York+24", False),
        ("Europe/Nowhere+7", False),
        ("America+7", False),
    ],
)
def test_a_zone_moved_by_whole_hours_is_an_option(zone: str, accepted: bool) -> None:
    if accepted:
        check_options(timezone=zone)
    else:
        with pytest.raises(DataError, match="unknown timezone"):
            check_options(timezone=zone)


@pytest.mark.parametrize(
    ("count", "ru", "en"),
    [
        (1, "1 бар попадает", "1 bar falls"),
        (3, "3 бара попадают", "3 bars fall"),
        (5, "5 баров попадают", "5 bars fall"),
        (21, "21 бар попадает", "21 bars fall"),
        (1012, "1 012 баров попадают", "1,012 bars fall"),
    ],
)
def test_the_shifted_clock_refusal_says_its_count_of_bars_in_agreement(
    count: int, ru: str, en: str
) -> None:
    """«1 баров попадают на часы, когда биржа закрыта»: the count was a bare number in one
    fixed form."""
    for lang, expected in (("ru", ru), ("en", en)):
        for advice in ("command", "caption"):
            words = ImportWords(lang, advice)
            said = words(
                "import.refuse.zone_shifted",
                plural_of=count,
                bars=words.count(count),
                declared="EET",
                city="New York",
                zone="New York +7",
                clock="",
                name="America/New_York+7",
            )
            assert expected in said.replace("\u202f", " ").replace("\xa0", " ")

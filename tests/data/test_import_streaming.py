"""A CSV is read batch by batch into the arrays it is checked in, never held whole as text.

A 350 MB file of 6.4 million one-minute bars took 1.8 GB to import: Arrow's table of the
file's text (its times as strings) sat beside the arrays made from it, and the cents check
joined and sorted the four price columns at once. Read batch by batch, the bars are the
same as a whole read and as pandas reads the file, every refusal is the one it was, and the
memory the reading takes is a little more than the arrays it must hold.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from barb.data import formats
from barb.data.importer import check_file
from barb.errors import DataError
from barb.settings import EngineSettings
from bench.layout_files import european_csv, finam_csv, russian_csv

ROOT = Path(__file__).resolve().parents[2]


def _bars(rows: int, seed: int = 3) -> pd.DataFrame:
    """``rows`` one-minute bars from 2024-03-04 on (their times need not keep the exchange's
    hours: only the reading is checked), prices on NQ's tick, some volumes missing."""
    rng = np.random.default_rng(seed)
    close = 18000 + np.cumsum(rng.integers(-8, 9, rows)) * 0.25
    return pd.DataFrame(
        {
            "timestamp": pd.date_range("2024-03-04 09:30", periods=rows, freq="min"),
            "open": close + 0.25,
            "high": close + 1.0,
            "low": close - 1.0,
            "close": close,
            "volume": rng.integers(1, 500, rows).astype(float),
        }
    )


def _read(path: Path) -> formats.RawBars:
    return formats.read_csv(path, formats.read_csv_shape(path))


# Over 1 MB of text, so that Arrow reads it in several batches.
ROWS = 40_000


@pytest.mark.parametrize(
    "form",
    ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "unix", "unix float"],
)
def test_times_read_batch_by_batch_are_the_files(tmp_path: Path, form: str) -> None:
    bars = _bars(ROWS)
    bars.loc[ROWS - 5, "volume"] = np.nan  # an empty field stays NaN (refused, by its line)
    out = bars.copy()
    seconds = bars["timestamp"].astype("int64") // 10**9  # read as Unix time: UTC
    if form == "unix":
        out["timestamp"] = seconds
    elif form == "unix float":  # pandas writes a column that once held a NaN so
        out["timestamp"] = seconds.astype(float)
    else:
        out["timestamp"] = bars["timestamp"].dt.strftime(form)
    path = tmp_path / "bars.csv"
    out.to_csv(path, index=False)
    assert path.stat().st_size > 3 << 19  # Arrow reads 1 MB a batch

    raw = _read(path)

    theirs = pd.read_csv(path)
    if form.startswith("unix"):
        expected = theirs["timestamp"].astype("int64").to_numpy() * 10**9
        assert raw.utc
    else:
        expected = pd.to_datetime(theirs["timestamp"], format="ISO8601").to_numpy().view("i8")
        assert not raw.utc
    np.testing.assert_array_equal(raw.instants, expected)
    for name in ("open", "high", "low", "close", "volume"):
        np.testing.assert_array_equal(getattr(raw, name), theirs[name].to_numpy(), err_msg=name)
    assert np.isnan(raw.volume[ROWS - 5])


def test_times_that_change_form_midway_are_refused_as_before(tmp_path: Path) -> None:
    """Naive times, then times with an offset: the batches read first were converted, so
    the file is read whole and refused naming the first time that differs."""
    bars = _bars(ROWS)
    text = bars["timestamp"].dt.strftime("%Y-%m-%d %H:%M:%S").copy()
    text.iloc[ROWS - 10 :] = text.iloc[ROWS - 10 :] + "-04:00"
    out = bars.assign(timestamp=text)
    path = tmp_path / "pasted.csv"
    out.to_csv(path, index=False)

    with pytest.raises(formats.BadRow) as caught:
        _read(path)

    assert caught.value.row == ROWS - 10
    assert "offset" in str(caught.value.said)


def test_an_unreadable_time_late_in_the_file_is_named_by_its_line(
    tmp_path: Path, settings: EngineSettings
) -> None:
    bars = _bars(ROWS)
    text = bars["timestamp"].dt.strftime("%Y-%m-%d %H:%M:%S").copy()
    text.iloc[ROWS - 3] = "2024-13-40 09:30:00"
    path = tmp_path / "typo.csv"
    bars.assign(timestamp=text).to_csv(path, index=False)

    with pytest.raises(DataError) as caught:
        check_file(path, "NQ", settings)

    assert caught.value.line == ROWS - 3 + 2  # after the header, 1-based
    assert "2024-13-40" in str(caught.value)


def test_excel_s_empty_rows_after_the_bars_are_left_out(tmp_path: Path) -> None:
    bars = _bars(ROWS)
    path = tmp_path / "excel.csv"
    bars.assign(timestamp=bars["timestamp"].dt.strftime("%Y-%m-%d %H:%M:%S")).to_csv(
        path, index=False
    )
    with path.open("a") as fh:
        fh.write(",,,,,\n" * 4)

    raw = _read(path)

    assert len(raw) == ROWS
    assert ("import.note.empty_rows", {"count": 4}) in raw.notes


# Read in a process of its own, whose peak resident memory is the reading's.
MEASURE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import barb
    from barb.data import formats
    from barb.data.validation import hundredfold_prices

    def peak():
        with open("/proc/self/status") as fh:
            return next(int(x.split()[1]) * 1024 for x in fh if x.startswith("VmHWM"))

    path = Path(sys.argv[1])
    shape = formats.read_csv_shape(path)
    before = peak()
    raw = formats.read_csv(path, shape)
    hundredfold_prices(raw, 0.25)
    print(peak() - before, len(raw))
    """
)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's VmHWM")
def test_reading_takes_little_more_than_the_bars_arrays(tmp_path: Path) -> None:
    """The bars' six arrays (times and OHLCV, 48 bytes a bar) must be held; reading the
    file took 5.6 times that (its text beside them), now about 2 (measured: 2.2 on 800,000
    bars, 1.2 on 6.4 million)."""
    bars = _bars(800_000)
    path = tmp_path / "big.csv"
    bars.to_csv(path, index=False)  # 43 MB

    out = _measured(MEASURE, str(path))
    grown, rows = map(int, out.split())

    assert rows == 800_000
    assert grown < 3.5 * rows * 48, f"{grown / (rows * 48):.1f} times the arrays"


# An import in a process of its own, with the growth of its resident memory over each of
# the three steps that held most of it (Linux's VmHWM, reset before each by clear_refs).
# Their chunks and the Parquet file's row groups are made far smaller than the file, as
# they are on a file of millions of bars.
MEASURE_STEPS = textwrap.dedent(
    """
    import functools, json, sys
    from pathlib import Path
    import barb.data.clock as clock
    import barb.data.importer as importer
    import barb.data.store as store
    import barb.data.validation as validation
    from barb.settings import EngineSettings

    def status(key):
        with open("/proc/self/status") as fh:
            return next(int(x.split()[1]) * 1024 for x in fh if x.startswith(key))

    for module in (clock, validation):
        module.CHUNK = 1 << 14
    store.BASE_WRITE_OPTIONS["row_group_size"] = 1 << 14
    grown = {}

    def measured(name):
        real = getattr(importer, name)

        @functools.wraps(real)
        def wrapper(*args, **kwargs):
            before = status("VmRSS")
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            try:
                return real(*args, **kwargs)
            finally:
                grown[name] = status("VmHWM") - before

        setattr(importer, name, wrapper)

    for name in ("read_clock", "jump_checks", "write_bars"):
        measured(name)
    settings = EngineSettings(data_dir=Path(sys.argv[2]))
    result = importer.import_file(Path(sys.argv[1]), "NQ", settings)
    print(json.dumps({"rows": result.added, **grown}))
    """
)


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux's VmHWM")
def test_an_imports_clock_jump_checks_and_write_hold_little_beside_the_bars(
    tmp_path: Path, sample_settings: EngineSettings
) -> None:
    """A 350 MB file of 6.4 million bars peaked at 1,109 MiB: the search for its zone and
    stamp held 390 MB more than the bars (11 zones x 2 stamps over every bar at once), the
    jump check 365 MB (a groupby and a dozen float arrays) and the write 500 MB (a copy of
    every column before Arrow's). The bars' stored frame is 58 bytes a bar; measured on the
    last 200,000 NQ bars, the three took 50-58, 58-70 and 67 bytes a bar more, now about
    10, 8-20 and 23."""
    from barb.data.store import data_path, read_bars

    frame, _ = read_bars(data_path("NQ", sample_settings))
    path = tmp_path / "nq.csv"
    frame.iloc[-200_000:][["timestamp", "open", "high", "low", "close", "volume"]].to_csv(
        path, index=False
    )
    del frame

    out = _measured(MEASURE_STEPS, str(path), str(tmp_path / "data"))
    grown = json.loads(out)

    rows = grown.pop("rows")
    assert rows == 200_000
    per_bar = {name: round(size / rows, 1) for name, size in grown.items()}
    assert per_bar["read_clock"] < 24, per_bar
    assert per_bar["jump_checks"] < 32, per_bar
    assert per_bar["write_bars"] < 45, per_bar


# Decimal commas and dates apart from times, as European spreadsheets and Kibot write them:
# their text was held whole while read (5-6 bytes of memory a byte of CSV, against 2 for a
# plain file), and is now converted batch by batch too.
def _split_csv(bars: pd.DataFrame, path: Path) -> Path:
    out = bars.drop(columns="timestamp")
    out.insert(0, "Time", bars["timestamp"].dt.strftime("%H:%M"))
    out.insert(0, "Date", bars["timestamp"].dt.strftime("%m/%d/%Y"))
    out.to_csv(path, index=False)
    return path


# Times with an offset, IB's and NinjaTrader's were held as text until the whole file was
# read (5.5 bytes a byte of CSV); they are read batch by batch by the whole read's parser.
# The zoned ones are written as New York's wall clock of the bars read as UTC (the month
# crosses 10 March, New York's clock change), so that their instants are the bars' times.
def _new_york(bars: pd.DataFrame) -> pd.Series:
    return bars["timestamp"].dt.tz_localize("UTC").dt.tz_convert("America/New_York")


def _offset_csv(bars: pd.DataFrame, path: Path) -> Path:
    text = _new_york(bars).dt.strftime("%Y-%m-%dT%H:%M:%S%z")
    bars.assign(timestamp=text.str.replace(r"(\d\d)(\d\d)$", r"\1:\2", regex=True)).to_csv(
        path, index=False
    )
    return path


def _ib_csv(bars: pd.DataFrame, path: Path, zone: bool) -> Path:
    """TWS's export: ``20240304 09:30:00 US/Eastern``, or ``20240304  09:30:00``."""
    times = _new_york(bars) if zone else bars["timestamp"]
    text = (
        times.dt.strftime("%Y%m%d %H:%M:%S") + " US/Eastern"
        if zone
        else times.dt.strftime("%Y%m%d  %H:%M:%S")
    )
    out = bars.drop(columns="timestamp")
    out.insert(0, "date", text)
    out.assign(average=bars["close"], barCount=7).to_csv(path, index=False)
    return path


def _ninjatrader_txt(bars: pd.DataFrame, path: Path) -> Path:
    out = bars.drop(columns="timestamp")
    out.insert(0, "time", bars["timestamp"].dt.strftime("%Y%m%d %H%M%S"))
    out.to_csv(path, sep=";", header=False, index=False)
    return path


TEXT_LAYOUTS = {
    "Date,Time": _split_csv,
    "decimal commas, one time column": lambda b, p: european_csv(b, p, split=False),
    "decimal commas, Date;Time": lambda b, p: european_csv(b, p, split=True),
    "ISO with an offset": _offset_csv,
    "IB, zone named": lambda b, p: _ib_csv(b, p, zone=True),
    "IB, no zone": lambda b, p: _ib_csv(b, p, zone=False),
    "NinjaTrader": _ninjatrader_txt,
}


#: The layouts whose times are read into numbers batch by batch by the whole read's own
#: parser (``formats.parse_time_column``), which were held as text.
PARSED_LAYOUTS = ("ISO with an offset", "IB, zone named", "IB, no zone", "NinjaTrader")


def _separator(layout: str) -> str:
    return ";" if layout.startswith(("decimal", "NinjaTrader")) else ","


def _read_whole(path: Path, monkeypatch: pytest.MonkeyPatch) -> formats.RawBars:
    """As the file was read before it was read batch by batch: whole, as text."""
    with monkeypatch.context() as patched:
        patched.setattr(formats._Gathered, "add", lambda self, batch: False)
        return _read(path)


@pytest.mark.parametrize("layout", TEXT_LAYOUTS)
def test_text_layouts_read_batch_by_batch_are_the_files(
    tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bars = _bars(ROWS)
    # An empty field stays NaN (refused, by its line): in a decimal-comma file too, where it
    # was refused as "volume: Failed to parse string: '' as a scalar of type double".
    bars.loc[ROWS - 5, "volume"] = np.nan
    path = TEXT_LAYOUTS[layout](bars, tmp_path / "bars.csv")
    assert path.stat().st_size > 3 << 19  # Arrow reads 1 MB a batch
    monkeypatch.setattr(formats, "SPLIT_ROWS", 5_000)  # times parsed in parts, as in a big file

    raw = _read(path)

    np.testing.assert_array_equal(raw.instants, bars["timestamp"].to_numpy().view("i8"))
    for name in ("open", "high", "low", "close", "volume"):
        np.testing.assert_array_equal(getattr(raw, name), bars[name].to_numpy(), err_msg=name)
    whole = _read_whole(path, monkeypatch)
    np.testing.assert_array_equal(raw.instants, whole.instants)
    assert raw.notes == whole.notes
    assert (raw.utc, raw.claimed_zone, raw.layout) == (whole.utc, whole.claimed_zone, whole.layout)


@pytest.mark.parametrize("layout", PARSED_LAYOUTS)
def test_parsed_times_are_not_held_as_text(
    tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Times with an offset, IB's and NinjaTrader's were gathered as text, every batch's
    kept until the file was read (5.5 bytes of memory a byte of CSV against 2.75): each
    batch's are numbers now, before the next is read."""
    path = TEXT_LAYOUTS[layout](_bars(ROWS), tmp_path / "bars.csv")
    held: list[type] = []
    table = formats._Gathered.table

    def spy(self: formats._Gathered, schema: pa.Schema) -> object:
        held.extend(type(piece) for piece in self.pieces[self.time_key])
        return table(self, schema)

    monkeypatch.setattr(formats._Gathered, "table", spy)
    _read(path)
    assert len(held) > 2 and set(held) == {np.ndarray}, held


@pytest.mark.parametrize(
    ("layout", "column", "cell"),
    [
        ("decimal commas, Date;Time", "high", "18000,2x"),
        ("decimal commas, Date;Time", "volume", "1.260"),  # Excel's thousands
        ("decimal commas, Date;Time", "blank", ""),  # a row of empty fields amid the bars
        ("decimal commas, one time column", "timestamp", "32.02.2024 09:30"),
        ("decimal commas, one time column", "timestamp", "2024-03-05 09:30"),
        ("decimal commas, one time column", "blank", ""),
        ("Date,Time", "timestamp", "02/32/2024"),
        ("Date,Time", "blank", ""),
        ("ISO with an offset", "timestamp", "2024-03-05 09:30"),  # no offset, amid offsets
        ("ISO with an offset", "timestamp", "2024-03-05T09:3x:00-05:00"),
        ("ISO with an offset", "blank", ""),
        ("IB, zone named", "timestamp", "20240305 09:30:00 Europe/Berlin"),
        ("IB, zone named", "timestamp", "20240230 09:30:00 US/Eastern"),
        ("IB, no zone", "high", "18000.2x"),
        ("IB, no zone", "timestamp", "20240305"),
    ],
)
def test_a_bad_cell_late_in_a_text_layout_is_named_by_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, column: str, cell: str
) -> None:
    """In the file's third batch: the refusal names its line and says what the whole read
    said, as it did before the file was read batch by batch."""
    path = TEXT_LAYOUTS[layout](_bars(ROWS), tmp_path / "bars.csv")
    lines = path.read_text().splitlines()
    separator = _separator(layout)
    row = ROWS - 3
    fields = lines[row + 1].split(separator)
    if column == "blank":
        fields = [""] * len(fields)
    elif column == "timestamp":
        fields[0] = cell
    else:
        first = 1 if layout.startswith("IB") else len(fields) - 5  # IB's average, barCount
        fields[first + ["open", "high", "low", "close", "volume"].index(column)] = cell
    lines[row + 1] = separator.join(fields)
    path.write_text("\n".join(lines) + "\n")

    def line(refusal: formats.Refusal) -> int | None:
        return refusal.row + 2 if isinstance(refusal, formats.BadRow) else refusal.line

    with pytest.raises(formats.Refusal) as caught:
        _read(path)
    monkeypatch.setattr(formats._Gathered, "add", lambda self, batch: False)  # read whole
    with pytest.raises(formats.Refusal) as before:
        _read(path)

    assert line(caught.value) == line(before.value) == row + 2  # after the header, 1-based
    assert caught.value.said == before.value.said


@pytest.mark.parametrize("layout", TEXT_LAYOUTS)
def test_excel_s_empty_rows_after_text_layouts_are_left_out(
    tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = TEXT_LAYOUTS[layout](_bars(ROWS), tmp_path / "excel.csv")
    separator = _separator(layout)
    with path.open("a") as fh:
        fh.write((separator * (path.read_text().splitlines()[0].count(separator)) + "\n") * 4)

    raw = _read(path)

    assert len(raw) == ROWS
    assert ("import.note.empty_rows", {"count": 4}) in raw.notes
    np.testing.assert_array_equal(raw.instants, _read_whole(path, monkeypatch).instants)


# The peak of Arrow's own allocations while a file is read, in a process of its own: the
# file's text, when it is held, is Arrow's (numpy's arrays of the bars are not counted).
ARROW_PEAK = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import pyarrow as pa
    from barb.data import formats

    formats.SPLIT_ROWS = 1 << 14  # parsed in parts, as a file of millions of bars is
    path = Path(sys.argv[1])
    raw = formats.read_csv(path, formats.read_csv_shape(path))
    print(pa.default_memory_pool().max_memory(), len(raw))
    """
)


#: Layouts of their own names, measured beside ``TEXT_LAYOUTS``.
NAMED_LAYOUTS = {"Russian names": russian_csv, "Finam": finam_csv}


def test_every_layout_is_read_without_holding_its_text(tmp_path: Path) -> None:
    """Arrow's peak while reading 200,000 bars: 66 bytes a bar for a plain file; a Date,Time
    file held 104, decimal commas 204-224 (their text, as read, beside the numbers made of
    it). Every layout, times with an offset, IB's, NinjaTrader's, Russian and Finam headers
    included, now takes about the plain file's a byte of CSV (measured 1.21-1.54 against
    1.29; docs/benchmarks.md, "Import memory by layout: Arrow's peak")."""
    bars = _bars(200_000)
    files = {"plain": tmp_path / "plain.csv"}
    bars.to_csv(files["plain"], index=False)
    for i, (layout, write) in enumerate({**TEXT_LAYOUTS, **NAMED_LAYOUTS}.items()):
        files[layout] = write(bars, tmp_path / f"{i}.csv")

    per_byte = {}
    for layout, path in files.items():
        out = _measured(ARROW_PEAK, str(path))
        peak, rows = map(int, out.split())
        assert rows == 200_000
        per_byte[layout] = round(peak / path.stat().st_size, 2)

    plain = per_byte.pop("plain")
    assert all(peak < 1.25 * plain for peak in per_byte.values()), (plain, per_byte)


@pytest.mark.parametrize(
    ("layout", "cell"),
    [
        ("Date,Time", "02/30/2024"),
        ("decimal commas, Date;Time", "31.04.2024"),
        ("decimal commas, one time column", "30.02.2024 09:30"),
    ],
)
def test_a_day_its_month_lacks_is_refused_by_its_line(
    tmp_path: Path, layout: str, cell: str
) -> None:
    """Arrow's strptime reads 30 February as 1 March: a typo in a date stored its bars on
    another day, beside that day's own, and nothing was said."""
    path = TEXT_LAYOUTS[layout](_bars(ROWS), tmp_path / "bars.csv")
    lines = path.read_text().splitlines()
    separator = ";" if layout.startswith("decimal") else ","
    row = ROWS - 3
    fields = lines[row + 1].split(separator)
    fields[0] = cell
    lines[row + 1] = separator.join(fields)
    path.write_text("\n".join(lines) + "\n")

    with pytest.raises(formats.BadRow) as caught:
        _read(path)

    assert caught.value.row == row
    assert cell.split()[0] in str(caught.value)


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (formats.parse_compact, ["20240229 093000", "20240230 093000"]),
        (lambda c: formats.parse_ib(c, []), ["20240229 09:30:00", "20240230 09:30:00"]),
    ],
)
def test_a_day_its_month_lacks_is_refused_in_compact_and_ib_times(
    parse: Callable[[pa.ChunkedArray], object], text: list[str]
) -> None:
    with pytest.raises(formats.BadRow) as caught:
        parse(pa.chunked_array([text]))

    assert caught.value.row == 1
    assert "20240230" in str(caught.value)


def _measured(script: str, *args: str) -> str:
    """What ``script`` prints, run in a process of its own (its peak memory is its own)."""
    return subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout

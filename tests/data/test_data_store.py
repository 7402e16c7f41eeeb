"""The stored form: round trips, atomic writes, the per-process cache, clear errors."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from barb.data import store
from barb.data.mapped import load_bars
from barb.data.sample import generate_sample
from barb.data.store import (
    COLUMNS,
    DataMeta,
    data_path,
    make_meta,
    read_bars,
    read_meta,
    write_bars,
)
from barb.errors import DataError
from barb.instruments import load_instrument
from barb.settings import EngineSettings


def small_frame(nq_summer: pd.DataFrame, rows: int = 5000) -> tuple[pd.DataFrame, DataMeta]:
    frame = nq_summer.iloc[:rows].reset_index(drop=True)
    meta = make_meta(
        frame,
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="test bars",
    )
    return frame, meta


def test_round_trip_keeps_columns_dtypes_and_metadata(
    nq_summer: pd.DataFrame, tmp_path: Path
) -> None:
    frame, meta = small_frame(nq_summer)
    path = tmp_path / "NQ.parquet"
    write_bars(frame, meta, path)

    loaded, loaded_meta = read_bars(path)

    assert tuple(loaded.columns) == COLUMNS
    assert isinstance(loaded.index, pd.RangeIndex)
    pd.testing.assert_frame_equal(loaded, frame)
    assert loaded["minute"].dtype == np.int16
    assert loaded["timestamp"].dt.tz is None
    assert loaded_meta == meta
    assert read_meta(path) == meta


def test_metadata_is_json_under_the_barb_key(nq_summer: pd.DataFrame, tmp_path: Path) -> None:
    frame, meta = small_frame(nq_summer, rows=10)
    path = tmp_path / "NQ.parquet"
    write_bars(frame, meta, path)

    raw = json.loads(pq.read_schema(path).metadata[b"barb"])

    assert raw["instrument"] == "NQ"
    assert raw["timezone"] == "America/New_York"
    assert raw["source"] == "synthetic"
    assert raw["rows"] == 10
    assert raw["first_date"] == raw["last_date"] == "2024-06-03"
    assert raw["created_at"].endswith("Z")  # UTC
    assert raw["format_version"] == store.FORMAT_VERSION


def test_failed_write_leaves_the_old_file_and_no_temporary(
    nq_summer: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame, meta = small_frame(nq_summer)
    path = tmp_path / "NQ.parquet"
    write_bars(frame, meta, path)
    before = path.read_bytes()
    real_write = pq.write_table

    def broken_write(table: pa.Table, where: object, **options: object) -> None:
        real_write(table.slice(0, 10), where, **options)  # half-written, then fails
        raise OSError("disk full")

    monkeypatch.setattr(store.pq, "write_table", broken_write)
    other, other_meta = small_frame(nq_summer, rows=100)
    with pytest.raises(OSError, match="disk full"):
        write_bars(other, other_meta, path)

    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["NQ.parquet"]


def test_write_refuses_unsorted_or_mismatched_frames(
    nq_summer: pd.DataFrame, tmp_path: Path
) -> None:
    frame, meta = small_frame(nq_summer, rows=10)
    with pytest.raises(ValueError, match="sorted and unique"):
        write_bars(frame.iloc[::-1].reset_index(drop=True), meta, tmp_path / "a.parquet")
    with pytest.raises(ValueError, match=r"meta.rows"):
        write_bars(frame.iloc[:5], meta, tmp_path / "b.parquet")
    with pytest.raises(ValueError, match="lacks columns"):
        write_bars(frame.drop(columns="minute"), meta, tmp_path / "c.parquet")
    assert list(tmp_path.iterdir()) == []


def test_load_bars_reads_once_until_the_file_changes(
    nq_summer: pd.DataFrame, settings: EngineSettings
) -> None:
    frame, meta = small_frame(nq_summer)
    path = data_path("nq", settings)
    write_bars(frame, meta, path)

    first = load_bars("NQ", settings)
    assert load_bars("nq", settings) is first
    assert first.meta == meta
    assert isinstance(first.frame.index, pd.RangeIndex)

    shorter, shorter_meta = small_frame(nq_summer, rows=100)
    write_bars(shorter, shorter_meta, path)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = load_bars("NQ", settings)
    assert second is not first
    assert len(second.frame) == 100


def test_missing_file_says_how_to_get_data(settings: EngineSettings) -> None:
    with pytest.raises(DataError) as err:
        load_bars("ES", settings)
    message = str(err.value)
    assert "barb data sample" in message
    assert "barb data import FILE --instrument ES" in message
    assert err.value.path == str(data_path("ES", settings).resolve())


def test_a_parquet_file_that_is_not_barbs_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "NQ.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), path)
    with pytest.raises(DataError, match="not a Barb data file"):
        read_bars(path)
    path.write_bytes(b"not parquet at all")
    with pytest.raises(DataError, match="cannot read as Parquet"):
        read_bars(path)


def test_invalid_metadata_is_one_sentence_with_the_field_and_the_log_has_the_rest(
    nq_summer: pd.DataFrame, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """pydantic's multi-line ValidationError ("2 validation errors for DataMeta\nrows\n
    Input should be …  [type=…, input_value=…]\n    For further information visit …")
    reached the admin whole."""
    frame, meta = small_frame(nq_summer, rows=10)
    path = tmp_path / "NQ.parquet"
    write_bars(frame, meta, path)
    table = pq.read_table(path)
    raw = json.loads(table.schema.metadata[b"barb"]) | {"rows": -3, "source": "scraped"}
    pq.write_table(table.replace_schema_metadata({b"barb": json.dumps(raw).encode()}), path)
    with caplog.at_level("WARNING", logger="barb.data.store"), pytest.raises(DataError) as bad:
        read_meta(path)
    assert str(bad.value) == (
        f"{path}: its Barb metadata is invalid (source: Input should be 'synthetic' or "
        "'imported', and 1 more problem)."
    )
    assert "2 validation errors for DataMeta" in caplog.text and "rows" in caplog.text


def test_newer_format_versions_are_refused(nq_summer: pd.DataFrame, tmp_path: Path) -> None:
    frame, meta = small_frame(nq_summer, rows=10)
    path = tmp_path / "NQ.parquet"
    write_bars(frame, meta.model_copy(update={"format_version": 99}), path)
    with pytest.raises(DataError, match="newer than this Barb reads"):
        read_bars(path)


def test_symbols_cannot_name_other_directories(settings: EngineSettings) -> None:
    assert data_path("cl", settings) == settings.data_dir / "CL.parquet"
    with pytest.raises(DataError, match="not an instrument symbol"):
        data_path("../etc/passwd", settings)


def test_written_files_are_readable_by_others(nq_summer: pd.DataFrame, tmp_path: Path) -> None:
    frame, meta = small_frame(nq_summer, rows=10)
    path = tmp_path / "NQ.parquet"
    write_bars(frame, meta, path)
    assert path.stat().st_mode & 0o777 == store.NEW_FILE_MODE
    path.chmod(0o640)
    write_bars(frame, meta, path)  # a replacement keeps the mode it had
    assert path.stat().st_mode & 0o777 == 0o640


def test_decimal_tick_prices_round_trip_exactly(tmp_path: Path) -> None:
    # CL's cent ticks take the dictionary encoding, NQ's quarter points byte-stream-split.
    frame = generate_sample(load_instrument("CL"), dt.date(2024, 1, 2), dt.date(2024, 1, 3))
    meta = make_meta(
        frame, instrument="CL", timezone="America/New_York", source="synthetic", description="x"
    )
    write_bars(frame, meta, tmp_path / "CL.parquet")
    loaded, _ = read_bars(tmp_path / "CL.parquet")
    pd.testing.assert_frame_equal(loaded, frame, check_exact=True)

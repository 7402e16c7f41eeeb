"""Minute bars mapped from Arrow copies of the Parquet files: views, not copies; rebuilt when
the Parquet file changes; safe when processes race; a plain read where nothing can be written."""

from __future__ import annotations

import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from barb.data import mapped
from barb.data.importer import import_file
from barb.data.mapped import (
    SOURCE_KEY,
    fingerprint,
    load_bars,
    map_bars,
    mapped_path,
)
from barb.data.store import COLUMNS, DataMeta, data_path, make_meta, read_bars, write_bars
from barb.settings import EngineSettings


@pytest.fixture
def beside(tmp_path: Path) -> EngineSettings:
    """Settings with the Arrow files beside the Parquet files (the default outside tests)."""
    return EngineSettings(data_dir=tmp_path / "data", mapped_dir=None)


def stored(frame: pd.DataFrame, rows: int, description: str = "test bars") -> tuple:
    part = frame.iloc[:rows].reset_index(drop=True)
    meta = make_meta(
        part,
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description=description,
    )
    return part, meta


def mappings_of(path: Path) -> list[tuple[int, int]]:
    """Address ranges of this process that map ``path`` (read from /proc/self/maps)."""
    target = os.stat(path)
    ranges = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split()
        if len(fields) < 6:
            continue
        inode = int(fields[4])
        if inode == target.st_ino and fields[5] == str(path.resolve()):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            ranges.append((start, end))
    return ranges


def address(values: np.ndarray) -> int:
    return values.__array_interface__["data"][0]


def test_columns_are_read_only_views_of_the_mapped_file(
    nq_summer: pd.DataFrame, beside: EngineSettings
) -> None:
    frame, meta = stored(nq_summer, 20_000)
    parquet = data_path("NQ", beside)
    write_bars(frame, meta, parquet)

    bars = load_bars("NQ", beside)

    arrow = parquet.with_suffix(".arrow")
    assert mapped_path(parquet.resolve(), beside) == arrow.resolve()
    assert arrow.exists()
    regions = mappings_of(arrow)
    assert regions, "the Arrow file is not mapped into this process"
    assert tuple(bars.frame.columns) == COLUMNS
    for name in COLUMNS:
        values = bars.frame[name].to_numpy()
        start = address(values)
        assert any(lo <= start and start + values.nbytes <= hi for lo, hi in regions), name
        assert not values.flags.writeable, name
        # The frame holds the column itself, not a copy made on the way to pandas.
        assert np.shares_memory(values, bars.frame[name].to_numpy())
        base = values
        while isinstance(base.base, np.ndarray):
            base = base.base
        assert not base.flags.owndata, name
    # Same values as the source of truth.
    pd.testing.assert_frame_equal(bars.frame, frame)
    assert bars.meta == meta


def test_the_arrow_file_records_its_parquet_and_is_remade_when_that_changes(
    nq_summer: pd.DataFrame, beside: EngineSettings
) -> None:
    frame, meta = stored(nq_summer, 5000)
    parquet = data_path("NQ", beside)
    write_bars(frame, meta, parquet)
    first = load_bars("NQ", beside)
    arrow = mapped_path(parquet, beside)
    with pa.memory_map(str(arrow)) as source:
        recorded = ipc.open_file(source).schema.metadata[SOURCE_KEY].decode()
    assert recorded == fingerprint(parquet)

    shorter, shorter_meta = stored(nq_summer, 3000, "shorter")
    write_bars(shorter, shorter_meta, parquet, keep_previous=True)
    mapped.clear_cache()
    second = load_bars("NQ", beside)

    assert len(second.frame) == 3000 and second.meta == shorter_meta
    # A frame mapped before keeps the old bars: the new file was renamed over the old name.
    assert len(first.frame) == 5000
    pd.testing.assert_frame_equal(first.frame, frame)
    with pa.memory_map(str(arrow)) as source:
        recorded = ipc.open_file(source).schema.metadata[SOURCE_KEY].decode()
    assert recorded == fingerprint(parquet)


def test_a_restored_file_is_mapped_again(nq_summer: pd.DataFrame, beside: EngineSettings) -> None:
    from barb.data.store import restore_previous

    frame, meta = stored(nq_summer, 4000)
    parquet = data_path("NQ", beside)
    write_bars(frame, meta, parquet)
    write_bars(*stored(nq_summer, 1000, "replacement"), parquet, keep_previous=True)
    assert len(load_bars("NQ", beside).frame) == 1000

    restore_previous(parquet)
    mapped.clear_cache()

    restored = load_bars("NQ", beside)
    assert len(restored.frame) == 4000 and restored.meta == meta


def test_an_import_landing_while_a_worker_converts_never_labels_its_bars_as_the_old_file(
    nq_summer: pd.DataFrame, beside: EngineSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker took the fingerprint of the stored file by name, then read the bars by name:
    an import renamed over it in between, and the Arrow copy held the import's bars under
    the old file's fingerprint. Once the old file was back (a restore whose own copy failed),
    every process mapped the import's bars as the restored file's."""
    old, old_meta = stored(nq_summer, 4000)
    new, new_meta = stored(nq_summer, 1000, "imported meanwhile")
    parquet = data_path("NQ", beside)
    write_bars(old, old_meta, parquet)
    kept = parquet.with_name("old-copy.parquet")
    kept.write_bytes(parquet.read_bytes())
    real_read = mapped.read_bars

    def import_lands_first(*args: object) -> tuple[pd.DataFrame, DataMeta]:
        write_bars(new, new_meta, parquet)  # the import renames its file into place
        return real_read(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(mapped, "read_bars", import_lands_first)
    first, first_meta = map_bars(parquet, beside)
    monkeypatch.setattr(mapped, "read_bars", real_read)
    # What the worker had opened: the file that was stored when it began.
    pd.testing.assert_frame_equal(first, old)
    assert first_meta == old_meta

    os.replace(kept, parquet)  # the old file is back, the Arrow copy not made again
    mapped.clear_cache()
    again = load_bars("NQ", beside)
    pd.testing.assert_frame_equal(again.frame, old)
    assert again.meta == old_meta


def test_a_damaged_arrow_file_is_remade(nq_summer: pd.DataFrame, beside: EngineSettings) -> None:
    frame, meta = stored(nq_summer, 5000)
    parquet = data_path("NQ", beside)
    write_bars(frame, meta, parquet)
    arrow = mapped_path(parquet, beside)
    arrow.write_bytes(b"not an arrow file at all")

    bars = load_bars("NQ", beside)

    pd.testing.assert_frame_equal(bars.frame, frame)
    assert mappings_of(arrow)


def test_import_writes_the_arrow_file(tmp_path: Path, beside: EngineSettings) -> None:
    csv = tmp_path / "bars.csv"
    csv.write_text(
        "timestamp,open,high,low,close,volume\n"
        "2024-01-05 16:59:00,100,101,99.5,100.5,10\n"
        "2024-01-08 09:30:00,102,103,101.75,102.5,900\n"
    )
    import_file(csv, "NQ", beside, any_level=True)

    parquet = data_path("NQ", beside)
    arrow = mapped_path(parquet, beside)
    with pa.memory_map(str(arrow)) as source:
        table = ipc.open_file(source).read_all()
    assert table.schema.metadata[SOURCE_KEY].decode() == fingerprint(parquet)
    assert table.column("high").to_pylist() == [101, 103]
    assert table.column("volume").to_pylist() == [10, 900]


def _convert_and_sum(data_dir: str) -> tuple[int, float]:
    settings = EngineSettings(data_dir=Path(data_dir), mapped_dir=None)
    frame, _ = map_bars(data_path("NQ", settings).resolve(), settings)
    return len(frame), float(frame["close"].sum())


def test_processes_converting_at_once_all_get_whole_bars(
    nq_summer: pd.DataFrame, beside: EngineSettings
) -> None:
    frame, meta = stored(nq_summer, 40_000)
    parquet = data_path("NQ", beside)
    write_bars(frame, meta, parquet)

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(4, mp_context=context) as pool:
        answers = list(pool.map(_convert_and_sum, [str(beside.data_dir)] * 4))

    assert answers == [(40_000, float(frame["close"].sum()))] * 4
    names = sorted(p.name for p in parquet.parent.iterdir())
    assert names == ["NQ.arrow", "NQ.parquet"]  # no temporary file left behind


def test_where_nothing_can_be_written_the_bars_are_read_into_memory(
    nq_summer: pd.DataFrame, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Tests run as root, which writes into read-only directories: a file where the
    # directory should be is what stops the write here.
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    settings = EngineSettings(data_dir=tmp_path / "data", mapped_dir=blocker / "mapped")
    frame, meta = stored(nq_summer, 5000)
    write_bars(frame, meta, data_path("NQ", settings))

    with caplog.at_level(logging.WARNING, logger="barb.data.mapped"):
        bars = load_bars("NQ", settings)

    pd.testing.assert_frame_equal(bars.frame, frame)
    assert bars.meta == meta
    assert "BARB_MAPPED_DIR" in caplog.text


def test_a_separate_mapped_directory_names_files_by_data_directory(
    tmp_path: Path, nq_summer: pd.DataFrame
) -> None:
    frame, meta = stored(nq_summer, 1000)
    shared = tmp_path / "mapped"
    one = EngineSettings(data_dir=tmp_path / "one", mapped_dir=shared)
    two = EngineSettings(data_dir=tmp_path / "two", mapped_dir=shared)
    write_bars(frame, meta, data_path("NQ", one))
    write_bars(*stored(nq_summer, 500), data_path("NQ", two))

    assert len(load_bars("NQ", one).frame) == 1000
    assert len(load_bars("NQ", two).frame) == 500
    assert len(list(shared.glob("NQ-*.arrow"))) == 2
    assert not list((tmp_path / "one").glob("*.arrow"))


def test_meta_is_the_parquet_files(nq_summer: pd.DataFrame, beside: EngineSettings) -> None:
    frame, meta = stored(nq_summer, 1000)
    parquet = data_path("NQ", beside)
    write_bars(frame, meta, parquet)
    loaded = load_bars("NQ", beside)
    assert loaded.meta == read_bars(parquet)[1]
    assert isinstance(loaded.meta, DataMeta)

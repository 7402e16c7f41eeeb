"""Minute bars as uncompressed Arrow IPC files that every worker process memory-maps.

The Parquet file stays the source of truth (import, append and restore write it); beside it
(or in ``BARB_MAPPED_DIR``) an Arrow IPC file holds the same bars, uncompressed, so that a
process maps it instead of decoding it: the pages live once in the machine's page cache and
every worker's columns are views of them (no private copy).

The Arrow file records the fingerprint of the Parquet file it was made from (schema metadata
key ``barb_source``); a different Parquet file (imported, appended, restored, regenerated)
has another fingerprint and the Arrow file is made again on its next load. Files are written
under a temporary name and renamed into place, so two processes converting at once both end
with a whole file, and a process that mapped the old file keeps reading it until it reloads.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc as ipc

from barb.data.store import (
    COLUMNS,
    META_KEY,
    SCHEMA,
    DataMeta,
    data_path,
    locked_temporary,
    meta_from_schema,
    read_bars,
)
from barb.errors import BarbError, DataError
from barb.settings import EngineSettings

log = logging.getLogger(__name__)

MAPPED_SUFFIX = ".arrow"
SOURCE_KEY = b"barb_source"
NEW_FILE_MODE = 0o644
_PARQUET_MAGIC = b"PAR1"


def mapped_path(parquet: Path, settings: EngineSettings) -> Path:
    """Where the Arrow file of ``parquet`` lives: beside it (``NQ.arrow``), or in
    ``settings.mapped_dir`` under a name that also says which data directory it serves."""
    if settings.mapped_dir is None:
        return parquet.with_suffix(MAPPED_SUFFIX)
    folder = hashlib.blake2b(str(parquet.parent.resolve()).encode(), digest_size=6).hexdigest()
    return Path(settings.mapped_dir) / f"{parquet.stem}-{folder}{MAPPED_SUFFIX}"


def fingerprint(parquet: Path) -> str:
    """A digest of the Parquet file's size and footer.

    The footer holds the schema with Barb's metadata (written anew, with its creation time,
    by every import), each column chunk's offsets, sizes and statistics: another file has
    another footer. Reading it costs a few kilobytes, where hashing the whole file would add
    tens of milliseconds to every worker's first load.
    """
    with open(parquet, "rb") as fh:
        return _fingerprint(fh, parquet)


def _fingerprint(fh: BinaryIO, parquet: Path) -> str:
    """``fingerprint`` of the file open as ``fh`` (``parquet`` names it in errors)."""
    size = os.fstat(fh.fileno()).st_size
    if size < 12:
        raise DataError("too short to be a Parquet file.", path=str(parquet))
    fh.seek(size - 8)
    tail = fh.read(8)
    if tail[4:] != _PARQUET_MAGIC:
        raise DataError("cannot read as Parquet (no Parquet footer).", path=str(parquet))
    footer_len = int.from_bytes(tail[:4], "little")
    fh.seek(max(0, size - 8 - footer_len))
    footer = fh.read(footer_len)
    fh.seek(0)
    digest = hashlib.blake2b(digest_size=16)
    digest.update(size.to_bytes(8, "little"))
    digest.update(footer)
    return digest.hexdigest()


def mapped_table(frame: pd.DataFrame, meta: DataMeta, source: str) -> pa.Table:
    """The table an Arrow file holds: the stored columns, the metadata and the fingerprint of
    the Parquet file."""
    columns = [pa.array(frame[name].to_numpy(), type=SCHEMA.field(name).type) for name in COLUMNS]
    metadata = {META_KEY: meta.model_dump_json().encode(), SOURCE_KEY: source.encode()}
    return pa.Table.from_arrays(columns, schema=SCHEMA.with_metadata(metadata))


def write_mapped(table: pa.Table, path: Path) -> None:
    """Write ``table`` as one uncompressed record batch to ``path``, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = locked_temporary(path)  # flock-ed: an import's cleanup leaves it alone
    try:
        with os.fdopen(fd, "wb") as fh:  # closed (and unlocked) only once renamed
            sink = pa.PythonFile(fh, mode="w")
            with ipc.new_file(sink, table.schema) as writer:
                # One batch: every column is then one contiguous buffer, one numpy view.
                writer.write_table(table, max_chunksize=max(1, table.num_rows))
            fh.flush()
            os.fsync(fh.fileno())
            os.chmod(tmp, NEW_FILE_MODE)
            os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def open_mapped(path: Path, source: str) -> tuple[pd.DataFrame, DataMeta] | None:
    """The bars of an Arrow file as a frame of views into the mapping, or None when the file
    is missing, unreadable or made from another Parquet file than ``source``."""
    try:
        reader = ipc.open_file(pa.memory_map(str(path), "r"))
    except FileNotFoundError:
        return None
    except (OSError, pa.ArrowException) as exc:
        log.warning("mapped data file %s is unreadable (%s); making it again", path, exc)
        return None
    schema = reader.schema
    if (schema.metadata or {}).get(SOURCE_KEY) != source.encode():
        return None
    if not schema.equals(SCHEMA, check_metadata=False) or reader.num_record_batches > 1:
        return None
    meta = meta_from_schema(schema, path)
    if reader.num_record_batches == 0:
        return None
    batch = reader.get_batch(0)
    columns = {name: _view(batch.column(i)) for i, name in enumerate(schema.names)}
    # copy=False keeps one block per column: consolidating would copy the mapped columns.
    return pd.DataFrame(columns, copy=False), meta


def _view(array: pa.Array) -> np.ndarray:
    """A read-only numpy view of ``array``'s buffer (a copy only if it has nulls, which
    Barb's validated data never has)."""
    if array.null_count:
        return array.to_numpy(zero_copy_only=False)
    return array.to_numpy(zero_copy_only=True)


def map_bars(parquet: Path, settings: EngineSettings) -> tuple[pd.DataFrame, DataMeta]:
    """The bars of ``parquet`` mapped from its Arrow file, which is made first when missing or
    out of date. When it cannot be written (a read-only directory) the bars are read from
    the Parquet file into this process's memory, and a warning says why."""
    path = mapped_path(parquet, settings)
    # The fingerprint and the bars come from one open file: taken by name, an import landing
    # between them labelled the new bars with the old file's fingerprint, and once that file
    # was back (`barb data restore` whose own copy failed) every worker mapped the import's
    # bars as the restored file's.
    with open(parquet, "rb") as fh:
        source = _fingerprint(fh, parquet)
        opened = open_mapped(path, source)
        if opened is not None:
            return opened
        frame, meta = read_bars(parquet, fh)
    try:
        write_mapped(mapped_table(frame, meta, source), path)
    except OSError as exc:
        log.warning(
            "cannot write %s (%s): %s is read into this process's memory instead of being "
            "shared; set BARB_MAPPED_DIR to a writable directory",
            path,
            exc,
            parquet.name,
        )
        return frame, meta
    opened = open_mapped(path, source)
    # None: another process converted a newer Parquet file meanwhile; this one is read.
    return opened if opened is not None else (frame, meta)


def refresh_mapped(
    frame: pd.DataFrame, meta: DataMeta, parquet: Path, settings: EngineSettings
) -> None:
    """Make the Arrow file of a Parquet file just written from ``frame`` (on import), so the
    first question after it does not pay for the conversion. A failure only leaves the
    conversion to the first load (out of memory too: the Parquet file is in place by then, and
    the import must not say that nothing was written)."""
    try:
        write_mapped(
            mapped_table(frame, meta, fingerprint(parquet)), mapped_path(parquet, settings)
        )
    except (OSError, MemoryError) as exc:
        log.warning("cannot write the mapped copy of %s (%s); made on first use", parquet, exc)


def refresh_mapped_from(parquet: Path, settings: EngineSettings) -> None:
    """``refresh_mapped`` for a Parquet file already in place (``barb data restore``): read
    here, so that the first question after it does not convert it in a worker. Converted
    there, it cost that worker Arrow's allocations besides the query's, under its memory
    ceiling. A file that cannot be read is left to the first load, which says why."""
    try:
        frame, meta = read_bars(parquet)
    except (BarbError, OSError, MemoryError) as exc:
        log.warning("cannot read %s for its mapped copy (%s); made on first use", parquet, exc)
        return
    refresh_mapped(frame, meta, parquet, settings)


@dataclass(frozen=True, eq=False)
class Bars:
    """One instrument's minute bars (the stored columns), shared by every caller in the
    process and, when mapped, by every process on the machine. Read-only: never mutate
    ``frame`` in place; build new frames from its columns."""

    frame: pd.DataFrame
    meta: DataMeta


_cache: dict[Path, tuple[tuple[int, int], Bars]] = {}
_cache_lock = threading.Lock()


def load_bars(symbol: str, settings: EngineSettings | None = None) -> Bars:
    """The bars of ``symbol``, mapped once per process and again only when the file changes."""
    settings = settings or EngineSettings()
    path = data_path(symbol, settings).resolve()
    try:
        stat = path.stat()
    except FileNotFoundError:
        sym = symbol.upper()
        raise DataError(
            f"No data for {sym}. Run `barb data sample` to generate the synthetic sample, "
            f"or `barb data import FILE --instrument {sym}` to load your own bars.",
            path=str(path),
        ) from None
    stamp = (stat.st_mtime_ns, stat.st_size)
    # One lock for all files: two threads asking for the same file at once must not both
    # convert it.
    with _cache_lock:
        cached = _cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        frame, meta = map_bars(path, settings)
        bars = Bars(frame=frame, meta=meta)
        _cache[path] = (stamp, bars)
        return bars


def clear_cache() -> None:
    """Forget every loaded file (for tests, and to unmap files)."""
    with _cache_lock:
        _cache.clear()

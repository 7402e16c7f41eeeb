"""Writing a result's file (its CSV, its chart) whole or not at all.

Shared by ``barb query --csv/--chart`` and ``barb chat``: a full disk, a file size limit or
a path that cannot be written is an ``OSError`` handed back to say in one sentence, and a
file cut short by it is removed (read later, a CSV missing its last rows looked whole).
"""

from __future__ import annotations

from pathlib import Path


def write_whole(path: Path, data: bytes) -> OSError | None:
    """Write ``data`` to ``path``; the error that stopped it, with nothing of it left on
    disk, or None. A file that could not even be opened is left as it was."""
    try:
        file = path.open("wb")
    except OSError as exc:
        return exc
    try:
        with file:  # closing flushes: a full disk is often met there
            file.write(data)
    except OSError as exc:
        if path.is_file():
            path.unlink(missing_ok=True)
        return exc
    return None


def why_not_written(exc: OSError) -> str:
    """The system's words for ``exc`` ("No space left on device", "File too large")."""
    return exc.strerror or type(exc).__name__

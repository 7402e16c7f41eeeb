"""Barb's own event data files: one CSV per event in ``barb/events/data/``.

Each file starts with ``#`` comment lines naming its official source and one line
``# coverage: YYYY-MM-DD .. YYYY-MM-DD``: the dates for which the file is complete. Outside that
range Barb does not know whether the event happened, which is different from "no event".
Every row is validated here, at the boundary, so a typo in a file is reported with its line
instead of turning into a silently wrong date.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from barb.errors import DataError
from barb.instruments import parse_clock

DATA_DIR = Path(__file__).resolve().parent / "data"

_COVERAGE = re.compile(r"^#\s*coverage:\s*(\d{4}-\d{2}-\d{2})\s*\.\.\s*(\d{4}-\d{2}-\d{2})\s*$")
_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


class EventRow(BaseModel):
    """One release in a data file; columns a file does not have keep their defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    date: dt.date
    # Wall-clock ET of the release; empty means the catalog's time of day.
    time: str | None = None
    scheduled: bool = True
    press_conference: bool | None = None
    reference_month: str | None = None
    note: str = ""

    @field_validator("time", "reference_month", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("time")
    @classmethod
    def _clock(cls, value: str | None) -> str | None:
        if value is not None:
            parse_clock(value)
        return value

    @field_validator("reference_month")
    @classmethod
    def _month(cls, value: str | None) -> str | None:
        if value is not None and not _MONTH.match(value):
            raise ValueError(f"reference_month must be YYYY-MM, got {value!r}")
        return value


@dataclass(frozen=True)
class EventFile:
    """A parsed data file: its rows in date order and the range it covers."""

    path: Path
    coverage_start: dt.date
    coverage_end: dt.date
    columns: tuple[str, ...]
    rows: tuple[EventRow, ...]


def data_file_path(file_name: str) -> Path:
    return DATA_DIR / file_name


@cache
def load_event_file(file_name: str) -> EventFile:
    """Read and validate ``data/<file_name>``; cached, the files ship with the package."""
    path = data_file_path(file_name)
    if not path.is_file():
        raise DataError("event data file not found", path=str(path))
    coverage: tuple[dt.date, dt.date] | None = None
    data_lines: list[tuple[int, str]] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if line.startswith("#"):
                match = _COVERAGE.match(line.strip())
                if match:
                    coverage = (
                        dt.date.fromisoformat(match.group(1)),
                        dt.date.fromisoformat(match.group(2)),
                    )
                continue
            if line.strip():
                data_lines.append((number, line))
    if coverage is None:
        raise DataError("missing '# coverage: YYYY-MM-DD .. YYYY-MM-DD' header", path=str(path))
    if coverage[0] > coverage[1]:
        raise DataError("coverage starts after it ends", path=str(path))
    if not data_lines:
        raise DataError("no header row and no data", path=str(path))

    header_line = data_lines[0][0]
    reader = csv.DictReader([text for _, text in data_lines])
    columns = tuple(reader.fieldnames or ())
    if "date" not in columns:
        raise DataError(
            "the first non-comment line must name the columns, with 'date'",
            path=str(path),
            line=header_line,
        )
    rows: list[EventRow] = []
    for (number, _), record in zip(data_lines[1:], reader, strict=True):
        try:
            row = EventRow.model_validate(record)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise DataError(f"{where}: {problem['msg']}", path=str(path), line=number) from exc
        if not coverage[0] <= row.date <= coverage[1]:
            raise DataError(
                f"{row.date} is outside the file's coverage", path=str(path), line=number
            )
        if rows and row.date <= rows[-1].date:
            raise DataError(
                f"{row.date} is not after the previous row ({rows[-1].date}); "
                "rows must be unique and in date order",
                path=str(path),
                line=number,
            )
        rows.append(row)
    return EventFile(
        path=path,
        coverage_start=coverage[0],
        coverage_end=coverage[1],
        columns=columns,
        rows=tuple(rows),
    )

"""`barb data sample | import | info` through click's test runner."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from barb.data import sample
from barb.data.cli import data
from barb.data.store import data_path
from barb.settings import EngineSettings

Invoke = Callable[..., Result]


@pytest.fixture
def run(settings: EngineSettings) -> Invoke:
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(data, list(args), obj=settings)

    return invoke


@pytest.fixture(autouse=True)
def short_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four trading days instead of eighteen years."""
    real = sample.generate_sample
    monkeypatch.setattr(
        sample,
        "generate_sample",
        lambda instrument: real(instrument, dt.date(2024, 1, 2), dt.date(2024, 1, 5)),
    )


def test_sample_writes_then_keeps(run: Invoke, settings: EngineSettings) -> None:
    result = run("sample", "--instrument", "NQ", "-i", "es")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"NQ: wrote {data_path('NQ', settings)} — 5,520 rows, ")
    assert "2024-01-02 to 2024-01-05" in lines[0]
    assert lines[1].startswith("ES: wrote")

    again = run("sample", "-i", "NQ")
    assert again.exit_code == 0
    assert "NQ: kept" in again.output
    assert "use --force to replace it" in again.output
    assert "NQ: wrote" in run("sample", "-i", "NQ", "--force").output


def test_sample_defaults_to_every_instrument_with_a_sample(run: Invoke) -> None:
    result = run("sample")
    assert result.exit_code == 0, result.output
    assert [line.split(":")[0] for line in result.output.splitlines()] == ["CL", "ES", "NQ"]


def test_import_and_info(run: Invoke, tmp_path: Path, settings: EngineSettings) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(
        "Date,Time,Open,High,Low,Close,Volume\n"
        "2024-01-02,09:30,100,101,99.5,100.5,10\n"
        "2024-01-02,09:31,100.5,101,100,100.75,20\n"
    )
    result = run("import", str(path), "--instrument", "CL", "--timezone", "America/Chicago")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("mine.csv: Date and Time columns, 2 bars\n")
    assert "CL: wrote 2 bars; the data now holds 2 bars, 2024-01-02 to 2024-01-02, in " in (
        result.output
    )

    info = run("info", "CL")
    assert info.exit_code == 0
    assert info.output.startswith("CL: 2 rows, 2024-01-02 to 2024-01-02, imported (")
    assert "mine.csv (split CSV, times in America/Chicago)" in info.output

    listing = run("info")
    assert listing.exit_code == 0
    assert "CL: 2 rows" in listing.output
    assert "NQ: no data at" in listing.output
    assert "barb data import FILE --instrument NQ" in listing.output

    missing = run("info", "ES")
    assert missing.exit_code == 1


def test_import_errors_are_one_line_without_traceback(run: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("timestamp,open,high,low,close,volume\n2024-01-02 09:30:00,100,99,101,100,10\n")
    result = run("import", str(path), "-i", "NQ")
    assert result.exit_code == 1
    assert result.stderr == f"Error: {path}, line 2: high 99 is below low 101.\n"
    assert "Traceback" not in result.output

    unknown = run("import", str(path), "-i", "ZZ")
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("Error: Instrument 'ZZ' is not configured.")

    bad_format = run("import", str(path), "-i", "NQ", "--format", "xls")
    assert bad_format.exit_code == 2  # click's usage error lists the choices
    assert "plain" in bad_format.output

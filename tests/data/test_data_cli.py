"""`barb data sample | import | info` through click's test runner."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from barb.data import sample
from barb.data.cli import data
from barb.data.store import data_path, previous_path, read_bars
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
    # Two mid-morning bars cannot tell open stamps from close stamps: declared.
    result = run(
        "import",
        str(path),
        "--instrument",
        "CL",
        "--timezone",
        "America/Chicago",
        "--stamp",
        "open",
    )
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


@pytest.mark.parametrize("zone", ["America", "Europe", "Etc", "Mars/Olympus"])
def test_a_timezone_that_is_no_zone_is_refused_in_one_sentence(
    run: Invoke, tmp_path: Path, zone: str
) -> None:
    """p46b #3: ``--timezone America`` (a half-typed America/Chicago) names a folder of
    the zone database; zoneinfo failed on it with IsADirectoryError, and the import said
    "Error: [Errno 21] Is a directory: '…/tzdata/zoneinfo/America'". Now it is an unknown
    time zone, as Mars/Olympus is."""
    path = _bars_csv(tmp_path / "bars.csv", "2024-01-02")
    result = run("import", str(path), "-i", "CL", "--timezone", zone)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: unknown timezone '{zone}'; use an IANA name such as America/Chicago or UTC.\n"
    )


def _bars_csv(path: Path, day: str) -> Path:
    path.write_text(
        "Date,Time,Open,High,Low,Close,Volume\n"
        f"{day},09:30,100,101,99.5,100.5,10\n"
        f"{day},09:31,100.5,101,100,100.75,20\n"
    )
    return path


def test_a_damaged_stored_file_is_refused_in_one_line_and_replace_writes_over_it(
    run: Invoke, tmp_path: Path, settings: EngineSettings
) -> None:
    """A cut-short CL.parquet: --replace and --check --replace crashed with pyarrow's
    traceback (ArrowInvalid from the replace note's read), the other modes said only
    "cannot read as Parquet (…)" with no way out."""
    first = _bars_csv(tmp_path / "first.csv", "2024-01-02")
    second = _bars_csv(tmp_path / "second.csv", "2024-01-03")
    zone = ("--timezone", "America/Chicago", "--stamp", "open")
    assert run("import", str(first), "-i", "CL", *zone).exit_code == 0
    assert run("import", str(second), "-i", "CL", *zone, "--replace").exit_code == 0
    target = data_path("CL", settings)
    kept = previous_path(target)
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])
    damaged, good = target.read_bytes(), kept.read_bytes()

    for mode in ((), ("--append",), ("--check",), ("--check", "--append")):
        refused = run("import", str(second), "-i", "CL", *zone, *mode)
        assert refused.exit_code == 1, mode
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.output, mode
        assert refused.stderr.startswith(
            f"Error: {second}: the stored CL data in {target} cannot be read (Parquet magic "
            "bytes not found in footer"
        ), refused.stderr
        assert refused.stderr.endswith(
            "); nothing was written. `barb data restore CL` brings back the previous file "
            "(2 bars, 2024-01-02 to 2024-01-02), or pass --replace to write this file over "
            "it.\n"
        )
        assert (target.read_bytes(), kept.read_bytes()) == (damaged, good), mode

    checked = run("import", str(second), "-i", "CL", *zone, "--check", "--replace")
    assert checked.exit_code == 0, checked.output
    assert "The stored CL data in CL.parquet cannot be read (" in checked.output
    assert (target.read_bytes(), kept.read_bytes()) == (damaged, good)

    replaced = run("import", str(second), "-i", "CL", *zone, "--replace")
    assert replaced.exit_code == 0, replaced.output
    assert "): this file replaces it, and the damaged file is not kept." in replaced.output
    assert "is deleted" not in replaced.output  # the kept file stays
    frame, meta = read_bars(target)
    assert meta.source_file == "second.csv" and frame["close"].tolist() == [100.5, 100.75]
    assert kept.read_bytes() == good  # the damaged file did not push out the good one


def test_the_previous_file_is_said_to_be_kept_only_when_this_write_kept_it(
    run: Invoke, tmp_path: Path, settings: EngineSettings
) -> None:
    """The sentence followed whether a kept file was there: a --replace over a damaged file
    (not kept) said "The previous file is kept" of the older copy a restore would bring
    back, beside the note that the damaged file is not kept."""
    zone = ("--timezone", "America/Chicago", "--stamp", "open")
    kept_sentence = "The previous file is kept; `barb data restore CL` brings it back."
    first = run("import", str(_bars_csv(tmp_path / "a.csv", "2024-01-02")), "-i", "CL", *zone)
    assert first.exit_code == 0, first.output
    assert "previous file" not in first.output  # nothing was there to keep
    second_csv = _bars_csv(tmp_path / "b.csv", "2024-01-03")
    second = run("import", str(second_csv), "-i", "CL", *zone, "--replace")
    assert second.exit_code == 0, second.output
    assert kept_sentence in second.output
    target = data_path("CL", settings)
    target.write_bytes(target.read_bytes()[:-20])
    over = run(
        "import", str(_bars_csv(tmp_path / "c.csv", "2024-01-04")), "-i", "CL", *zone, "--replace"
    )
    assert over.exit_code == 0, over.output
    assert "previous file is kept" not in over.output
    assert "): this file replaces it, and the damaged file is not kept." in over.output
    # The kept file is still a.csv's, the one before the damaged file, as the words imply.
    assert read_bars(previous_path(target))[1].source_file == "a.csv"


def test_a_damaged_file_without_a_previous_one_points_to_replace_and_restore_refuses(
    run: Invoke, tmp_path: Path, settings: EngineSettings
) -> None:
    path = _bars_csv(tmp_path / "bars.csv", "2024-01-02")
    zone = ("--timezone", "America/Chicago", "--stamp", "open")
    assert run("import", str(path), "-i", "CL", *zone).exit_code == 0
    target = data_path("CL", settings)
    target.write_bytes(target.read_bytes()[:-20])
    refused = run("import", str(path), "-i", "CL", *zone, "--append")
    assert refused.exit_code == 1
    assert refused.stderr.endswith(
        "); nothing was written. Pass --replace to write this file over it.\n"
    )
    info = run("info", "CL")
    assert info.exit_code == 1 and "Traceback" not in info.output
    assert info.output.startswith(f"CL: {target} cannot be read (Parquet magic bytes")

    # The kept file damaged: restore says so in one line and swaps nothing.
    assert run("import", str(path), "-i", "CL", *zone, "--replace").exit_code == 0
    kept = previous_path(target)
    assert not kept.exists()  # the damaged file was not kept
    kept.write_bytes(b"PAR1 not really")
    before = target.read_bytes()
    restored = run("restore", "CL")
    assert restored.exit_code == 1 and "Traceback" not in restored.output
    assert restored.stderr.startswith(
        f"Error: {target}: the kept previous file CL.previous.parquet cannot be read ("
    )
    assert restored.stderr.endswith("); nothing was restored.\n")
    assert (target.read_bytes(), kept.read_bytes()) == (before, b"PAR1 not really")
    # A second --replace (of other bars: the same ones write nothing) deletes the
    # unreadable kept file, and says so.
    path.write_text(path.read_text().replace(",10\n", ",11\n", 1))
    again = run("import", str(path), "-i", "CL", *zone, "--replace")
    assert again.exit_code == 0, again.output
    assert "The kept file CL.previous.parquet, which cannot be read (" in again.output
    assert read_bars(kept)[1].source_file == "bars.csv"

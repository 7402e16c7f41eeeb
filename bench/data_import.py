"""How long an import takes, stage by stage, on a vendor-sized file.

    python -m bench.data_import [--years 2] [--write docs/benchmarks.md]

Writes ``--years`` of the NQ sample as a Chicago-time CSV (the case where the time zone must
be found from the file), then times reading it, finding its clock, the whole check and
report, and the write; and the sample generator per instrument. Results are appended to
``docs/benchmarks.md`` under "Data" when ``--write`` is given.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

import pandas as pd

from barb.data import formats
from barb.data.clock import read_clock
from barb.data.importer import check_file, write_checked
from barb.data.sample import generate_sample
from barb.data.store import data_path, read_bars
from barb.instruments import load_instrument
from barb.settings import EngineSettings
from bench.doc_sections import replace_section

SECTION = "## Data"


def _timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--years", type=int, default=2)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args(argv)

    frame, _ = read_bars(data_path("NQ", EngineSettings()))
    last = frame["trading_date"].iloc[-1]
    part = frame[frame["trading_date"] > last - pd.DateOffset(years=args.years)]
    wall = part["timestamp"].dt.tz_localize("America/New_York").dt.tz_convert("America/Chicago")
    rows: list[tuple[str, float]] = []
    nq = load_instrument("NQ")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nq_chicago.csv"
        out = part[["open", "high", "low", "close", "volume"]].copy()
        out.insert(0, "timestamp", wall.dt.strftime("%Y-%m-%d %H:%M:%S").to_numpy())
        out.to_csv(path, index=False)
        size_mb = path.stat().st_size / 1e6
        shape = formats.read_csv_shape(path)
        raw, seconds = _timed(formats.read_csv, path, shape)
        rows.append(("read the CSV (Arrow)", seconds))
        _, seconds = _timed(read_clock, raw, nq, 1, None, None)
        rows.append(("find the time zone and bar stamp (11 zones x 2 stamps)", seconds))
        settings = EngineSettings(data_dir=Path(tmp) / "data")
        checked, seconds = _timed(check_file, path, "NQ", settings)
        rows.append(("whole check and report (read, clock, calendar, jumps)", seconds))
        _, seconds = _timed(write_checked, checked, settings, "new")
        rows.append(("write the Parquet file", seconds))
    for symbol in ("NQ", "ES", "CL"):
        _, seconds = _timed(generate_sample, load_instrument(symbol))
        rows.append((f"generate the {symbol} sample (2008-2026)", seconds))

    lines = [
        SECTION,
        "",
        f"Command: `.venv/bin/python -m bench.data_import --years {args.years}`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}; file: "
        f"{len(part):,} one-minute NQ bars in Chicago time, {size_mb:.0f} MB of CSV.",
        "",
        "| step | seconds |",
        "|---|---:|",
        *(f"| {name} | {seconds:.2f} |" for name, seconds in rows),
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        replace_section(args.write, SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

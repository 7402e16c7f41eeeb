"""Peak memory of `barb data import` on a large CSV of one-minute bars, and its time.

    .venv/bin/python -m bench.import_memory [--years 18] [--baseline ../barb-old]
        [--write docs/benchmarks.md]

Writes the last ``--years`` of the NQ sample (all of it: 6.4 million bars, 350 MB) as a
plain CSV, then runs the import into an empty data directory in a fresh process, which
reports its peak resident memory (Linux's VmHWM) and its start (the memory of Python and
the libraries loaded before the file is read). With ``--baseline`` (a checkout of an
earlier commit, as in ``bench/compare_engines.py``) the same import is run on its code
first. Results go to ``docs/benchmarks.md`` under "Import memory" with ``--write``.

    .venv/bin/python -m bench.import_memory --arrow [--years 1] [--write docs/benchmarks.md]

measures Arrow's own peak while each layout of ``LAYOUTS`` is read; written under "Import
memory by layout: Arrow's peak".

    .venv/bin/python -m bench.import_memory --layouts [--years 6] [--baseline ../barb-old]
        [--write docs/benchmarks.md]

measures instead the same bars in each layout of ``LAYOUTS`` (a plain CSV, Date and Time
columns, decimal commas after ';', times with an offset, IB's, NinjaTrader's; ``--only``
a few of them, by a word of their names), and says whether each code stored the same frame
with the same report; written under "Import memory by layout".
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pandas as pd

from bench.doc_sections import replace_section
from bench.layout_files import european_csv, finam_csv, russian_csv

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Import memory"
LAYOUT_SECTION = "## Import memory by layout"
MIB = 1024 * 1024

# Run in the checkout under test (its directory first on sys.path): the import as the CLI
# does it, then the process's own peak.
RUN = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    def hwm():
        with open("/proc/self/status") as fh:
            return next(int(x.split()[1]) * 1024 for x in fh if x.startswith("VmHWM"))
    import hashlib
    from barb.data.importer import import_file
    from barb.settings import EngineSettings
    start = hwm()
    began = time.perf_counter()
    done = import_file(Path(sys.argv[1]), "NQ", EngineSettings(data_dir=Path(sys.argv[2])))
    seconds, peak = time.perf_counter() - began, hwm()
    # The stored frame's columns and values (the file's metadata holds the import's time).
    import pandas as pd
    from barb.data.store import read_bars
    frame, _ = read_bars(done.path)
    digest = hashlib.sha256(done.report.text().encode())
    for name in frame.columns:
        digest.update(name.encode() + str(frame[name].dtype).encode())
        digest.update(pd.util.hash_pandas_object(frame[name], index=False).to_numpy().tobytes())
    print(start, peak, seconds, digest.hexdigest()[:16])
    """
)


def _measure(code: Path, csv: Path, tmp: Path) -> tuple[int, int, float, str]:
    data = Path(tempfile.mkdtemp(dir=tmp))
    env = {**os.environ, "PYTHONPATH": str(code), "BARB_MAPPED_DIR": str(data / "mapped")}
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(csv), str(data)],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    start, peak, seconds, stored = done.stdout.split()
    return int(start), int(peak), float(seconds), stored


def _plain(part: pd.DataFrame, path: Path) -> None:
    part[["timestamp", "open", "high", "low", "close", "volume"]].to_csv(path, index=False)


def _split(part: pd.DataFrame, path: Path) -> None:
    """Kibot's and TradeStation's: ``Date,Time`` (MM/DD/YYYY, HH:MM)."""
    out = part[["open", "high", "low", "close", "volume"]].copy()
    out.insert(0, "Time", part["timestamp"].dt.strftime("%H:%M"))
    out.insert(0, "Date", part["timestamp"].dt.strftime("%m/%d/%Y"))
    out.to_csv(path, index=False)


def _offset(part: pd.DataFrame, path: Path) -> None:
    """ISO 8601 with the offset (``2024-03-18T09:30:00-04:00``): TradingView's, ib_insync's."""
    out = part[["timestamp", "open", "high", "low", "close", "volume"]].copy()
    text = part["timestamp"].dt.tz_localize("America/New_York").dt.strftime("%Y-%m-%dT%H:%M:%S%z")
    out["timestamp"] = text.str.replace(r"(\d\d)(\d\d)$", r"\1:\2", regex=True)
    out.to_csv(path, index=False)


def _ib(part: pd.DataFrame, path: Path, zone: bool) -> None:
    """TWS's export: ``20240318 09:30:00 US/Eastern``, or ``20240318  09:30:00``."""
    out = part[["open", "high", "low", "close", "volume"]].copy()
    form = "%Y%m%d %H:%M:%S US/Eastern" if zone else "%Y%m%d  %H:%M:%S"
    out.insert(0, "date", part["timestamp"].dt.strftime(form))
    out.assign(average=part["close"], barCount=7).to_csv(path, index=False)


def _ninjatrader(part: pd.DataFrame, path: Path) -> None:
    """NinjaTrader 8's ``yyyyMMdd HHmmss;o;h;l;c;v``, stamped at the bar's close."""
    out = part[["open", "high", "low", "close", "volume"]].copy()
    close = part["timestamp"] + pd.Timedelta(minutes=1)
    out.insert(0, "time", close.dt.strftime("%Y%m%d %H%M%S"))
    out.to_csv(path, sep=";", header=False, index=False)


LAYOUTS = {
    "one ISO time column, `,` and `.`": _plain,
    "`Date,Time` columns (MM/DD/YYYY, HH:MM)": _split,
    "`;`, decimal commas, `DD.MM.YYYY HH:MM` in one column": (
        lambda part, path: european_csv(part, path, split=False)
    ),
    "`;`, decimal commas, `Date;Time` columns (DD.MM.YYYY, HH:MM)": (
        lambda part, path: european_csv(part, path, split=True)
    ),
    "Russian names (`Дата;Время;Открытие;…`), decimal commas": russian_csv,
    "Finam (`<TICKER>;<PER>;<DATE>;<TIME>;…`, `20240304;093000`)": finam_csv,
    "ISO with an offset (`2024-03-18T09:30:00-04:00`)": _offset,
    "IB, zone named (`20240318 09:30:00 US/Eastern`)": lambda part, path: _ib(part, path, True),
    "IB, no zone (`20240318  09:30:00`)": lambda part, path: _ib(part, path, False),
    "NinjaTrader (`20240318 093100;…`, no header)": _ninjatrader,
}


# Arrow's own peak while the file is read (``formats.read_csv``, as the import reads it),
# in a process of its own: the file's text, when it is held, is Arrow's.
ARROW_RUN = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import pyarrow as pa
    from barb.data import formats
    path = Path(sys.argv[1])
    raw = formats.read_csv(path, formats.read_csv_shape(path))
    print(pa.default_memory_pool().max_memory(), len(raw))
    """
)
ARROW_SECTION = "## Import memory by layout: Arrow's peak"


def _arrow_peaks(part: pd.DataFrame, years: int) -> str:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, write in LAYOUTS.items():
            csv = Path(tmp) / "bars.csv"
            write(part, csv)
            done = subprocess.run(
                [sys.executable, "-c", ARROW_RUN, str(csv)],
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                capture_output=True,
                text=True,
                check=True,
            )
            peak, bars = map(int, done.stdout.split())
            size = csv.stat().st_size
            rows.append(
                f"| {name} | {size / 1e6:.0f} | {peak / MIB:,.0f} | {peak / size:.2f} "
                f"| {peak / bars:.0f} |"
            )
            csv.unlink()
    return "\n".join(
        [
            ARROW_SECTION,
            "",
            f"Command: `.venv/bin/python -m bench.import_memory --arrow --years {years}`",
            "",
            f"Machine: {platform.machine()}, Python {platform.python_version()}; the NQ "
            f"sample's last {years} years ({len(part):,} bars) in each layout, read as the "
            "import reads it, in a fresh process: the peak of Arrow's allocations (the "
            "file's text, when it is held; the bars' numpy arrays are not counted). "
            "`tests/data/test_import_streaming.py` holds every layout within a quarter of "
            "the plain file's peak a byte of CSV.",
            "",
            "| layout | MB | Arrow peak MiB | peak per CSV byte | bytes a bar |",
            "|---|---:|---:|---:|---:|",
            *rows,
        ]
    )


def _by_layout(
    part: pd.DataFrame, runs: list[tuple[str, Path]], years: int, only: list[str]
) -> str:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, write in LAYOUTS.items():
            if only and not any(word in name for word in only):
                continue
            csv = Path(tmp) / "bars.csv"
            write(part, csv)
            size = csv.stat().st_size
            found = [_measure(code, csv, Path(tmp)) for _, code in runs]
            same = len({stored for *_, stored in found}) == 1
            cells = " | ".join(f"{(peak - start) / size:.2f}" for start, peak, _, _ in found)
            seconds = " / ".join(f"{s:.0f}" for _, _, s, _ in found)
            rows.append(f"| {name} | {size / 1e6:.0f} | {cells} | {seconds} | {same} |")
            csv.unlink()
    codes = " | ".join(f"{code}: peak over start per byte" for code, _ in runs)
    return "\n".join(
        [
            LAYOUT_SECTION,
            "",
            f"Command: `.venv/bin/python -m bench.import_memory --layouts --years {years}"
            + (" --baseline …`" if len(runs) > 1 else "`"),
            "",
            f"Machine: {platform.machine()}, Python {platform.python_version()}; the NQ "
            f"sample's last {years} years ({len(part):,} bars) in each layout; the import into "
            "an empty data directory, in a fresh process. `same`: every code stored the same "
            "frame (columns, types, values) and reported the same text.",
            "",
            f"| layout | MB | {codes} | seconds | same |",
            "|---|---:|" + "---:|" * len(runs) + "---:|---|",
            *rows,
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--years", type=int, default=18)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--write", type=Path)
    parser.add_argument("--layouts", action="store_true")
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--arrow", action="store_true")
    args = parser.parse_args(argv)

    from barb.data.store import data_path, read_bars
    from barb.settings import EngineSettings

    frame, _ = read_bars(data_path("NQ", EngineSettings()))
    last = frame["trading_date"].iloc[-1]
    part = frame[frame["trading_date"] > last - pd.DateOffset(years=args.years)]
    runs = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]
    if args.arrow:
        del frame
        text = _arrow_peaks(part.reset_index(drop=True), args.years)
        print(text)
        if args.write:
            replace_section(args.write, ARROW_SECTION, text)
        return 0
    if args.layouts:
        del frame
        text = _by_layout(part.reset_index(drop=True), runs, args.years, args.only)
        print(text)
        if args.write:
            replace_section(args.write, LAYOUT_SECTION, text)
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "nq.csv"
        _plain(part, csv)
        size = csv.stat().st_size
        del frame, part
        for name, code in runs:
            start, peak, seconds, _ = _measure(code, csv, Path(tmp))
            rows.append((name, start, peak, seconds))
    lines = [
        SECTION,
        "",
        f"Command: `.venv/bin/python -m bench.import_memory --years {args.years}"
        + (" --baseline …`" if args.baseline else "`"),
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}; file: the NQ "
        f"sample's last {args.years} years as a plain CSV, {size / 1e6:.0f} MB; the import "
        "into an empty data directory, in a fresh process.",
        "",
        "| code | peak MiB | at start MiB | peak over start per CSV byte | seconds |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {name} | {peak / MIB:,.0f} | {start / MIB:,.0f} | "
            f"{(peak - start) / size:.2f} | {seconds:.0f} |"
            for name, start, peak, seconds in rows
        ),
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        replace_section(args.write, SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

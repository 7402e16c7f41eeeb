"""Peak memory of `barb data import` on a large CSV of one-minute bars, and its time.

    .venv/bin/python -m bench.import_memory [--years 18] [--baseline ../barb-old]
        [--write docs/benchmarks.md]

Writes the last ``--years`` of the NQ sample (all of it: 6.4 million bars, 350 MB) as a
plain CSV, then runs the import into an empty data directory in a fresh process, which
reports its peak resident memory (Linux's VmHWM) and its start (the memory of Python and
the libraries loaded before the file is read). With ``--baseline`` (a checkout of an
earlier commit, as in ``bench/compare_engines.py``) the same import is run on its code
first. Results go to ``docs/benchmarks.md`` under "Import memory" with ``--write``.
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

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Import memory"
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
    from barb.data.importer import import_file
    from barb.settings import EngineSettings
    start = hwm()
    began = time.perf_counter()
    import_file(Path(sys.argv[1]), "NQ", EngineSettings(data_dir=Path(sys.argv[2])))
    print(start, hwm(), time.perf_counter() - began)
    """
)


def _measure(code: Path, csv: Path, tmp: Path) -> tuple[int, int, float]:
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
    start, peak, seconds = done.stdout.split()
    return int(start), int(peak), float(seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--years", type=int, default=18)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args(argv)

    from barb.data.store import data_path, read_bars
    from barb.settings import EngineSettings

    frame, _ = read_bars(data_path("NQ", EngineSettings()))
    last = frame["trading_date"].iloc[-1]
    part = frame[frame["trading_date"] > last - pd.DateOffset(years=args.years)]
    runs = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "nq.csv"
        part[["timestamp", "open", "high", "low", "close", "volume"]].to_csv(csv, index=False)
        size = csv.stat().st_size
        del frame, part
        for name, code in runs:
            start, peak, seconds = _measure(code, csv, Path(tmp))
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

"""`barb data …`: generate the sample, import your own bars, see what is there."""

from __future__ import annotations

import time
from pathlib import Path
from typing import NoReturn

import click

from barb.data.formats import FORMATS
from barb.data.importer import import_file
from barb.data.sample import sample_symbols, write_samples
from barb.data.store import data_path, read_meta
from barb.errors import BarbError
from barb.instruments import available_instruments
from barb.settings import EngineSettings


def _settings() -> EngineSettings:
    """The settings passed as the context object (tests, the parent command), or from env."""
    found = click.get_current_context().find_object(EngineSettings)
    return found if found is not None else EngineSettings()


def _fail(exc: BaseException) -> NoReturn:
    """One line on stderr and exit status 1: the person needs the problem, not a traceback."""
    click.echo(f"Error: {' '.join(str(exc).split())}", err=True)
    raise SystemExit(1)


def _size(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.1f} MB"


@click.group()
def data() -> None:
    """Minute-bar data files: the synthetic sample, imports, and what is there."""


@data.command()
@click.option(
    "--instrument",
    "-i",
    "symbols",
    multiple=True,
    help="Instrument to generate (repeatable). Default: all that have a sample block.",
)
@click.option("--force", is_flag=True, help="Replace existing files, even imported data.")
def sample(symbols: tuple[str, ...], force: bool) -> None:
    """Generate the synthetic sample data (deterministic, 2008-01-02 to 2026-01-07)."""
    settings = _settings()
    try:
        # One instrument at a time, so that each line appears as soon as its file is written.
        for symbol in symbols or sample_symbols(settings):
            for report in write_samples([symbol], settings, force):
                meta = report.meta
                if report.written:
                    click.echo(
                        f"{report.symbol}: wrote {report.path} — {meta.rows:,} rows, "
                        f"{meta.first_date} to {meta.last_date}, {report.seconds:.1f} s, "
                        f"{_size(report.path)}"
                    )
                else:
                    click.echo(
                        f"{report.symbol}: kept {report.path} ({meta.source}, {meta.rows:,} "
                        "rows); use --force to replace it"
                    )
    except (BarbError, OSError) as exc:
        _fail(exc)


@data.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--instrument", "-i", "symbol", required=True, help="Instrument symbol, e.g. NQ.")
@click.option(
    "--timezone",
    help="Timezone of naive timestamps (IANA name). Default: the instrument's.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="Force the layout instead of detecting it from the header.",
)
def import_(file: Path, symbol: str, timezone: str | None, fmt: str | None) -> None:
    """Import 1-minute bars from FILE (CSV or Parquet) as the data of an instrument."""
    settings = _settings()
    started = time.perf_counter()
    try:
        meta = import_file(file, symbol, settings, timezone=timezone, fmt=fmt)
    except (BarbError, OSError) as exc:
        _fail(exc)
    path = data_path(meta.instrument, settings)
    click.echo(
        f"{meta.instrument}: imported {meta.rows:,} bars, {meta.first_date} to "
        f"{meta.last_date}, into {path} ({time.perf_counter() - started:.1f} s, {_size(path)})"
    )


@data.command()
@click.argument("symbol", required=False)
def info(symbol: str | None) -> None:
    """Show what data each instrument has: rows, dates, source, file size."""
    settings = _settings()
    try:
        symbols = [symbol] if symbol else available_instruments(settings)
        missing = False
        for sym in symbols:
            path = data_path(sym, settings)
            if not path.exists():
                missing = True
                click.echo(
                    f"{sym.upper()}: no data at {path}. Run `barb data sample` or "
                    f"`barb data import FILE --instrument {sym.upper()}`."
                )
                continue
            meta = read_meta(path)
            click.echo(
                f"{meta.instrument}: {meta.rows:,} rows, {meta.first_date} to {meta.last_date}, "
                f"{meta.source} ({meta.description}), {_size(path)}, {path}"
            )
    except (BarbError, OSError) as exc:
        _fail(exc)
    if symbol and missing:
        raise SystemExit(1)

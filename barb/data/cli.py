"""`barb data …`: generate the sample, import your own bars, see what is there."""

from __future__ import annotations

import time
from pathlib import Path
from typing import NoReturn

import click

from barb.data.importer import Mode, check_file, plan_write, write_checked
from barb.data.layouts import DATE_ORDERS, FORMATS, DateOrder, Stamp
from barb.data.mapped import refresh_mapped_from
from barb.data.sample import sample_symbols, write_samples
from barb.data.store import (
    DamagedData,
    data_path,
    previous_path,
    read_meta,
    restore_previous,
    write_lock,
)
from barb.errors import BarbError, DataError
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
    help="Time zone of the file's times (IANA name). Default: read from the file, or found "
    "from where the exchange's daily break and weekend sit in it.",
)
@click.option(
    "--interval", help="Bar length when not 1 minute (5m, 15m, 1h); finer timeframes are refused."
)
@click.option(
    "--stamp",
    type=click.Choice(["open", "close"]),
    help="Whether times are bar opens or bar closes (NinjaTrader). Default: detected.",
)
@click.option(
    "--date-order",
    type=click.Choice(DATE_ORDERS),
    help="Whether dates such as 03/04/2024 are month first (US) or day first. Default: read "
    "from the file's dates; asked for when they cannot tell.",
)
@click.option("--replace", "mode", flag_value="replace", help="Replace the existing data.")
@click.option("--append", "mode", flag_value="append", help="Add the file's new dates.")
@click.option(
    "--fill-volumes",
    "mode",
    flag_value="volumes",
    help="Take the file's volumes for the stored dates that have none (data that mixes "
    "dates with and without volumes); the file's bars of those dates must be the stored "
    "ones. Nothing else changes.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="Force the layout instead of detecting it.",
)
@click.option(
    "--columns",
    help="Name the columns of any other layout: timestamp=Time,open=O,high=H,low=L,close=C,"
    "volume=V (or date=…,time=… instead of timestamp).",
)
@click.option(
    "--any-level",
    is_flag=True,
    help="Import prices far from the instrument's known level (a new contract, a split), "
    "or every one a multiple of 100 ticks; without it such a file is refused as another "
    "instrument's or another unit's (cents).",
)
@click.option("--check", is_flag=True, help="Only show the validation report; write nothing.")
def import_(
    file: Path,
    symbol: str,
    timezone: str | None,
    interval: str | None,
    stamp: Stamp | None,
    date_order: DateOrder | None,
    mode: Mode | None,
    fmt: str | None,
    columns: str | None,
    any_level: bool,
    check: bool,
) -> None:
    """Check FILE (CSV, Parquet, .gz or .zip), show the report, and import its bars."""
    settings = _settings()
    started = time.perf_counter()
    try:
        checked = check_file(
            file,
            symbol,
            settings,
            timezone=timezone,
            interval=interval,
            stamp=stamp,
            fmt=fmt,
            columns=columns,
            date_order=date_order,
            progress=True,
            any_level=any_level,
        )
    except (BarbError, OSError) as exc:
        _fail(exc)
    except MemoryError:  # pyarrow's ArrowMemoryError is one too
        _fail(_out_of_memory(file))
    # The report is printed once the checks against the stored data are done too: printed
    # first, it ended "No problems that stop the import." above their refusal.
    report = checked.report
    try:
        if check:
            if not report.ok:
                click.echo(report.text())
                raise SystemExit(1)
            # The same checks against the stored data as the write, so --check refuses
            # what the import would.
            plan = plan_write(checked, settings, mode or "new")
            click.echo(report.text())
            click.echo(
                f"--check: the import would write {plan.added:,} bars"
                f"{' (nothing new)' if plan.added == 0 else ''}; nothing was written."
            )
            dropped = _dropped(data_path(checked.instrument.symbol, settings), "would be")
            if plan.added and dropped:
                click.echo(dropped)
            if plan.note:
                click.echo(plan.note)
            return
        target = data_path(checked.instrument.symbol, settings)
        # Only one generation is kept: say which data this write deletes for good (under
        # the lock, which finishes a restore killed half-way: its data is the kept file).
        with write_lock(target):
            dropped = _dropped(target, "is") if target.exists() else ""
        result = write_checked(checked, settings, mode or "new")
    except (BarbError, OSError) as exc:
        click.echo(report.text())
        _fail(exc)
    except MemoryError:
        click.echo(report.text())
        _fail(_out_of_memory(file))
    click.echo(report.text())
    meta = result.meta
    if result.cleaned:
        click.echo(result.cleaned)
    if result.added == 0 and mode == "replace":
        click.echo(
            f"{meta.instrument}: the stored data already holds exactly the file's bars; "
            f"{result.path} is unchanged, and so is the file kept from before."
        )
        return
    if result.added == 0:
        click.echo(f"{meta.instrument}: nothing new to add; {result.path} is unchanged.")
        return
    if mode == "volumes":
        click.echo(
            f"{meta.instrument}: filled in the volumes of {result.added:,} bars in "
            f"{result.path} ({time.perf_counter() - started:.1f} s)"
        )
    else:
        click.echo(
            f"{meta.instrument}: wrote {result.added:,} bars; the data now holds {meta.rows:,} "
            f"bars, {meta.first_date} to {meta.last_date}, in {result.path} "
            f"({time.perf_counter() - started:.1f} s, {_size(result.path)})"
        )
    # From the write itself, not from a kept file being there: a write over a damaged file
    # keeps nothing, and the kept file then is an older one, not the file just replaced.
    if result.kept:
        click.echo(
            f"The previous file is kept; `barb data restore {meta.instrument}` brings it back."
            + (f" {dropped}" if dropped else "")
        )
    if result.note:
        click.echo(result.note)


def _out_of_memory(file: Path) -> DataError:
    # The whole file is read before anything is written (about 5 times its size in
    # memory), so the stored data is as it was.
    return DataError(
        f"not enough memory to read it ({_size(file)}); nothing was written. Import it "
        "in parts: the first with --replace, the others with --append.",
        path=str(file),
    )


def _dropped(target: Path, verb: str) -> str:
    """The sentence naming the kept file a write over ``target`` deletes ('' if none): a
    second --replace deleted the history the first had kept, while saying it was kept."""
    kept = previous_path(target)
    if not kept.exists() or not target.exists():
        return ""
    try:
        read_meta(target)
    except DamagedData:
        return ""  # a damaged file is replaced without being kept: the kept one stays
    try:
        old = read_meta(kept)
    except DamagedData as exc:
        reason = exc.reason
        return f"The kept file {kept.name}, which cannot be read ({reason}), {verb} deleted."
    return (
        f"The data kept from before it ({old.rows:,} bars, {old.first_date} to "
        f"{old.last_date}) {verb} deleted."
    )


@data.command()
@click.argument("symbol")
def restore(symbol: str) -> None:
    """Bring back the file an import replaced (run it again to undo)."""
    settings = _settings()
    try:
        # The Arrow copy made now, as an import makes it: left to the first question, it was
        # made in a worker, under that worker's memory ceiling.
        meta = restore_previous(
            data_path(symbol, settings), lambda path: refresh_mapped_from(path, settings)
        )
    except (BarbError, OSError) as exc:
        _fail(exc)
    click.echo(
        f"{meta.instrument}: restored {meta.source} data ({meta.description}), {meta.rows:,} "
        f"bars, {meta.first_date} to {meta.last_date}."
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
            try:
                meta = read_meta(path)
            except DamagedData as exc:
                missing = True
                click.echo(
                    f"{sym.upper()}: {path} cannot be read ({exc.reason}). "
                    f"`barb data import FILE -i {sym.upper()} --replace` writes a file over it"
                    + (
                        f"; `barb data restore {sym.upper()}` brings back the previous one."
                        if previous_path(path).exists()
                        else "."
                    )
                )
                continue
            interval = f", {meta.interval_minutes}-minute bars" if meta.interval_minutes > 1 else ""
            click.echo(
                f"{meta.instrument}: {meta.rows:,} rows, {meta.first_date} to {meta.last_date}, "
                f"{meta.source} ({meta.description}){interval}, {_size(path)}, {path}"
            )
            if previous_path(path).exists():
                try:
                    kept = read_meta(previous_path(path))
                except DamagedData as exc:
                    click.echo(
                        f"  previous file kept: {previous_path(path).name} cannot be read "
                        f"({exc.reason})"
                    )
                    continue
                click.echo(
                    f"  previous file kept: {kept.source} ({kept.description}), "
                    f"{kept.first_date} to {kept.last_date}; `barb data restore {sym.upper()}`"
                )
    except (BarbError, OSError) as exc:
        _fail(exc)
    if symbol and missing:
        raise SystemExit(1)

"""The `barb` command line: `barb query`, `barb data …` (and, later, `barb chat` / `barb bot`)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from barb.i18n import DEFAULT, LANGUAGES

if TYPE_CHECKING:
    import pandas as pd

    from barb.result import Result

PREVIEW_ROWS = 10


class CommandGroup(click.Group):
    """A group some of whose commands are imported only when asked for: the assistant's
    (``barb bot``, ``chat``, ``db``…) load Telegram, SQLAlchemy and Alembic, and every
    ``barb query`` or ``barb data import`` took 4.0 s to start instead of 1.6 s."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy: dict[str, str] = {}

    def add_lazy_command(self, name: str, target: str) -> None:
        """``target`` is ``module:attribute``, imported when ``name`` is run or listed."""
        self._lazy[name] = target

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self._lazy.get(cmd_name)
        if target is not None and cmd_name not in self.commands:
            module, attribute = target.split(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(cls=CommandGroup)
def main() -> None:
    """Barb: ask questions of historical futures bars."""


# Lazy as the assistant's commands: `barb bot` and `barb worker` need none of the importer's
# pandas and pyarrow to name a wrong setting.
main.add_lazy_command("data", "barb.data.cli:data")


@main.command()
@click.argument("query_json")
@click.option("--instrument", "-i", default="NQ", show_default=True, help="Instrument symbol.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole Result as JSON.")
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the table (or the rows behind a number) to this CSV file.",
)
@click.option(
    "--chart",
    "chart_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the chart that proves the answer to this PNG file.",
)
@click.option(
    "--lang",
    "language",
    type=click.Choice(LANGUAGES),
    default=DEFAULT,
    show_default=True,
    help=(
        "The chat language the CSV and the chart are made for, as the bot sends them: Barb's "
        "own words in it, and for ru a CSV that Russian-locale Excel opens into columns "
        "(';' between fields, ',' as the decimal mark). What the model reads stays English."
    ),
)
def query(
    query_json: str,
    instrument: str,
    as_json: bool,
    csv_path: Path | None,
    chart_path: Path | None,
    language: str,
) -> None:
    """Run a Barb Script query: prints what the model would see and the first rows.

    \b
    barb query '{"from": "daily", "select": "mean(range)"}' --csv out.csv --lang ru
    writes the file a Russian chat gets beside the answer.
    """
    from barb.bar_labels import as_labelled
    from barb.errors import QueryError, QueryTimeout
    from barb.export import csv_bytes
    from barb.interpreter import execute
    from barb.script.limits import default_limits, load_query_text, time_limit
    from barb.summary_text import render_summary

    try:
        raw = load_query_text(query_json)
    except QueryError as exc:
        _fail(exc.to_dict())
    limits = default_limits()
    try:
        # No worker to kill here: the same time limit as the bot's, by an alarm.
        with time_limit(limits.query_timeout_s):
            result = execute(raw, instrument)
    except QueryTimeout as exc:
        _fail(exc.to_dict())
    if as_json or not result.ok:
        payload = result.to_dict()
        if result.ok:
            payload["summary_text"] = render_summary(result)
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        click.echo(render_summary(result))
        shown = result.table if result.table is not None else result.source_rows
        if shown is not None and result.metadata is not None:  # as the CSV lists them
            shown = as_labelled(shown, result.metadata.timeframe)
        if shown is not None and len(shown):
            label = "table" if result.table is not None else "rows behind the number"
            click.echo(f"\n{label} (first {min(PREVIEW_ROWS, len(shown))} of {len(shown):,}):")
            click.echo(preview_text(shown.head(PREVIEW_ROWS)))
    if not result.ok:
        sys.exit(1)
    if csv_path is not None:
        _write_file(csv_path, csv_bytes(result, language), "CSV")
        click.echo(f"\nCSV written to {csv_path}")
    if chart_path is not None:
        from barb.charts import render_chart

        png = render_chart(result, language=language)
        if png is None:
            click.echo(f"\nNo chart: {_no_chart_reason(result)}")
        else:
            _write_file(chart_path, png, "chart")
            click.echo(f"\nChart written to {chart_path}")


def preview_text(rows: pd.DataFrame) -> str:
    """The first rows as the summary writes them: no value as "n/a", a column of whole
    numbers without ".0". A streak's first row, which has no bar before it, read
    "run NaN" beside runs of "1.0", "2.0"."""
    import pandas as pd

    shown = rows.copy()
    for name in shown.columns:
        column = shown[name]
        known = column.dropna()
        if pd.api.types.is_float_dtype(column) and len(known) and (known % 1 == 0).all():
            shown[name] = [f"{v:.0f}" if v == v else "n/a" for v in column]
    return shown.to_string(index=False, max_colwidth=24, na_rep="n/a")


def _no_chart_reason(result: Result) -> str:
    """Why ``render_chart`` drew nothing, as far as the result says."""
    from barb.charts.many_groups import too_many_to_draw  # loaded with the chart already

    too_many = too_many_to_draw(result)
    if too_many is not None:
        return too_many.removeprefix("No chart: ")
    shown = result.table if result.table is not None else result.source_rows
    if shown is None or not len(shown):
        return "the result has no rows to draw."
    return "none of the charts proves this kind of result (the rows are in the CSV)."


def _write_file(path: Path, data: bytes, what: str) -> None:
    """Write the ``what`` (the CSV, the chart) to ``path``. A disk full (or a file size
    limit, or a path that cannot be written) is one error value and exit status 1, not a
    traceback, and nothing of the file is left (``write_whole``)."""
    from barb.file_writes import why_not_written, write_whole

    exc = write_whole(path, data)
    if exc is not None:
        message = (
            f"Could not write the {what} to {path}: {why_not_written(exc)}. "
            "The result above is complete."
        )
        _fail({"error": True, "error_type": "WriteFailed", "message": message})


def _fail(error: dict[str, Any]) -> NoReturn:
    click.echo(json.dumps(error, indent=2, ensure_ascii=False))
    sys.exit(1)

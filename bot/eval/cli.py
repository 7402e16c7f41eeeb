"""`barb eval`: the question set through the real assistant, scored, with reports."""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from barb.data.store import data_path, read_meta
from barb.errors import BarbError
from barb.settings import default_settings
from bot.bot_cli import NO_KEY_HINT
from bot.eval.question_set import (
    DEFAULT_QUESTIONS,
    EvalQuestion,
    QuestionSetError,
    load_questions,
)
from bot.eval.reference_model import ReferenceProvider
from bot.eval.report import EvalReport, print_table, write_reports
from bot.eval.runner import EvalRunner, QuestionResult
from bot.llm.errors import ConfigError
from bot.llm.provider import LLMProvider
from bot.llm.settings import LLMSettings, make_provider

SCRIPTED = "scripted"


def _provider(name: str | None, model: str | None) -> LLMProvider:
    if name == SCRIPTED:
        return ReferenceProvider()
    overrides: dict[str, str] = {}
    if name:
        overrides["provider"] = name
    if model:
        overrides["model"] = model
    try:
        return make_provider(LLMSettings(**overrides))
    except (ConfigError, ValueError) as exc:
        click.echo(f"{exc}\n\n{NO_KEY_HINT}", err=True)
        sys.exit(2)


def _sample_problem(symbols: set[str]) -> str | None:
    """Why the data cannot answer the set, if it cannot: the answers are the sample's."""
    settings = default_settings()
    for symbol in sorted(symbols):
        path = data_path(symbol, settings)
        try:
            source = read_meta(path).source
        except (OSError, BarbError):
            return f"No data for {symbol} in {path.parent}: run `barb data sample` first."
        if source != "synthetic":
            return (
                f"The data for {symbol} in {path.parent} is {source} data, but the eval's "
                "expected answers are computed on the synthetic sample: point BARB_DATA_DIR "
                "at a folder where `barb data sample` has written NQ, ES and CL."
            )
    return None


def _questions(path: Path, only: tuple[str, ...]) -> list[EvalQuestion]:
    """The questions to ask, or exit 2 saying why they cannot be asked here."""
    try:
        questions = load_questions(path)
    except QuestionSetError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)
    if only:
        questions = [q for q in questions if q.id in only or set(q.tags) & set(only)]
        if not questions:
            click.echo(f"No question has the id or tag {', '.join(only)}.", err=True)
            sys.exit(2)
    problem = _sample_problem({q.instrument for q in questions} | {"NQ"})
    if problem is not None:
        click.echo(problem, err=True)
        sys.exit(2)
    return questions


async def _run(
    provider: LLMProvider, questions: list[EvalQuestion], questions_file: Path, console: Console
) -> EvalReport:
    started = dt.datetime.now(dt.UTC)
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("eval", total=len(questions))

        def advance(result: QuestionResult) -> None:
            progress.update(task, advance=1, description=f"{result.id}: {result.status}")

        results = await EvalRunner(provider).run(questions, progress=advance)
    close = getattr(provider, "aclose", None)
    if close is not None:
        await close()
    return EvalReport(
        provider=provider.name,
        model=provider.model,
        questions_file=str(questions_file),
        started_at=started,
        results=results,
    )


@click.command(name="eval")
@click.option(
    "--provider",
    help="scripted (the reference queries, no key: what CI runs), openai or anthropic; "
    "default: as configured (BARB_LLM_PROVIDER or whichever key is set).",
)
@click.option("--model", help="The model to evaluate (default: as configured).")
@click.option(
    "--questions",
    "questions_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=DEFAULT_QUESTIONS,
    show_default="the shipped set",
    help="A question file in the shipped set's format.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("out/eval"),
    show_default=True,
    help="Where eval_report.json and eval_report.md are written.",
)
@click.option("--only", multiple=True, help="Run only these question ids or tags (repeatable).")
def eval_command(
    provider: str | None,
    model: str | None,
    questions_file: Path,
    out_dir: Path,
    only: tuple[str, ...],
) -> None:
    """Score a model on Barb's question set with known answers (exit 1 below 100%)."""
    console = Console(stderr=True)
    questions = _questions(questions_file, only)
    chosen = _provider(provider.strip().lower() if provider else None, model)
    report = asyncio.run(_run(chosen, questions, questions_file, console))
    # A pipe or a log file gets a wide table rather than rich's 80 columns.
    print_table(report, Console() if sys.stdout.isatty() else Console(width=170))
    json_path, md_path = write_reports(report, out_dir)
    click.echo(report.summary_line())
    click.echo(f"Reports: {json_path}, {md_path}")
    totals = report.totals()
    sys.exit(0 if totals["ran"] and totals["passed"] == totals["ran"] else 1)

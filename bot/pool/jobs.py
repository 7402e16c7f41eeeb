"""One query job: run the engine, render the proof. Executed inside a worker process."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
import uuid
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from barb import execute, render_summary
from barb.errors import (
    QueryError,
    QueryTimeout,
    out_of_memory,
    size_text,
    stopped_from_outside,
)
from barb.export import csv_bytes, csv_rows, whole_rows
from barb.interpreter import check
from barb.process_memory import memory_ceiling
from barb.result import Result
from barb.script.limits import check_query_value, time_limit

log = logging.getLogger(__name__)

PREVIEW_ROWS = 20
#: The error type of a check that failed for a reason that is not the query's
#: (``unchecked_outcome``): the plan is shown, and its run judges the query.
CHECK_FAILED = "CheckFailed"
#: Longest a chart may take to draw: past it the answer and its CSV go without one.
CHART_BUDGET_S = 8.0
#: Of the job's time limit, what is kept after a stopped chart to send the outcome back.
SEND_MARGIN_S = 1.5


class QueryJob(BaseModel):
    # A field this code does not know is refused, not ignored: a job of a newer release
    # reaching a worker of an older one (the bot and the workers deployed apart) would
    # otherwise be answered without what the field asks (a language, a check), a number
    # for another question; refused, the person reads one sentence (``run_job_json``).
    model_config = ConfigDict(extra="forbid")

    query: dict[str, Any]
    instrument: str = "NQ"
    chart: bool = True
    csv: bool = True
    # The person's language: the chart's words and the caption's headline.
    language: str = "en"
    # The runner's time limit for the whole job (the engine, the CSV, the chart), set by the
    # runner: a slow chart is given up in time for the answer to arrive without it.
    time_limit_s: float | None = None
    # Only check that the query can run (``barb.interpreter.check``): bound and planned, no
    # bar read. The outcome is ok with nothing in it, or the error the run would have given.
    check_only: bool = False
    # The job's own name across restarts of the bot, for a run of a confirmed plan, a query
    # the model runs without a plan, or a /query: the same question, call (or "at-once",
    # "query") and query give the same key (``run_key``). A queue runner names
    # the job it sends by it in Redis, so that the run resumed after a kill of the bot
    # takes the job already queued, running or answered instead of computing it again
    # (``CeleryRunner``); the in-process pool has nothing to find and ignores it. Never
    # sent to a worker (``exclude``): a worker of an older release refuses unknown fields.
    key: str | None = Field(default=None, exclude=True)


class QueryOutcome(BaseModel):
    """What crosses back from the worker: small, picklable, and JSON with the chart and CSV
    bytes as base64 (``model_dump(mode="json")`` / ``model_validate``) for Celery workers."""

    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")

    ok: bool
    summary_text: str
    error: dict[str, Any] | None = None
    # Result.to_dict() without the full table/source rows (they travel as CSV bytes).
    result: dict[str, Any] = Field(default_factory=dict)
    preview: list[dict[str, Any]] = Field(default_factory=list)
    rows: int = 0
    chart_png: bytes | None = None
    chart_name: str | None = None
    # The number the chart proves, in one line of the person's language (the caption).
    headline: str | None = None
    csv: bytes | None = None
    csv_name: str | None = None
    csv_rows: int = 0  # the file's own rows: a ranking's first whole group is one more
    # The rows the file was cut from (the first 50,000 of 1,774,380); 0 when it is whole.
    csv_cut_from: int = 0
    warnings: list[str] = Field(default_factory=list)
    # What the chart calls the result's columns in the person's language, where that is
    # not the engine's name ("mean_range": "средний диапазон"): /query's text says them.
    names: dict[str, str] = Field(default_factory=dict)
    # The same in English, for the engine's notes, which are English in every chat:
    # "mean_range is in points over rows…" reached the person with the engine's name.
    note_names: dict[str, str] = Field(default_factory=dict)
    # The columns that are shares of rows ("share") or percents ("%"), which /query's text
    # writes as percents, as the chart does.
    units: dict[str, str] = Field(default_factory=dict)
    # A group key's values the chart writes as words ("Mon": "Пн", dayofweek "2": "Wed").
    key_words: dict[str, dict[str, str]] = Field(default_factory=dict)
    # A scalar's or dict's answers as the headline writes them, unit and all ("138.34
    # points", «10:12», «53,7 %»): /query's text said bare numbers.
    answers: dict[str, str] = Field(default_factory=dict)


def run_key(question_id: str, call_id: str, job: QueryJob) -> str:
    """The key of ``job``, run for the call ``call_id`` of the question ``question_id`` (a
    confirmed plan's query): the same at every resumption of that run, and another for
    any other job, even under the same ids (a provider that numbers its calls afresh each
    turn), since it names the job's every field. Example: ``"q-3f2a….call_1.9c1d0e57a4b2"``."""
    digest = hashlib.sha256(json.dumps(job.model_dump(mode="json"), sort_keys=True).encode())
    return f"{question_id}.{call_id}.{digest.hexdigest()[:16]}"


def failed_outcome(error_type: str, message: str, reference: str | None = None) -> QueryOutcome:
    """A job that did not produce an answer, in the words the person reads; ``reference`` is
    the log line's, which the person can quote."""
    error = {"error": True, "error_type": error_type, "message": message, "step": "execute"}
    if reference is not None:
        error["reference"] = reference
    return QueryOutcome(ok=False, summary_text=f"Error ({error_type}): {message}", error=error)


def timeout_outcome(timeout_s: float) -> QueryOutcome:
    return failed_outcome(
        "QueryTimeout",
        f"The query took longer than {timeout_s:.0f} seconds and was stopped; "
        "try a shorter period or a longer timeframe.",
    )


def killed_outcome(reference: str) -> QueryOutcome:
    """A query whose worker the system killed mid-run (SIGKILL: on a machine short of memory,
    the kernel's OOM killer takes the largest process, most often the worker of the
    biggest query). Not Barb's bug and not the query's error: a smaller query most likely
    runs."""
    return failed_outcome(
        "WorkerKilled",
        "The query's worker was stopped by the system, most likely because the machine ran "
        f"out of memory (reference {reference}); try a shorter period or a longer timeframe.",
        reference,
    )


def unchecked_outcome(exc: Exception) -> QueryOutcome:
    """A check that failed for a reason of Barb's own or of the data (``KeyError`` in the
    planner, a damaged file): it refuses nothing, and the bot logs it by the exception's
    type alone (``CHECK_FAILED``, ``"exception": "KeyError"``), never by its message, which
    may quote the query (``KeyError('rnage')``)."""
    outcome = failed_outcome(CHECK_FAILED, "The query could not be checked; its run will say.")
    assert outcome.error is not None
    outcome.error["exception"] = type(exc).__name__
    return outcome


def refuse_unbounded(job: QueryJob) -> QueryOutcome | None:
    """The input limits, checked in the caller's process before a job is sent anywhere."""
    try:
        check_query_value(job.query)
    except QueryError as exc:
        text = render_summary(Result(query={}, error=exc))
        return QueryOutcome(ok=False, summary_text=text, error=exc.to_dict())
    return None


def out_of_memory_outcome(ceiling_bytes: int | None) -> QueryOutcome:
    """A query past its worker's memory ceiling, in the sentence the model can act on."""
    error = out_of_memory(ceiling_bytes)
    text = render_summary(Result(query={}, error=error))
    return QueryOutcome(ok=False, summary_text=text, error=error.to_dict())


def ran_out_of_memory(outcome: QueryOutcome) -> bool:
    return outcome.error is not None and outcome.error.get("error_type") == "OutOfMemory"


def run_query_job(job: QueryJob) -> QueryOutcome:
    """Run one query and build its proof; never raises for a bad query. A query past the
    process's memory ceiling (``barb.process_memory.set_memory_ceiling``), in the engine or
    in its CSV, answers with ``out_of_memory_outcome``."""
    started = time.monotonic()
    try:
        return _run(job, started)
    except MemoryError:
        log.warning("query ran out of memory building its proof: %r", job.query)
        return out_of_memory_outcome(memory_ceiling())


def _checked(job: QueryJob) -> QueryOutcome:
    """A ``check_only`` job: ok with nothing in it, the error the run would have given, or
    ``unchecked_outcome`` if the check failed for a reason that is not the query's."""
    try:
        refused = check(job.query, job.instrument)
    except Exception as exc:  # MemoryError too: a check builds no bar, its run will say
        if stopped_from_outside(exc):  # a worker's time limit: its worker says so
            raise
        return unchecked_outcome(exc)
    if refused is None:
        return QueryOutcome(ok=True, summary_text="")
    assert refused.error is not None
    error = refused.error.to_dict()
    return QueryOutcome(ok=False, summary_text=render_summary(refused), error=error)


def _run(job: QueryJob, started: float) -> QueryOutcome:
    if job.check_only:
        return _checked(job)
    result = execute(job.query, job.instrument)
    summary_text = render_summary(result)
    if not result.ok:
        assert result.error is not None
        return QueryOutcome(ok=False, summary_text=summary_text, error=result.error.to_dict())
    # A table's source rows are the period's closes its chart draws a few signals on (up to
    # MAX_EVENT_CLOSES bars, barb.stages), not sent: made JSON to be dropped here, a year of
    # 15-minute closes took 0.7 s.
    sent = result if result.table is None else replace(result, source_rows=None)
    payload = sent.to_dict()
    shown = payload.pop("table") or payload.pop("source_rows", None) or []
    payload.pop("source_rows", None)
    outcome = QueryOutcome(
        ok=True,
        summary_text=summary_text,
        result=payload,
        preview=shown[:PREVIEW_ROWS],
        # The true count, not the rows kept for display (a huge table is cut).
        rows=payload["summary"].get("rows") or payload["metadata"]["rows_matched"],
        warnings=list(result.metadata.warnings) if result.metadata else [],
    )
    if job.csv:
        outcome.csv = csv_bytes(result, job.language) or None
        outcome.csv_rows = csv_rows(result) if outcome.csv else 0
        whole = whole_rows(result) if outcome.csv else 0
        outcome.csv_cut_from = whole if whole > outcome.csv_rows else 0
        # A file cut short says so in its name (a spreadsheet keeps the name, not the
        # caption), its rows all data still.
        cut = (outcome.csv_rows, whole) if outcome.csv_cut_from else None
        from barb.charts.file_names import csv_filename  # loads the charts' words

        outcome.csv_name = csv_filename(result, cut, job.language)
    budget = chart_budget(job, started)
    try:
        from barb.charts import chart_headline, render_answer
        from barb.charts.answers import answer_values
        from barb.charts.columns import shown_names, shown_units
        from barb.charts.file_names import chart_filename
        from barb.charts.grouped import key_words
        from barb.charts.words import words_for

        with _chart_time_limit(budget):
            # The chart's names for the columns, for /query's text in the same words.
            outcome.names = shown_names(result, words_for(job.language))
            outcome.note_names = shown_names(result, words_for("en"))
            outcome.units = shown_units(result)
            outcome.key_words = key_words(result, words_for(job.language), PREVIEW_ROWS)
            outcome.answers = answer_values(result, words_for(job.language))
            if job.chart:
                # The headline once, for both.
                chart = render_answer(result, language=job.language)
                outcome.chart_png = chart.png
                outcome.chart_name = chart_filename(result, job.language) if chart.png else None
                outcome.headline = chart.headline
                if chart.note:
                    _no_chart(outcome, chart.note)
            else:  # no chart, the same headline: the answer's first line
                outcome.headline = chart_headline(result, job.language)
    except QueryTimeout:  # the answer and its CSV are whole: they go without the chart
        _chart_too_slow(job, outcome, budget)
    except MemoryError:  # past the worker's ceiling: the answer and its CSV are whole
        log.warning("chart ran out of memory, left out for %r", job.query)
        _spend()
        ceiling = memory_ceiling()
        has = "there is" if ceiling is None else f"this worker has ({size_text(ceiling)})"
        note = (
            f"No chart: drawing it needed more memory than {has}; the numbers and the CSV "
            "are complete."
        )
        if job.chart:
            _no_chart(outcome, note)
    except Exception as exc:  # a drawing bug must not lose the answer
        if stopped_from_outside(exc):
            # The worker's own time limit (Celery's soft limit) reached in the chart: the
            # chart is stopped as its budget would have stopped it, and the whole answer
            # goes back in the moments before the hard limit. It was taken for a drawing
            # bug: logged with a traceback, "The chart could not be drawn (reference …)".
            _chart_too_slow(job, outcome, budget)
            return outcome
        ref = uuid.uuid4().hex[:8]
        log.error("chart failed (ref %s) for %r", ref, job.query, exc_info=exc)
        outcome.warnings.append(f"The chart could not be drawn (reference {ref}).")
    return outcome


def _chart_too_slow(job: QueryJob, outcome: QueryOutcome, budget: float) -> None:
    log.warning("chart over its %.1fs, left out for %r", budget, job.query)
    if job.chart:
        _no_chart(
            outcome,
            f"No chart: drawing it took longer than the {budget:.1f} s it had; the "
            "numbers and the CSV are complete.",
        )
    # Charts off: only the headline is lost (the caption is then the summary's first
    # line); the model was told "No chart: drawing it took longer…" of a chart nobody
    # asked for, and could pass it on.


#: Set in a worker whose chart ran out of memory: its heap may keep what the chart grew,
#: so the bot's pool replaces it before its next job (``worker_spent``).
_spent = False


def _spend() -> None:
    global _spent
    _spent = True


def worker_spent() -> bool:
    """Whether this process ran out of memory drawing a chart (the answer went without it)
    and should give way to a fresh worker before its next job."""
    return _spent


def chart_budget(job: QueryJob, started: float) -> float:
    """The seconds the chart may take: ``CHART_BUDGET_S``, or less when less is left of the
    job's time limit (sending the outcome back needs ``SEND_MARGIN_S`` of it)."""
    if job.time_limit_s is None:
        return CHART_BUDGET_S
    left = started + job.time_limit_s - SEND_MARGIN_S - time.monotonic()
    # A timer of 0 would never fire: a chart with no time left is stopped at once.
    return max(min(CHART_BUDGET_S, left), 0.001)


def _chart_time_limit(seconds: float) -> contextlib.AbstractContextManager[None]:
    """The chart's own time limit, where an alarm can stop it (the main thread of a
    worker); a chart drawn in a thread (``InlineRunner``) is not limited."""
    if threading.current_thread() is threading.main_thread():
        return time_limit(seconds)
    return contextlib.nullcontext()


def _no_chart(outcome: QueryOutcome, note: str) -> None:
    """Say why the answer comes without a chart, to the model (the summary's last line, so
    that it does not point to a chart) and in the warnings."""
    outcome.chart_png = outcome.chart_name = None
    outcome.summary_text = f"{outcome.summary_text}\n{note}"
    outcome.warnings.append(note)

"""Every flow of seed 000 §5 and seed 004, end to end through the loop, engine and storage."""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import json

import pytest
from small_bars import small_bars

from barb import execute
from barb.data.store import DataMeta, data_path, read_meta, write_bars
from barb.settings import EngineSettings
from bot.assistant.orchestrator import Assistant, AssistantSettings
from bot.assistant.replies import Asker
from bot.llm.errors import ProviderUnavailable
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn
from bot.pool.jobs import QueryJob, QueryOutcome, failed_outcome
from bot.pool.runner import InlineRunner
from bot.texts import t

ALICE = Asker(chat_id=100, user_id=1)

WEEKDAY_RANGE = {
    "session": "RTH",
    "from": "daily",
    "map": {"weekday": "dayname()"},
    "group_by": "weekday",
    "select": "mean(range)",
}


def tool_results(request) -> list:
    return [r for m in request.messages if m.role == "tool" for r in m.tool_results]


async def test_chitchat_needs_no_tool(make_assistant) -> None:
    assistant = make_assistant(text("Привет! Чем помочь?"))
    reply = await assistant.ask(ALICE, "привет")
    assert reply.text == "Привет! Чем помочь?"
    assert reply.pending is None and reply.proofs == []
    request = assistant.provider.requests[0]
    assert "Current instrument: NQ" in request.system
    assert "Data: 2008-01-02 to 2026-01-07" in request.system  # read from the data
    assert len(request.system) / 4 < 700  # tokens, 4 characters each
    assert {t.name for t in request.tools} >= {
        "execute_query",
        "get_query_reference",
        "ask_user_clarification",
        "get_concept",
    }


async def test_the_plan_runs_on_the_instrument_it_was_shown_with(make_assistant, store) -> None:
    """Switching /instrument between the plan and Run does not switch the data."""
    assistant = make_assistant(
        tool_call("execute_query", query={"session": "RTH", "select": "count()"}),
        text("Done."),
    )
    reply = await assistant.ask(ALICE, "how many days?")
    assert reply.pending.query["instrument"] == "NQ"
    await store.chats.set_instrument(ALICE.chat_id, "ES")
    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    [proof] = done.proofs
    assert proof.query["instrument"] == "NQ"
    assert proof.metadata["instrument"] == "NQ"


async def test_concept_question_uses_the_lookup(make_assistant) -> None:
    assistant = make_assistant(
        tool_call("get_concept", name="inside day"),
        text("An inside day is a bar inside the previous bar's range."),
    )
    reply = await assistant.ask(ALICE, "what is an inside day?")
    assert reply.text.startswith("An inside day")
    [result] = tool_results(assistant.provider.requests[1])
    assert "high < prev(high) and low > prev(low)" in result.content


async def test_analytical_question_plan_run_answer(make_assistant, store) -> None:
    assistant = make_assistant(
        tool_call("get_query_reference"),
        turn(
            "I'll compute the average RTH range by weekday over all data.",
            tool_call("execute_query", query=WEEKDAY_RANGE),
        ),
        text("Friday is the most volatile day."),
    )
    reply = await assistant.ask(ALICE, "average RTH range by weekday?")
    assert reply.pending is not None and reply.pending.kind == "confirm"
    assert reply.pending.text.startswith("I'll compute")
    assert "Compute: average range, by weekday" in reply.pending.plan
    assert "session RTH" in reply.pending.plan
    assert reply.text is None and reply.proofs == []

    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    assert done.text == "Friday is the most volatile day."
    [proof] = done.proofs
    assert proof.chart_png[:8] == b"\x89PNG\r\n\x1a\n"
    csv_lines = proof.csv.decode("utf-8-sig").splitlines()
    assert csv_lines[0] == "weekday,mean_range,source"  # the data is named in the file
    engine = execute(WEEKDAY_RANGE, "NQ")
    assert [float(line.split(",")[1]) for line in csv_lines[1:]] == pytest.approx(
        engine.table["mean_range"].tolist(), rel=5e-6
    )
    # The model saw the summary, not rows.
    [_, result] = tool_results(assistant.provider.requests[2])
    assert result.content.startswith("Result: 5 groups by weekday")
    assert result.content == proof.summary_text
    action = await store.pending.get(reply.pending.id)
    assert action.status == "done"


async def test_cancel_tells_the_model_and_ends_briefly(make_assistant, store) -> None:
    assistant = make_assistant(
        turn("Computing the average range.", tool_call("execute_query", query=WEEKDAY_RANGE)),
        text("OK, not running it."),
    )
    reply = await assistant.ask(ALICE, "average range by weekday")
    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=False)
    assert done.text == "OK, not running it."
    assert done.proofs == []
    last = assistant.provider.requests[-1]
    assert last.tools == []  # a short reply, no more tools
    assert "pressed Cancel" in tool_results(last)[-1].content
    assert (await store.pending.get(reply.pending.id)).status == "cancelled"
    # Pressing Run afterwards does nothing.
    again = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    assert again.text is None and again.proofs == []


async def test_a_blank_answer_to_a_cancel_says_cancelled(make_assistant) -> None:
    """The plan already reads "Cancelled."; a model that answers the Cancel with nothing
    had the person read "please ask again" (r48a), with nothing to ask."""
    assistant = make_assistant(
        turn("Computing.", tool_call("execute_query", query=WEEKDAY_RANGE)), text(" ")
    )
    reply = await assistant.ask(ALICE, "average range by weekday")
    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=False)
    assert done.text == t("cancelled", "en") == "Cancelled."


async def test_new_message_while_pending_declines_it(make_assistant, store) -> None:
    assistant = make_assistant(
        turn("Computing.", tool_call("execute_query", query=WEEKDAY_RANGE)),
        text("Hello again."),
    )
    first = await assistant.ask(ALICE, "average range by weekday")
    second = await assistant.ask(ALICE, "actually, never mind. hi")
    assert second.text == "Hello again."
    assert (await store.pending.get(first.pending.id)).status == "declined"
    rows = await store.transcript.question(ALICE.chat_id, first.question_id)
    declined = [r for r in rows if r.role == "tool"]
    assert "instead of confirming" in declined[0].model_summary


async def test_error_is_fixed_once_then_explained(make_assistant) -> None:
    """Errors only the data can show (a closed day) come after Run: the fix is shown again,
    marked, and a second failure is explained in words."""
    christmas = {"session": "RTH", "from": "daily", "period": "2025-12-25", "select": "count()"}
    new_year = {**christmas, "period": "2026-01-01"}
    assistant = make_assistant(
        turn("Computing.", tool_call("execute_query", query=christmas)),
        tool_call("execute_query", query=new_year),
        text("Sorry, both days were holidays: the market was closed."),
    )
    reply = await assistant.ask(ALICE, "how many days on Christmas?")
    fix = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    # The fix changes the period: shown again, marked, before it runs.
    assert fix.pending is not None and fix.pending.query == {"instrument": "NQ", **new_year}
    assert fix.pending.changed == ["period"]
    assert "Changed after the error (period)" in fix.pending.plan
    assert "✎ Period: 2026-01-01" in fix.pending.plan
    done = await assistant.resume(fix.pending.id, ALICE.user_id, run=True)
    assert done.text.startswith("Sorry")
    requests = assistant.provider.requests
    first_error = tool_results(requests[1])[-1]
    assert first_error.is_error and "2025-12-25 is not a trading date" in first_error.content
    second_error = tool_results(requests[2])[-1]
    assert "Do not retry" in second_error.content
    assert requests[2].tools == []  # the second failure must be explained, not retried


# The 5 biggest daily drops of 2025; a change of its order or row limit gives other days.
DROPS = {
    "session": "RTH",
    "from": "daily",
    "period": "2025",
    "map": {"chg_pct": "(close - prev(close)) / prev(close) * 100"},
    "sort": "chg_pct asc",
    "limit": 5,
}


def fail_first_run(monkeypatch, assistant: Assistant) -> list[dict]:
    """The first run fails with an engine error (the gate's decision depends only on the
    failed query and its fix); the queries the engine was given, in order."""
    ran: list[dict] = []
    run = assistant.runner.run

    async def failing(job: QueryJob) -> QueryOutcome:
        ran.append(job.query)
        if len(ran) == 1:
            return failed_outcome("QueryError", "Column 'chg_pct' could not be computed.")
        return await run(job)

    monkeypatch.setattr(assistant.runner, "run", failing)
    return ran


@pytest.mark.parametrize(
    "fix",
    [
        {**DROPS, "sort": "chg_pct desc", "limit": 20},  # the 20 biggest gains
        {k: v for k, v in DROPS.items() if k != "limit"},  # every day
        {**DROPS, "then": {"sort": "chg_pct desc", "limit": 1}},
    ],
)
async def test_a_fix_that_changes_the_order_or_the_rows_is_a_new_plan(
    make_assistant, monkeypatch, fix
) -> None:
    """p48e: "5 biggest drops" confirmed; after a run error the model's fix changed only the
    sort and the limit, ran at once, and the person read the 20 biggest gains under "what it
    computes is what you confirmed". Any change to what the person gets is a new plan."""
    assistant = make_assistant(
        turn("The 5 biggest daily drops of 2025.", tool_call("execute_query", query=DROPS)),
        turn("Retrying.", tool_call("execute_query", query=fix)),
        text("Here are the days."),
    )
    ran = fail_first_run(monkeypatch, assistant)
    reply = await assistant.ask(ALICE, "5 biggest drops 2025")
    again = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    assert ran == [{"instrument": "NQ", **DROPS}]  # the fix did not run unseen
    assert again.pending is not None and again.pending.query == {"instrument": "NQ", **fix}
    changed = ["aggregates", "order"] if "then" in fix else ["order"]
    assert again.pending.changed == changed
    assert "Changed after the error (" in again.pending.plan
    done = await assistant.resume(again.pending.id, ALICE.user_id, run=True)
    assert ran[-1] == {"instrument": "NQ", **fix}
    assert "what you confirmed" not in done.text


async def test_a_fix_written_differently_runs_at_once_and_says_so_plainly(
    make_assistant, monkeypatch
) -> None:
    """The confirmed query itself, respelled, runs without a new plan; the note names no raw
    field ("fixed the query's limit, sort", «limit, sort»)."""
    respelled = {
        **DROPS,
        "session": "rth",
        "sort": "chg_pct ASC",
        "map": {"chg_pct": "( close - prev( close ) ) / prev(close) * 100"},
    }
    assistant = make_assistant(
        turn("The 5 biggest daily drops of 2025.", tool_call("execute_query", query=DROPS)),
        turn("Retrying.", tool_call("execute_query", query=respelled)),
        text("Here are the days."),
    )
    ran = fail_first_run(monkeypatch, assistant)
    reply = await assistant.ask(ALICE, "5 biggest drops 2025")
    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    assert done.pending is None and ran[-1] == {"instrument": "NQ", **respelled}
    assert done.text == f"Here are the days.\n\n{t('fixed_note', 'en')}"
    assert done.text.endswith("only written differently: it computes exactly what you confirmed.")
    # What ran is what was confirmed: the 5 lowest daily changes of 2025, lowest first.
    [proof] = done.proofs
    shown = [float(row[-2]) for row in csv.reader(proof.csv.decode("utf-8-sig").splitlines()[1:])]
    days = {"session": "RTH", "from": "daily", "period": "2024:2025"}
    closes = execute(days, "NQ", settings=assistant.engine_settings).table.set_index("date")
    changes = closes["close"].pct_change().mul(100)[lambda c: c.index >= "2025-01-01"]
    assert shown == pytest.approx(sorted(changes)[:5], abs=1e-5)  # 6 digits


async def test_a_plan_runs_the_dates_it_showed_whatever_data_arrives(
    store, tmp_path, monkeypatch
) -> None:
    """p48e: "Period: last_10_days (2025-12-10 — 2025-12-19)" was pressed after new bars
    were imported and ran 2025-12-29 — 2026-01-07, nothing saying so. The plan's dates are
    pinned when it is made: the dates the person read are the dates that run."""
    settings = EngineSettings(data_dir=tmp_path)
    monkeypatch.setattr("barb.interpreter.default_settings", lambda: settings)  # the runs'
    path = data_path("NQ", settings)
    minutes = small_bars()  # 2024-03-04 … 2024-03-15
    first_week = minutes[minutes["trading_date"] <= "2024-03-08"].reset_index(drop=True)
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="test bars",
        first_date=dt.date(2024, 3, 4),
        last_date=dt.date(2024, 3, 8),
        rows=len(first_week),
    )
    write_bars(first_week, meta, path)
    query = {"session": "RTH", "from": "daily", "period": "last_3_days", "select": "mean(range)"}
    assistant = Assistant(
        ScriptedProvider(
            [
                turn("Average range, last 3 days.", tool_call("execute_query", query=query)),
                text("Done."),
            ]
        ),
        store,
        InlineRunner(),
        engine_settings=settings,
    )
    reply = await assistant.ask(ALICE, "average range last 3 days")
    assert "Period: 2024-03-06 — 2024-03-08" in reply.pending.plan
    assert reply.pending.query["period"] == "2024-03-06:2024-03-08"
    # A week of new bars is imported while the plan waits.
    full = meta.model_copy(update={"last_date": dt.date(2024, 3, 15), "rows": len(minutes)})
    write_bars(minutes, full, path)
    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    [proof] = done.proofs
    assert proof.query["period"] == "2024-03-06:2024-03-08"
    assert "Period: 2024-03-06 — 2024-03-08" in proof.plan
    # Independently: each RTH day's high minus low (09:30–17:00), averaged over those 3 days.
    rth = minutes[(minutes["minute"] >= 9 * 60 + 30) & (minutes["minute"] < 17 * 60)]
    days = rth[rth["trading_date"].between("2024-03-06", "2024-03-08")].groupby("trading_date")
    expected = (days["high"].max() - days["low"].min()).mean()
    assert len(days) == 3
    assert proof.metadata["period_end"] == "2024-03-08"
    summary = tool_results(assistant.provider.requests[-1])[-1].content
    assert f"{expected:.2f}" in summary


class _WorkersElsewhere(InlineRunner):
    """Queries run where the data is (``settings``), as on workers of other machines, which
    say what data they serve (``CeleryRunner.data_meta``)."""

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings

    def data_meta(self, symbol: str) -> DataMeta | None:
        return read_meta(data_path(symbol, self.settings))


async def test_a_bot_without_the_data_counts_periods_from_the_workers_data(
    store, tmp_path, monkeypatch
) -> None:
    """Bot replicas and workers on different machines: the bot holds no data (as the
    deploy layout has it). "last_3_days" was counted from today, the query left unpinned
    for the workers to count from their data's end, and the model read "no data loaded";
    now the plan counts from the last day the workers' data holds, and pins it."""
    workers = EngineSettings(data_dir=tmp_path / "worker")
    monkeypatch.setattr("barb.interpreter.default_settings", lambda: workers)  # the runs'
    minutes = small_bars()  # 2024-03-04 … 2024-03-15
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="test bars",
        first_date=dt.date(2024, 3, 4),
        last_date=dt.date(2024, 3, 15),
        rows=len(minutes),
    )
    write_bars(minutes, meta, data_path("NQ", workers))
    query = {"session": "RTH", "from": "daily", "period": "last_3_days", "select": "mean(range)"}
    assistant = Assistant(
        ScriptedProvider(
            [
                turn("Average range, last 3 days.", tool_call("execute_query", query=query)),
                text("Done."),
            ]
        ),
        store,
        _WorkersElsewhere(workers),
        engine_settings=EngineSettings(data_dir=tmp_path / "bot"),  # empty
    )
    reply = await assistant.ask(ALICE, "average range last 3 days")
    assert "Period: 2024-03-13 — 2024-03-15" in reply.pending.plan
    assert reply.pending.query["period"] == "2024-03-13:2024-03-15"
    system = assistant.provider.requests[0].system
    assert "2024-03-15" in system and "no data loaded" not in system


RSI_2024 = {"session": "RTH", "from": "daily", "period": "2024", "select": "mean(r)"}


async def test_a_query_that_cannot_run_goes_back_to_the_model_before_any_plan(
    make_assistant,
) -> None:
    """p47d D9: a syntax error is the model's to fix, not the person's to press Run on: the
    engine's error goes back at once, and the only plan shown is the corrected query's,
    unmarked (the person never saw the broken one), which is exactly what Run runs."""
    broken = {**RSI_2024, "map": {"r": "rsi(close, 14"}}
    fixed = {**RSI_2024, "map": {"r": "rsi(close, 14)"}}
    assistant = make_assistant(
        turn("Average RSI(14) of 2024.", tool_call("execute_query", query=broken)),
        turn("Average RSI(14) of 2024.", tool_call("execute_query", query=fixed)),
        text("The average RSI(14) was about 54."),
    )
    reply = await assistant.ask(ALICE, "средний RSI за 2024?")
    assert reply.pending is not None and reply.pending.kind == "confirm"
    assert reply.pending.queries == [{"instrument": "NQ", **fixed}]
    assert "r = rsi(close, 14)" in reply.pending.plan
    assert reply.pending.changed == [] and "✎" not in reply.pending.plan
    requests = assistant.provider.requests
    assert len(requests) == 2  # nothing ran between the two model calls
    [error] = tool_results(requests[1])
    assert error.is_error and "SyntaxError" in error.content
    assert "a '(' is not closed" in error.content
    assert "not shown to the person" in error.content
    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    assert done.text == "The average RSI(14) was about 54."
    [proof] = done.proofs
    assert proof.query == reply.pending.query
    assert tool_results(assistant.provider.requests[2])[-1].content == proof.summary_text
    # The Russian chat's CSV (p47d D11): Barb's words in Russian, once; RSI to 6 digits,
    # in the dialect of Russian-locale Excel (";" between fields, decimal commas).
    lines = proof.csv.decode("utf-8-sig").splitlines()
    assert lines[0] == "дата;открытие;максимум;минимум;закрытие;объём;диапазон;r;источник"
    assert lines[1].endswith(";синтетические данные, не история рынка")
    assert all(line.endswith(";") for line in lines[2:])
    rsi = execute(fixed, "NQ", settings=assistant.engine_settings).source_rows["r"]
    written = [row[-2] for row in csv.reader(lines[1:4], delimiter=";")]
    assert written == [f"{v:.6g}".replace(".", ",") for v in rsi[:3]]


async def test_queries_refused_twice_are_explained_without_a_plan(make_assistant) -> None:
    """The refusals count as failed queries: after the second the model must explain in
    words, and the person was never asked to run either."""
    assistant = make_assistant(
        turn("Computing.", tool_call("execute_query", query={"select": "mean(rnage)"})),
        tool_call("execute_query", query={"select": "mean(rangee)"}),
        text("Sorry, I could not build that query: the column name was wrong."),
    )
    reply = await assistant.ask(ALICE, "average range")
    assert reply.pending is None and reply.text.startswith("Sorry")
    requests = assistant.provider.requests
    first_error = tool_results(requests[1])[-1]
    assert first_error.is_error and "did you mean 'range'" in first_error.content.lower()
    second_error = tool_results(requests[2])[-1]
    assert "Do not retry" in second_error.content
    assert "not shown to the person" not in second_error.content
    assert requests[2].tools == []


@pytest.mark.parametrize(
    "after",
    [tool_call("execute_query", query={"select": "mean(range)"}), text(" \n ")],
    ids=["tools-again", "blank-words"],
)
async def test_a_question_given_up_after_refused_queries_says_so(make_assistant, after) -> None:
    """Refused twice, the model calls a tool again or writes nothing: the person asked a
    plain "mean range?" and read "please ask a narrower question" or "(no answer)" (p48a
    M1, M2). Now one sentence says the queries were not accepted, in the person's language;
    a model that merely reached for tools too often still hears the old sentence."""
    assistant = make_assistant(
        turn("Computing.", tool_call("execute_query", query={"select": "mean(rnage)"})),
        tool_call("execute_query", query={"select": "mean(rangee)"}),
        after,
    )
    reply = await assistant.ask(ALICE, "средний диапазон?")
    assert reply.failed and reply.pending is None and reply.proofs == []
    assert reply.text == t("queries_refused", "ru")
    assert "Barb" in reply.text and reply.text != t("tool_loop_limit", "ru")


async def test_a_blank_answer_with_nothing_run_is_a_sentence(make_assistant) -> None:
    assistant = make_assistant(text("  "))
    reply = await assistant.ask(ALICE, "hello")
    assert reply.failed and reply.text == t("blank_answer", "en")
    assert reply.text == "The model gave an empty answer; please ask again."


async def test_one_refused_query_holds_back_the_whole_plan(make_assistant) -> None:
    """Two queries in one message, the second broken: neither is shown; the model sends
    both again and the one plan shows both."""
    count = {"session": "RTH", "from": "daily", "select": "count()"}
    broken = {"session": "RTH", "from": "daily", "select": "mean(range"}
    fixed = {"session": "RTH", "from": "daily", "select": "mean(range)"}
    assistant = make_assistant(
        turn(
            "Days and their mean range.",
            tool_call("execute_query", query=count),
            tool_call("execute_query", query=broken),
        ),
        turn(
            "Days and their mean range.",
            tool_call("execute_query", query=count),
            tool_call("execute_query", query=fixed),
        ),
    )
    reply = await assistant.ask(ALICE, "days and mean range")
    assert reply.pending.queries == [{"instrument": "NQ", **q} for q in (count, fixed)]
    held, error = tool_results(assistant.provider.requests[1])
    assert "another query of this message has an error" in held.content
    assert error.is_error and "SyntaxError" in error.content


async def test_two_refused_queries_of_one_message_are_one_failed_attempt(make_assistant) -> None:
    """Two queries of one message with the same typo are one attempt of the budget (2): the
    model is told how to correct both, with tools, and the fixed pair is shown as a plan.
    Counted one by one, they had spent it at once: words only, no correction."""
    broken = [{"session": "RTH", "from": "daily", "select": f"{f}(rnage)"} for f in ("mean", "max")]
    fixed = [{"session": "RTH", "from": "daily", "select": f"{f}(range)"} for f in ("mean", "max")]
    assistant = make_assistant(
        turn("Mean and max range.", *(tool_call("execute_query", query=q) for q in broken)),
        turn("Mean and max range.", *(tool_call("execute_query", query=q) for q in fixed)),
    )
    reply = await assistant.ask(ALICE, "mean and max range")
    assert reply.pending is not None
    assert reply.pending.queries == [{"instrument": "NQ", **q} for q in fixed]
    requests = assistant.provider.requests
    errors = tool_results(requests[1])
    assert [e.is_error for e in errors] == [True, True]
    assert all("did you mean 'range'" in e.content.lower() for e in errors)
    assert all("not shown to the person" in e.content for e in errors)
    assert not any("Do not retry" in e.content for e in errors)
    assert requests[1].tools != []


async def test_a_check_the_busy_pool_does_not_make_in_time_shows_the_plan(
    make_assistant, monkeypatch
) -> None:
    """The check queues behind runs in a busy pool: past ``check_wait_s`` the plan is shown
    unchecked (a refusal then comes after its Run, as before checks) rather than held."""
    broken = {**RSI_2024, "map": {"r": "rsi(close, 14"}}
    assistant = make_assistant(
        turn("Average RSI(14) of 2024.", tool_call("execute_query", query=broken)),
        settings=AssistantSettings(check_wait_s=0.05),
    )
    checks: list[QueryJob] = []

    async def busy(job: QueryJob) -> QueryOutcome:
        checks.append(job)
        await asyncio.sleep(5)
        raise AssertionError("not awaited this long")

    monkeypatch.setattr(assistant.runner, "check", busy)
    reply = await assistant.ask(ALICE, "средний RSI за 2024?")
    assert [job.check_only for job in checks] == [True]
    assert reply.pending is not None and reply.pending.queries == [{"instrument": "NQ", **broken}]
    assert len(assistant.provider.requests) == 1


async def test_the_checks_of_one_plan_are_made_at_once(make_assistant, monkeypatch) -> None:
    """A plan's checks are in flight together, not one after another (a plan of three
    queries in a busy pool had waited up to three times ``check_wait_s``). The refusals go
    back in the queries' order, one failed attempt, though the second check answered first."""
    broken = [{"session": "RTH", "from": "daily", "select": f"{f}(rnage)"} for f in ("mean", "max")]
    assistant = make_assistant(
        turn("Mean and max range.", *(tool_call("execute_query", query=q) for q in broken)),
        text("Sorry."),
        settings=AssistantSettings(check_wait_s=0.5),  # only for the old code, one by one
    )
    in_flight: list[str] = []
    both, second_answered = asyncio.Event(), asyncio.Event()
    most = 0

    async def check(job: QueryJob) -> QueryOutcome:
        nonlocal most
        select = job.query["select"]
        in_flight.append(select)
        most = max(most, len(in_flight))
        if len(in_flight) == 2:
            both.set()
        try:
            await both.wait()
            if select.startswith("mean"):
                await second_answered.wait()
            second_answered.set()
            error = {"error_type": "UnknownColumn", "message": select}
            return QueryOutcome(ok=False, summary_text=f"Refused: {select}", error=error)
        finally:
            in_flight.remove(select)

    monkeypatch.setattr(assistant.runner, "check", check)
    reply = await assistant.ask(ALICE, "mean and max range")
    assert most == 2
    assert reply.pending is None and reply.text == "Sorry."
    errors = tool_results(assistant.provider.requests[1])
    assert [e.content.splitlines()[0] for e in errors] == [
        f"Refused: {q['select']}" for q in broken
    ]
    assert not any("Do not retry" in e.content for e in errors)  # one attempt of two


@pytest.mark.parametrize("where", ["engine", "runner"])
async def test_a_check_that_fails_for_barbs_own_reason_is_logged_once_by_position(
    make_assistant, monkeypatch, caplog, where: str
) -> None:
    """A check that raises something other than a query error, in the engine or in a runner
    (whose contract is an outcome), refuses nothing: the plan is shown, the run judges. It
    is logged once: the query's position and the exception's type, never its message, which
    may quote the query. The engine's had been silent; the runner's had ended the question."""
    import barb.interpreter

    queries = [
        {"session": "RTH", "from": "daily", "select": f"{f}(range)"} for f in ("mean", "max")
    ]
    assistant = make_assistant(
        turn("Mean and max range.", *(tool_call("execute_query", query=q) for q in queries))
    )
    parse_query, check = barb.interpreter.parse_query, assistant.runner.check

    def parse_failing(query: dict):
        if query["select"] == "max(range)":
            raise KeyError("the person's words")
        return parse_query(query)

    async def check_failing(job: QueryJob) -> QueryOutcome:
        if job.query["select"] == "max(range)":
            raise KeyError("the person's words")
        return await check(job)

    if where == "engine":
        monkeypatch.setattr(barb.interpreter, "parse_query", parse_failing)
    else:
        monkeypatch.setattr(assistant.runner, "check", check_failing)
    with caplog.at_level("INFO", logger="bot"):
        reply = await assistant.ask(ALICE, "mean and max range")
    assert reply.pending.queries == [{"instrument": "NQ", **q} for q in queries]
    [record] = [r for r in caplog.records if "check" in r.getMessage()]
    assert record.levelname == "WARNING"
    assert (
        record.getMessage() == "query check 2 of 2 failed (KeyError): the plan is shown unchecked"
    )
    assert "the person's words" not in caplog.text


async def test_every_query_is_confirmed_before_it_runs(make_assistant) -> None:
    """A second query, asked for after the first result, gets its own plan and Run."""
    fomc = {
        "session": "RTH",
        "from": "daily",
        "join": "fomc",
        "where": "fomc",
        "select": "mean(volume)",
    }
    other = {
        "session": "RTH",
        "from": "daily",
        "join": "fomc",
        "where": "not fomc",
        "select": "mean(volume)",
    }
    assistant = make_assistant(
        tool_call("get_events"),
        turn(
            "I'll compare volume on FOMC days with other days.",
            tool_call("execute_query", query=fomc),
        ),
        tool_call("execute_query", query=other),
        text("Volume is higher on FOMC days."),
    )
    reply = await assistant.ask(ALICE, "сравни объём в дни FOMC и обычные дни")
    assert "Посчитаю" in reply.pending.plan  # the plan speaks Russian
    second = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    assert second.pending is not None and second.pending.query == {"instrument": "NQ", **other}
    assert "Фильтр: не fomc" in second.pending.plan  # "not" in the plan's language
    assert len(second.proofs) == 1  # the first query's proof came with it
    done = await assistant.resume(second.pending.id, ALICE.user_id, run=True)
    assert done.text == "Volume is higher on FOMC days."
    done.proofs = [*second.proofs, *done.proofs]
    # What ran names its instrument: the chat's, frozen when the question was asked.
    assert [p.query for p in done.proofs] == [
        {"instrument": "NQ", **fomc},
        {"instrument": "NQ", **other},
    ]


async def test_proactive_indicator_query(make_assistant) -> None:
    atr = {
        "session": "RTH",
        "from": "daily",
        "map": {"atr14": "atr(14)"},
        "sort": "timestamp desc",
        "limit": 1,
    }
    assistant = make_assistant(
        turn(
            "Average RTH range over all data.",
            tool_call(
                "execute_query", query={"session": "RTH", "from": "daily", "select": "mean(range)"}
            ),
        ),
        tool_call("get_indicators"),
        tool_call("execute_query", query=atr),
        text("Average range 130; ATR(14) now is above that."),
    )
    reply = await assistant.ask(ALICE, "какой средний range?")
    second = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    assert second.pending is not None and "atr" in second.pending.plan
    done = await assistant.resume(second.pending.id, ALICE.user_id, run=True)
    assert len(second.proofs) + len(done.proofs) == 2
    indicators = tool_results(assistant.provider.requests[2])[-1]
    assert "atr(n=14)" in indicators.content


async def test_follow_up_sees_the_previous_data(make_assistant) -> None:
    fridays = {"session": "RTH", "from": "daily", "period": "2024", "where": "dayname() == 'Fri'"}
    assistant = make_assistant(
        turn("Listing Fridays of 2024.", tool_call("execute_query", query=fridays)),
        text("There were 50 Fridays."),
        turn(
            "Sorting those Fridays by range.",
            tool_call("execute_query", query={**fridays, "sort": "range desc", "limit": 5}),
        ),
    )
    first = await assistant.ask(ALICE, "покажи все пятницы 2024")
    await assistant.resume(first.pending.id, ALICE.user_id, run=True)
    second = await assistant.ask(ALICE, "какие из них самые волатильные?")
    assert second.pending is not None
    request = assistant.provider.requests[-1]
    assert "Previous data shown" in request.system
    assert "\nResult: 51 rows of daily bars" in request.system
    assert "2024-12-27," in request.system  # the last Friday, as the model read it
    assert "'Fri'" in request.system
    assert [m.text for m in request.messages[:2]] == [
        "покажи все пятницы 2024",
        "There were 50 Fridays.",
    ]


async def test_clarification_with_suggested_replies(make_assistant) -> None:
    assistant = make_assistant(
        tool_call(
            "ask_user_clarification",
            question_text="RTH or ETH range?",
            suggested_replies=["RTH", "ETH"],
            expected_response_format_hint="TEXT",
        ),
        text("Understood, RTH."),
    )
    reply = await assistant.ask(ALICE, "average range")
    assert reply.pending.kind == "clarify"
    assert reply.pending.options == ["RTH", "ETH"]
    done = await assistant.ask(ALICE, "RTH")  # a typed (or tapped) answer resumes
    assert done.text == "Understood, RTH."
    answer = tool_results(assistant.provider.requests[-1])[-1]
    assert answer.content == "The person answered: RTH"


async def test_preferences_are_remembered_and_used(make_assistant, store) -> None:
    assistant = make_assistant(
        tool_call("remember_preference", kind="session", value="rth"),
        text("Noted."),
        text("Hi."),
    )
    await assistant.ask(ALICE, "I only trade RTH")
    saved = await store.preferences.for_user(ALICE.user_id)
    assert [(p.kind, p.text) for p in saved] == [("session", "RTH")]
    await assistant.ask(ALICE, "hello")
    assert 'Preferences: {"session": "RTH"}' in assistant.provider.requests[-1].system


async def test_no_raw_rows_reach_the_model_whatever_the_table(make_assistant) -> None:
    huge = {"session": "ETH", "from": "1m", "period": "2025", "map": {"body": "close - open"}}
    assistant = make_assistant(
        turn("Listing 1-minute bars.", tool_call("execute_query", query=huge)),
        text("Done."),
    )
    reply = await assistant.ask(ALICE, "show me all minute bars of 2025")
    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    assert done.proofs[0].rows > 50_000
    result = tool_results(assistant.provider.requests[-1])[-1]
    assert len(result.content) / 4 < 200  # tokens
    everything = json.dumps([r.model_dump(mode="json") for r in assistant.provider.requests])
    assert everything.count("2025-06-") < 3  # no table rows anywhere in what was sent


async def test_pending_confirmation_survives_a_restart(make_assistant, db_url, sample_settings):
    from bot.pool.runner import InlineRunner
    from bot.store.db import open_store
    from bot.store.settings import StoreSettings

    first = make_assistant(turn("Computing.", tool_call("execute_query", query=WEEKDAY_RANGE)))
    reply = await first.ask(ALICE, "average range by weekday")
    await first.store.close()

    reopened = await open_store(StoreSettings(database_url=db_url))
    try:
        from bot.llm.scripted import ScriptedProvider

        second = Assistant(
            ScriptedProvider([text("Here it is.")]),
            reopened,
            InlineRunner(),
            engine_settings=sample_settings,
        )
        done = await second.resume(reply.pending.id, ALICE.user_id, run=True)
        assert done.text == "Here it is."
        assert len(done.proofs) == 1
    finally:
        await reopened.close()


async def test_only_the_asker_can_press(make_assistant) -> None:
    assistant = make_assistant(turn("Computing.", tool_call("execute_query", query=WEEKDAY_RANGE)))
    reply = await assistant.ask(ALICE, "average range by weekday")
    other = await assistant.resume(reply.pending.id, user_id=2, run=True)
    assert other.text is None and other.proofs == []


async def test_the_loop_is_bounded(make_assistant) -> None:
    assistant = make_assistant(
        *[tool_call("get_events") for _ in range(10)],
        settings=AssistantSettings(max_model_calls=4),
    )
    reply = await assistant.ask(ALICE, "loop forever")
    assert reply.failed and "4 steps" in reply.text
    assert len(assistant.provider.requests) == 4


async def test_provider_failure_is_one_plain_sentence(make_assistant, store) -> None:
    def down(request):
        raise ProviderUnavailable("connection refused", provider="scripted")

    assistant = make_assistant(down)
    reply = await assistant.ask(Asker(chat_id=7, user_id=3), "average range")
    assert reply.failed
    assert (
        reply.text == "The language model is not reachable right now; please try again in a minute."
    )
    # The question itself is kept.
    rows = await store.transcript.recent(7, 1)
    assert rows[0].payload["text"] == "average range"


async def test_confirmation_can_be_turned_off(make_assistant, store) -> None:
    await store.chats.ensure(ALICE.chat_id, "private")
    await store.chats.update_settings(ALICE.chat_id, confirm_queries=False)
    assistant = make_assistant(
        turn("Computing.", tool_call("execute_query", query=WEEKDAY_RANGE)),
        text("Friday."),
    )
    reply = await assistant.ask(ALICE, "average range by weekday")
    assert reply.pending is None
    assert reply.text == "Friday." and len(reply.proofs) == 1


async def test_a_query_run_without_a_plan_is_named_by_its_question_at_every_attempt(
    make_assistant, store, monkeypatch
) -> None:
    """Confirmations off: the question asked again after a restart (the same question id,
    drawn when it was recorded in flight) has its query run under the same job key,
    though the model calls it under a new id; another question's is another key. Before,
    such a query had no key, and a queue worker computed it again at the resumption."""
    await store.chats.ensure(ALICE.chat_id, "private")
    await store.chats.update_settings(ALICE.chat_id, confirm_queries=False)
    computing = turn("Computing.", tool_call("execute_query", query=WEEKDAY_RANGE))
    assistant = make_assistant(*[computing, text("Friday.")] * 3)
    keys: list[str | None] = []
    run = assistant.runner.run

    async def naming(job: QueryJob) -> QueryOutcome:
        keys.append(job.key)
        return await run(job)

    monkeypatch.setattr(assistant.runner, "run", naming)
    await assistant.ask(ALICE, "average range by weekday", question_id="q-recorded")
    await assistant.ask(ALICE, "average range by weekday", question_id="q-recorded")
    await assistant.ask(ALICE, "average range by weekday")
    calls = [r.messages[-1] for r in assistant.provider.requests if r.messages[-1].tool_results]
    assert len({result.call_id for m in calls for result in m.tool_results}) == 3
    assert keys[0] is not None and keys[0].startswith("q-recorded.at-once.")
    assert keys[1] == keys[0]
    assert keys[2] is not None and keys[2] != keys[0]


async def test_usage_is_recorded(make_assistant, store) -> None:
    from bot.llm.messages import Usage

    assistant = make_assistant(text("Hi."), usage=Usage(input_tokens=300, output_tokens=20))
    await assistant.ask(ALICE, "hi")
    totals = await store.usage.for_user(ALICE.user_id)
    assert (totals.input_tokens, totals.output_tokens, totals.calls) == (300, 20, 1)


async def test_daily_budget_stops_before_the_model(make_assistant, store) -> None:
    from bot.llm.messages import Usage

    assistant = make_assistant(
        text("Hi."),
        usage=Usage(input_tokens=900, output_tokens=200),
        settings=AssistantSettings(daily_token_budget=1000),
    )
    await assistant.ask(ALICE, "hi")
    blocked = await assistant.ask(ALICE, "hi again")
    assert blocked.failed and "budget" in blocked.text
    assert len(assistant.provider.requests) == 1


async def test_a_follow_up_without_words_is_answered_in_the_conversations_language(
    make_assistant,
) -> None:
    """A Russian question, then "ES?": its two Latin capitals made it English, and the plan
    came in English to a Russian conversation (Telegram's language, "en" here, was no
    better). A symbol is no language's word: the conversation's language holds; a
    follow-up in English words is answered in English."""
    count = {"session": "RTH", "from": "daily", "select": "count()"}
    assistant = make_assistant(
        text("Всего 4 647 дней."),
        turn("Считаю дни ES.", tool_call("execute_query", query={**count, "instrument": "ES"})),
        text("Sure."),
    )
    english_phone = ALICE.model_copy(update={"language_code": "en"})
    first = await assistant.ask(english_phone, "сколько дней в данных?")
    assert first.language == "ru"
    plan = await assistant.ask(english_phone, "ES?")
    assert plan.language == "ru"
    cyrillic = sum("а" <= c.lower() <= "я" for c in plan.pending.plan)
    assert cyrillic > len(plan.pending.plan) / 3, plan.pending.plan  # the plan in Russian
    later = await assistant.ask(english_phone, "and for CL in 2020?")
    assert later.language == "en"


async def test_in_a_group_a_follow_up_without_words_takes_the_askers_own_language(
    make_assistant,
) -> None:
    """In a group, Alice (her Telegram in English) asks in Russian, then Bob (his in
    Russian) in English, then Alice's "ES?" and Bob's "2023?": each was answered in their
    Telegram's language, Alice's plan in English, Bob's in Russian. The conversation's last
    question is another member's: each one's own last question tells their language."""
    count = {"session": "RTH", "from": "daily", "select": "count()"}
    assistant = make_assistant(
        text("Всего 4 647 дней."),
        text("4,647 days."),
        turn("Считаю дни ES.", tool_call("execute_query", query={**count, "instrument": "ES"})),
        turn("Counting 2023.", tool_call("execute_query", query={**count, "period": "2023"})),
    )
    group = {"chat_id": -100500, "chat_type": "supergroup"}
    alice = Asker(user_id=1, language_code="en", **group)
    bob = Asker(user_id=2, language_code="ru", **group)
    assert (await assistant.ask(alice, "сколько дней в данных?")).language == "ru"
    assert (await assistant.ask(bob, "how many days are in the data?")).language == "en"
    assert (await assistant.ask(alice, "ES?")).language == "ru"
    assert (await assistant.ask(bob, "2023?")).language == "en"


async def test_the_engines_column_names_reach_the_person_in_words(make_assistant) -> None:
    """The model reads the engine's names ("weekday,mean_range" in its summary) and
    repeated them: «mean_range выше всего в среду» reached the person, beside a chart and a
    CSV that say «средний диапазон». The answer says the chart's words; code stays code."""
    answer = (
        "**mean_range** выше всего в среду (140,78), а `mean(range)` и `mean_range` в коде "
        "остаются; mean_range_rth — чужое имя."
    )
    assistant = make_assistant(tool_call("execute_query", query=WEEKDAY_RANGE), text(answer))
    asker = Asker(chat_id=300, user_id=3, language_code="ru")
    reply = await assistant.ask(asker, "какой день самый широкий?")
    done = await assistant.resume(reply.pending.id, asker.user_id, run=True)
    [request] = [r for r in assistant.provider.requests if tool_results(r)]
    [summary] = tool_results(request)
    assert "mean_range" in summary.content  # what the model read
    assert done.text == (
        "**средний диапазон** выше всего в среду (140,78), а `mean(range)` и `mean_range` в "
        "коде остаются; mean_range_rth — чужое имя."
    )

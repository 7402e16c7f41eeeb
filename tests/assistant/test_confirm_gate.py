"""The confirm gate in the assistant, shared by Telegram and ``barb chat``: ``press`` and
``take`` decide every press; ``run_query`` serves the model's tool and ``/query``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from barb.script.query import Query, Stage
from bot.assistant.gate import Press, Unreadable, Verdict, parse_query_text
from bot.assistant.orchestrator import Assistant
from bot.assistant.query_changes import PART_OF, changed_parts
from bot.assistant.replies import Asker
from bot.llm.errors import ProviderUnavailable
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn
from bot.pool.jobs import QueryJob, QueryOutcome, failed_outcome
from bot.pool.runner import InlineRunner
from bot.store.housekeeping import PLAN_LIFETIME, tidy

ALICE = Asker(chat_id=100, user_id=1)
COUNT_DAYS = {"session": "RTH", "from": "daily", "select": "count()"}
STALE = "This plan is out of date: ask again."
DROPPED = "This plan was cancelled or replaced by a newer one: it will not run."


async def test_a_press_on_a_superseded_plan_computes_nothing(make_assistant) -> None:
    assistant = make_assistant(
        turn("Counting.", tool_call("execute_query", query=COUNT_DAYS)),
        text("Something else."),
    )
    plan = await assistant.ask(ALICE, "how many days?")
    await assistant.ask(ALICE, "never mind, hello")  # supersedes the plan
    calls = len(assistant.provider.requests)
    reply = await assistant.press(plan.pending.id, ALICE.user_id, Press.RUN)
    assert reply.text == DROPPED and reply.proofs == []
    assert len(assistant.provider.requests) == calls


async def test_only_the_asker_may_press_and_run_wins_once(make_assistant) -> None:
    assistant = make_assistant(
        turn("Counting.", tool_call("execute_query", query=COUNT_DAYS)), text("Done.")
    )
    plan = await assistant.ask(ALICE, "how many days?")
    bob = await assistant.take(plan.pending.id, 2, Press.RUN)
    assert bob.verdict is Verdict.NOT_YOURS
    done = await assistant.press(plan.pending.id, ALICE.user_id, Press.RUN)
    assert done.text == "Done." and len(done.proofs) == 1
    again = await assistant.press(plan.pending.id, ALICE.user_id, Press.RUN)
    assert again.text == "Already done: the answer is below." and again.proofs == []
    cancel = await assistant.take(plan.pending.id, ALICE.user_id, Press.CANCEL)
    assert cancel.verdict is Verdict.DONE
    assert len(assistant.provider.requests) == 2  # the plan, the answer: nothing again


class _Watched(InlineRunner):
    """Runs queries, noting the plan's stored status, and what a second Run and a Cancel
    are told, while each computes."""

    def __init__(self, assistant_of: Callable[[], Assistant], action_id: Callable[[], str]):
        super().__init__()
        self.assistant_of, self.action_id = assistant_of, action_id
        self.seen: list[tuple[str, str, str]] = []

    async def run(self, job: QueryJob) -> QueryOutcome:
        assistant = self.assistant_of()
        action = await assistant.store.pending.get(self.action_id())
        run = await assistant.press(action.id, ALICE.user_id, Press.RUN)
        cancel = await assistant.press(action.id, ALICE.user_id, Press.CANCEL)
        self.seen.append((action.status, run.text, cancel.text))
        return await super().run(job)


async def test_a_plan_runs_until_its_answer_is_ready_and_presses_meanwhile_say_so(
    store, sample_settings
) -> None:
    """The plan stays "running" while its query computes (it was "done" from the press on,
    and a second Run or a Cancel meanwhile was told "out of date: ask again"); it is done
    once the answer is ready, and runs once."""
    plan_id = ""
    runner = _Watched(lambda: assistant, lambda: plan_id)
    assistant = Assistant(
        ScriptedProvider(
            [turn("Counting.", tool_call("execute_query", query=COUNT_DAYS)), text("Done.")]
        ),
        store,
        runner,
        engine_settings=sample_settings,
    )
    plan = await assistant.ask(ALICE, "how many days?")
    plan_id = plan.pending.id
    done = await assistant.press(plan_id, ALICE.user_id, Press.RUN)
    assert done.text == "Done." and len(done.proofs) == 1
    assert runner.seen == [
        (
            "running",
            "Already running: the answer is on its way.",
            "The query is already running and cannot be stopped: the answer is on its way.",
        )
    ]
    assert (await store.pending.get(plan_id)).status == "done"


async def test_query_command_runs_the_same_path_without_the_model(make_assistant) -> None:
    assistant = make_assistant()
    reply = await assistant.query_command(
        ALICE, "{“session”: “RTH”, “from”: “daily”, “select”: “count()”}"
    )
    [proof] = reply.proofs
    assert proof.query == {"instrument": "NQ", **COUNT_DAYS}
    # The number as the chart names count(), in the headline above the text (once).
    assert proof.headline is not None and proof.headline.startswith("number of days = ")
    assert "number of days" not in reply.text
    assert "say so" not in reply.text
    assert assistant.provider.requests == []
    bad = await assistant.query_command(ALICE, '{"select": "mean(rnage)"}')
    assert bad.failed and bad.text.startswith(
        "The query did not run: there is no column `rnage` in field `select`.\n"
        "Columns there are: `close, high"
    )


async def test_query_command_says_each_number_once_and_notes_in_words(
    make_assistant, sample_settings
) -> None:
    """/query's caption read «средний диапазон = 138,34 пункта» in its bold headline, then
    «средний диапазон: 138,34 пункта» under it; and its engine notes named the column as
    the engine does ("mean_range is in points…"), a name the person never wrote. A number
    is said once, where the headline says them all, and the notes name columns in words."""
    bars = pd.read_parquet(sample_settings.data_dir / "NQ.parquet", columns=["timestamp", "high"])
    bars = bars[bars["timestamp"].dt.year == 2024]
    minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    rth = bars[(minute >= 9 * 60 + 30) & (minute < 17 * 60)]  # NQ's RTH: 09:30-17:00 ET
    high = f"{rth['high'].max():,.2f}"  # "23,464.50"
    assistant = make_assistant()
    scalar = {"session": "RTH", "from": "daily", "period": "2024", "select": "max(high)"}
    for lang, said in (("en", f"maximum high = {high}"), ("ru", "максимум максимума = ")):
        asker = Asker(chat_id=100 if lang == "en" else 200, user_id=1, language_code=lang)
        reply = await assistant.query_command(asker, json.dumps(scalar))
        [proof] = reply.proofs
        assert proof.headline is not None and said in proof.headline
        assert high.replace(",", "\u00a0").replace(".", ",") in proof.headline or lang == "en"
        assert high not in reply.text and "максимум максимума" not in reply.text
        notes = [line for line in reply.text.splitlines() if line.startswith("⚠")]
        assert notes and notes[0].startswith("⚠ maximum high is the highest high of RTH")
        assert "max_high" not in reply.text
    # The headline names three of five numbers: the text lists them all.
    many = {**scalar, "select": ["mean(range)", "count()", "max(high)", "min(low)", "sum(volume)"]}
    reply = await assistant.query_command(ALICE, json.dumps(many))
    assert f"maximum high: {high}" in reply.text
    assert len([line for line in reply.text.splitlines() if ": " in line]) >= 5


def test_typed_queries_are_read_like_a_person_types_them() -> None:
    bad = parse_query_text("{“a”: ‘b’}")  # ‘b’ is not JSON either way
    assert isinstance(bad, Unreadable) and bad.key == "query_bad_json"
    assert bad.params["reason"].startswith("Expecting")  # what the JSON reader found
    assert parse_query_text("{«select»: «count()»}") == {"select": "count()"}
    assert parse_query_text('```{"select": "count()"}```') == {"select": "count()"}
    assert parse_query_text("[1]") == Unreadable("query_usage")
    assert parse_query_text("  ") == Unreadable("query_usage")
    deep = parse_query_text('{"select": ' + "[" * 50 + "]" * 50 + "}")  # the input limits
    assert isinstance(deep, Unreadable) and deep.key == "query_failed"


def test_what_a_fix_changes_is_read_from_the_parsed_queries() -> None:
    base = {"session": "RTH", "from": "daily", "select": "mean(range)", "sort": "x desc"}
    assert changed_parts(base, {**base, "select": "MEAN( range )"}) == ["form"]
    assert changed_parts(base, {**base, "sort": "x DESC", "session": "rth"}) == ["form"]
    # With a limit the order decides which rows: a change to either is what the person gets.
    assert changed_parts(base, {**base, "sort": "y desc", "limit": 3}) == ["order"]
    assert changed_parts(base, {**base, "then": {"limit": 1}}) == ["aggregates", "order"]
    assert changed_parts(base, {**base, "select": "mean(high)"}) == ["aggregates"]
    assert changed_parts(base, {**base, "period": "2024", "where": "close > open"}) == [
        "period",
        "filters",
    ]
    assert changed_parts(base, {**base, "instrument": "ES"}) == ["instrument"]
    assert changed_parts(base, {**base, "map": {"r": "range * 2"}}) == ["columns"]
    assert changed_parts(base, base) == []


def test_every_field_of_a_query_is_a_part_a_fix_is_shown_again_for() -> None:
    """A field left out of ``PART_OF`` would let its change run at once, unseen."""
    assert set(PART_OF) == set(Query.model_fields)
    assert {name for name in Stage.model_fields} <= set(PART_OF)


async def test_a_plan_past_its_lifetime_is_stale_before_housekeeping(
    make_assistant, store, monkeypatch
) -> None:
    assistant = make_assistant(turn("Counting.", tool_call("execute_query", query=COUNT_DAYS)))
    plan = await assistant.ask(ALICE, "how many days?")
    later = datetime.now(UTC) + PLAN_LIFETIME + timedelta(minutes=1)
    monkeypatch.setattr(store.pending, "_clock", lambda: later)  # a day later, unexpired
    taken = await assistant.take(plan.pending.id, ALICE.user_id, Press.RUN)
    assert taken.verdict is Verdict.STALE
    assert (await store.pending.get(plan.pending.id)).status == "expired"


@pytest.mark.parametrize("expired_by", ["housekeeping", "a late run"])
async def test_a_plan_that_expired_unpressed_is_in_the_next_questions_history(
    make_assistant, store, monkeypatch, expired_by
) -> None:
    """A plan nobody pressed for a day expired and the transcript forgot it: "run it" the
    next day was sent to the model alone, which knew of no plan. Now the question, the
    plan's words and its query come with it, marked expired and not run, whichever way it
    expired (the hourly housekeeping, or Run pressed too late)."""
    assistant = make_assistant(
        turn("Counting.", tool_call("execute_query", query=COUNT_DAYS)), text("Shall I plan it?")
    )
    plan = await assistant.ask(ALICE, "how many days?")
    later = datetime.now(UTC) + PLAN_LIFETIME + timedelta(minutes=1)
    monkeypatch.setattr(store.pending, "_clock", lambda: later)
    if expired_by == "housekeeping":
        await tidy(store, on_expired=assistant.keep_expired)
    else:
        taken = await assistant.take(plan.pending.id, ALICE.user_id, Press.RUN)
        assert taken.verdict is Verdict.STALE
    assert (await store.pending.get(plan.pending.id)).status == "expired"

    await assistant.ask(ALICE, "run it")
    [asked, planned, now] = assistant.provider.requests[-1].messages
    assert asked.text == "how many days?"
    assert planned.text.startswith("Counting.\n")
    assert "expired; the query was not run" in planned.text
    query = json.loads(planned.text.split("The plan's query: ", 1)[1].removesuffix("]"))
    assert query == {"instrument": "NQ", **COUNT_DAYS}
    assert now.text == "run it"


COUNT_ETH_DAYS = {**COUNT_DAYS, "session": "ETH"}


def _replica(store, sample_settings, *turns) -> Assistant:
    """Another replica of the bot: its own assistant and model, the one shared database."""
    return Assistant(
        ScriptedProvider(turns), store, InlineRunner(), engine_settings=sample_settings
    )


async def test_two_questions_planned_at_once_by_two_replicas_leave_one_run(
    store, sample_settings
) -> None:
    """ "How many RTH days?" then, quickly, "no, ETH days": each handled by another replica
    (HAProxy moved the chat), both models thinking at once. Each replica declined what was
    open when its question came (nothing yet) and stored its plan: two plans with live Run
    buttons, the first question's still running its RTH count. Now the plan of the later
    message stays, and Run on the first says it was replaced, computing nothing."""
    both_asked = asyncio.Barrier(2)

    def planned(query):  # type: ignore[no-untyped-def]
        async def after_both(request):  # type: ignore[no-untyped-def]
            await both_asked.wait()
            return turn("Counting.", tool_call("execute_query", query=query))

        return after_both

    first = _replica(store, sample_settings, planned(COUNT_DAYS), text("RTH counted."))
    second = _replica(store, sample_settings, planned(COUNT_ETH_DAYS), text("ETH counted."))
    rth, eth = await asyncio.gather(
        first.ask(ALICE.model_copy(update={"message_id": 10}), "how many RTH days?"),
        second.ask(ALICE.model_copy(update={"message_id": 11}), "no, ETH days"),
    )

    old = await first.press(rth.pending.id, ALICE.user_id, Press.RUN)
    assert (old.text, old.proofs) == (DROPPED, [])
    assert len(first.provider.requests) == 1  # nothing computed, the model not asked
    ran = await second.press(eth.pending.id, ALICE.user_id, Press.RUN)
    [proof] = ran.proofs
    assert ran.text == "ETH counted." and proof.query == {"instrument": "NQ", **COUNT_ETH_DAYS}
    # The next question reads the first as a plan passed over, never run.
    second.provider.add(text("Noted."))
    await second.ask(ALICE.model_copy(update={"message_id": 12}), "thanks")
    history = [m.text for m in second.provider.requests[-1].messages]
    assert history[0] == "how many RTH days?"
    assert "instead of confirming; the query was not run" in history[1]


async def test_a_question_handled_after_a_later_ones_plan_leaves_that_plan_to_run(
    store, sample_settings
) -> None:
    """Message 11's plan is shown by one replica; message 10's update reaches the other
    replica only then (slow to come). It declined the plan of the question asked after it
    (Run on the plan shown: "replaced by a newer one") and put its own older question's
    plan in its place. Now the later message's plan keeps Run, and the late one's plan is
    stored as passed over."""
    later = _replica(
        store,
        sample_settings,
        turn("ETH.", tool_call("execute_query", query=COUNT_ETH_DAYS)),
        text("ETH counted."),
    )
    late = _replica(
        store, sample_settings, turn("RTH.", tool_call("execute_query", query=COUNT_DAYS))
    )
    eth = await later.ask(ALICE.model_copy(update={"message_id": 11}), "no, ETH days")
    rth = await late.ask(ALICE.model_copy(update={"message_id": 10}), "how many RTH days?")

    assert (await store.pending.get(rth.pending.id)).status == "declined"
    ran = await later.press(eth.pending.id, ALICE.user_id, Press.RUN)
    [proof] = ran.proofs
    assert ran.text == "ETH counted." and proof.query == {"instrument": "NQ", **COUNT_ETH_DAYS}


class _AskedMeanwhile(InlineRunner):
    """A run that fails on Barb's side (its worker died), while another replica plans the
    person's next question."""

    def __init__(self, ask_elsewhere) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.ask_elsewhere = ask_elsewhere

    async def run(self, job: QueryJob) -> QueryOutcome:
        await self.ask_elsewhere()
        return failed_outcome("WorkerDied", "The worker died.", "ref-1")


async def test_a_plan_handed_back_after_a_later_question_was_planned_does_not_run(
    store, sample_settings
) -> None:
    """Run on "how many RTH days?"; while it computes, "no, ETH days" is planned by another
    replica (the RTH plan is running, so not declined); then the run fails on Barb's side
    and the RTH plan was handed back with Run: two plans with live Run buttons, the older
    question's runnable after the person moved on. On one replica the chat's lock makes the
    ETH question wait and decline it. Now it is declined: the plan says "Failed.", its Run
    says it was replaced, and the ETH plan runs."""
    later = _replica(
        store,
        sample_settings,
        turn("ETH.", tool_call("execute_query", query=COUNT_ETH_DAYS)),
        text("ETH counted."),
    )
    plans = []

    async def ask_eth() -> None:
        plans.append(await later.ask(ALICE.model_copy(update={"message_id": 11}), "no, ETH days"))

    first = Assistant(
        ScriptedProvider([turn("RTH.", tool_call("execute_query", query=COUNT_DAYS))]),
        store,
        _AskedMeanwhile(ask_eth),
        engine_settings=sample_settings,
    )
    rth = await first.ask(ALICE.model_copy(update={"message_id": 10}), "how many RTH days?")
    failed = await first.press(rth.pending.id, ALICE.user_id, Press.RUN)

    assert failed.failed and failed.plan_outcome == "failed"
    assert (await store.pending.get(rth.pending.id)).status == "declined"
    again = await first.press(rth.pending.id, ALICE.user_id, Press.RUN)
    assert (again.text, again.proofs) == (DROPPED, [])
    [eth] = plans
    ran = await later.press(eth.pending.id, ALICE.user_id, Press.RUN)
    assert ran.text == "ETH counted."
    assert ran.proofs[0].query == {"instrument": "NQ", **COUNT_ETH_DAYS}


async def test_a_plan_handed_back_with_no_later_question_waits_for_run_again(
    store, sample_settings
) -> None:
    """The same failure with nothing asked meanwhile: the plan waits for Run again."""

    async def nothing() -> None:
        return None

    first = Assistant(
        ScriptedProvider([turn("RTH.", tool_call("execute_query", query=COUNT_DAYS))]),
        store,
        _AskedMeanwhile(nothing),
        engine_settings=sample_settings,
    )
    rth = await first.ask(ALICE.model_copy(update={"message_id": 10}), "how many RTH days?")
    failed = await first.press(rth.pending.id, ALICE.user_id, Press.RUN)
    assert failed.plan_outcome == "reopened"
    assert (await store.pending.get(rth.pending.id)).status == "pending"


async def test_a_clarification_handed_back_after_a_later_question_was_planned_is_not_answered(
    store, sample_settings
) -> None:
    """ "RTH or ETH range?" answered "RTH" (a press), and the model fails to take it while
    another replica plans the person's next question, "how many ETH days?": the
    clarification was offered again next to that plan, and the person's next message,
    "run it", was taken as its reply. Now it is declined: "run it" is a new message to the
    model, and the ETH plan, the one open, is what it reads."""
    later = _replica(
        store,
        sample_settings,
        turn("ETH.", tool_call("execute_query", query=COUNT_ETH_DAYS)),
        text("Running it."),
    )

    async def down_while_asked_elsewhere(request):  # type: ignore[no-untyped-def]
        await later.ask(ALICE.model_copy(update={"message_id": 11}), "how many ETH days?")
        raise ProviderUnavailable("connection refused", provider="scripted")

    first = _replica(
        store,
        sample_settings,
        tool_call(
            "ask_user_clarification",
            question_text="RTH or ETH range?",
            suggested_replies=["RTH", "ETH"],
            expected_response_format_hint="TEXT",
        ),
        down_while_asked_elsewhere,
    )
    asked = await first.ask(ALICE.model_copy(update={"message_id": 10}), "average range")
    failed = await first.press(asked.pending.id, ALICE.user_id, Press.OPTION, option=0)
    assert failed.failed

    assert (await store.pending.get(asked.pending.id)).status == "declined"
    await later.ask(ALICE.model_copy(update={"message_id": 12}), "run it")
    assert later.provider.requests[-1].messages[-1].text == "run it"

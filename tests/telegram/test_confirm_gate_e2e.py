"""Issue 12 §1: the confirm gate shows exactly what will run, through the real PTB
Application against the fake Bot API, with the scripted model."""

from __future__ import annotations

import asyncio
import io
from datetime import timedelta

import pandas as pd
import pytest
from bot_harness import (
    ALICE,
    WEEKDAY_RANGE,
    ask_and_get_plan,
    barb_bot,
    commentary_of,
    fetch_csv,
    keyboard_data,
    press,
)
from fake_bot_api import FakeBotAPI

from barb.data.store import data_path
from barb.settings import EngineSettings
from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn
from bot.pool.jobs import QueryJob, QueryOutcome, failed_outcome
from bot.pool.runner import InlineRunner
from bot.telegram.services import BotServices

COUNT_DAYS = {"session": "RTH", "from": "daily", "select": "count()"}
# Refused only when it runs: the day's bars say the exchange was closed.
CHRISTMAS = {"session": "RTH", "from": "daily", "period": "2025-12-25", "select": "mean(range)"}
CHRISTMAS_EVE = {**CHRISTMAS, "period": "2025-12-24"}
GOOD_SORT = {**WEEKDAY_RANGE, "sort": "mean_range desc"}
STALE = "This plan is out of date: ask again."
DROPPED = "This plan was cancelled or replaced by a newer one: it will not run."
DONE = "Already done: the answer is below."
#: A run that failed: never "no result", which is an empty answer's (p47d D9).
FAILED = "Failed: the query stopped with an error; the reason, or a corrected plan, is below."


def rth_days(symbol: str) -> int:
    bars = pd.read_parquet(data_path(symbol, EngineSettings()), columns=["timestamp", "minute"])
    rth = bars[(bars["minute"] >= 9 * 60 + 30) & (bars["minute"] < 16 * 60)]
    return rth["timestamp"].dt.date.nunique()


def results_of(request: ModelRequest) -> list:
    return [r for m in request.messages if m.role == "tool" for r in m.tool_results]


def answer_from_results(request: ModelRequest):
    return text("Answer: " + " | ".join(r.content.splitlines()[0] for r in results_of(request)))


async def run_and_wait_answer(fake: FakeBotAPI, plan: dict, said_before: int) -> list[dict]:
    """Press Run; everything the person has read once the answer (or a new plan) arrives."""
    run, _ = keyboard_data(plan)
    await press(fake, ALICE, ALICE, plan, run)
    return await fake.wait_said(said_before + 1, chat_id=ALICE)


async def test_every_query_of_a_model_message_is_shown_before_run(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Two execute_query calls in one model message: the plan shows both, Run runs both,
    and nothing runs before Run."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            turn(
                "Range by weekday, and how many days.",
                tool_call("execute_query", query=WEEKDAY_RANGE),
                tool_call("execute_query", query=COUNT_DAYS),
            ),
            answer_from_results,
        ]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "weekday ranges and day count")
        assert "Query 1 of 2" in plan["text"] and "Query 2 of 2" in plan["text"]
        assert "average range" in plan["text"] and "number of days" in plan["text"]
        assert fake.calls("sendDocument") == []  # nothing ran before Run
        assert len(provider.requests) == 1
        await run_and_wait_answer(fake, plan, 1)
        photos = await fake.wait_for("sendPhoto", 2, chat_id=ALICE)
        assert len(photos) == 2  # both proofs, from one Run
        messages = fake.said(ALICE)  # the last chart carries the answer as its caption
        assert len(provider.requests) == 2  # no second plan, no third model call
        [weekdays, days] = results_of(provider.requests[1])
        assert "5 groups by weekday" in weekdays.content
        # The count that ran is the number of RTH days (09:30-16:00 ET) in the bars, by hand.
        assert f"Result: count = {rth_days('NQ')}\n" in days.content
        assert commentary_of(messages[-1]["text"]).startswith("Answer: Result: 5 groups")


async def test_a_fix_that_changes_what_is_computed_is_shown_again(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            turn("Range on Christmas.", tool_call("execute_query", query=CHRISTMAS)),
            tool_call("execute_query", query=CHRISTMAS_EVE),
            answer_from_results,
        ]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "range on Christmas 2025")
        messages = await run_and_wait_answer(fake, plan, 1)
        second = messages[-1]
        # The corrected query is a new plan, its change named and marked; nothing ran yet.
        assert "Changed after the error (period)" in second["text"]
        assert "✎ Period: 2025-12-24" in second["text"]
        assert len(keyboard_data(second)) == 2
        assert fake.calls("sendPhoto") == []
        assert len(provider.requests) == 2
        await run_and_wait_answer(fake, second, 2)
        assert len(fake.calls("sendPhoto", chat_id=ALICE)) == 1
        assert len(provider.requests) == 3


async def test_a_query_that_cannot_run_is_fixed_before_the_person_sees_a_plan(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p47d D9: a syntax error, or a sort by a column that does not exist, went to the
    person as a plan with Run, then "Failed: the query gave no result.", then a second
    plan. The engine refuses it without data: the model corrects it at once, and the
    person sees one plan, the corrected one, which is what runs."""
    fake = fake_telegram
    broken = {**WEEKDAY_RANGE, "map": {"weekday": "dayname("}, "sort": "mean_rnage desc"}
    provider = ScriptedProvider(
        [
            turn("Range by weekday.", tool_call("execute_query", query=broken)),
            turn("Range by weekday, widest first.", tool_call("execute_query", query=GOOD_SORT)),
            answer_from_results,
        ]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "weekday range, widest first")
        assert plan["text"].startswith("Range by weekday, widest first.")
        assert "Order: average range (highest first)" in plan["text"]
        assert "dayname()" in plan["text"] and "rnage" not in plan["text"]
        assert "✎" not in plan["text"] and "Changed after the error" not in plan["text"]
        [error] = results_of(provider.requests[1])
        assert error.is_error and "SyntaxError" in error.content
        messages = await run_and_wait_answer(fake, plan, 1)
        said = "Result: 5 groups by weekday, sorted by average range descending"
        assert said in messages[-1]["text"]
        assert await plan_status(fake, ALICE, plan) == "⏵ Done."
        # One plan in all: every message but the answer's is it.
        assert [m["message_id"] for m in messages[:-1]] == [plan["message_id"]]
        document = await fetch_csv(fake, ALICE, ALICE, messages[-1])
        csv = pd.read_csv(io.BytesIO(fake.file_content(document.result["document"]["file_id"])))
        # What ran is the fixed order: widest weekday first.
        assert list(csv["mean_range"]) == sorted(csv["mean_range"], reverse=True)


async def _assert_refused(
    fake: FakeBotAPI, plan: dict, data: str, toast: str, provider_calls: int, provider
) -> None:
    """A press on ``plan`` is told ``toast``, computes nothing, and takes the plan's buttons
    away if it still shows them; Telegram is asked nothing about buttons it no longer shows
    (it refuses that: "message is not modified")."""
    presses = len(fake.calls("answerCallbackQuery"))
    unmarked = len(fake.calls("editMessageReplyMarkup", chat_id=ALICE))
    shows_buttons = bool(keyboard_data(fake.message(ALICE, plan["message_id"])))
    await press(fake, ALICE, ALICE, plan, data)
    answers = await fake.wait_for("answerCallbackQuery", presses + 1)
    assert answers[-1].params["text"] == toast
    if shows_buttons:
        edits = await fake.wait_for("editMessageReplyMarkup", unmarked + 1, chat_id=ALICE)
        assert edits[-1].params["message_id"] == plan["message_id"]
    await asyncio.sleep(0.1)
    assert len(fake.calls("editMessageReplyMarkup", chat_id=ALICE)) == unmarked + shows_buttons
    assert not keyboard_data(fake.message(ALICE, plan["message_id"]))
    assert len(provider.requests) == provider_calls  # nothing computed, the model not asked


async def test_stale_buttons_say_so_compute_nothing_and_lose_their_buttons(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            turn("Plan A.", tool_call("execute_query", query=COUNT_DAYS)),  # superseded
            turn("Plan B.", tool_call("execute_query", query=COUNT_DAYS)),  # run
            text("B done."),
            turn("Plan C.", tool_call("execute_query", query=COUNT_DAYS)),  # reset
            turn("Plan D.", tool_call("execute_query", query=COUNT_DAYS)),  # expired
        ]
    )
    async with barb_bot(fake, db_url, provider=provider) as svc:
        a = await ask_and_get_plan(fake, ALICE, ALICE, "question a")
        b = await ask_and_get_plan(fake, ALICE, ALICE, "question b")  # supersedes a
        await _assert_refused(fake, a, keyboard_data(a)[0], DROPPED, 2, provider)

        await run_and_wait_answer(fake, b, len(fake.said(ALICE)))
        await asyncio.sleep(0.1)
        await _assert_refused(fake, b, keyboard_data(b)[0], DONE, 3, provider)  # already run
        photos = len(fake.calls("sendPhoto"))

        c = await ask_and_get_plan(fake, ALICE, ALICE, "question c")
        sent = len(fake.calls("sendMessage", chat_id=ALICE))
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/reset"))
        await fake.wait_for("sendMessage", sent + 1, chat_id=ALICE)
        await _assert_refused(fake, c, keyboard_data(c)[1], DROPPED, 4, provider)  # Cancel

        d = await ask_and_get_plan(fake, ALICE, ALICE, "question d")
        await svc.store.pending.expire(timedelta(0))  # its buttons stay until pressed
        await _assert_refused(fake, d, keyboard_data(d)[0], STALE, 5, provider)
        assert len(fake.calls("sendPhoto")) == photos  # no stale press ran a query


@pytest.mark.parametrize(
    ("lang", "question", "status", "toast"),
    [
        ("en", "question a", "⏵ Replaced by a newer message.", DROPPED),
        (
            "ru",
            "вопрос а",
            "⏵ Заменён новым сообщением.",
            "Этот план отменён или заменён новым: он не будет запущен.",
        ),
    ],
)
async def test_a_plan_replaced_by_a_newer_message_says_so(
    fake_telegram: FakeBotAPI, db_url: str, lang: str, question: str, status: str, toast: str
) -> None:
    """A plan superseded by a correction lost only its buttons, so it read like a live plan
    missing them; now it says it was replaced, in its own language, as a plan that ran or
    was cancelled says so, and a press on it says the same, not "ask again"."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            turn("Plan A.", tool_call("execute_query", query=COUNT_DAYS)),
            turn("Plan B.", tool_call("execute_query", query={**COUNT_DAYS, "session": "ETH"})),
        ]
    )
    async with barb_bot(fake, db_url, provider=provider):
        a = await ask_and_get_plan(fake, ALICE, ALICE, question, language_code=lang)
        b = await ask_and_get_plan(fake, ALICE, ALICE, "same on ETH please", language_code="en")
        replaced = fake.message(ALICE, a["message_id"])
        assert replaced["text"] == a["text"] + "\n\n" + status and not keyboard_data(replaced)
        assert keyboard_data(fake.message(ALICE, b["message_id"])) == keyboard_data(b)
        presses = len(fake.calls("answerCallbackQuery"))
        await press(fake, ALICE, ALICE, a, keyboard_data(a)[0], language_code=lang)
        [*_, answer] = await fake.wait_for("answerCallbackQuery", presses + 1)
        assert answer.params["text"] == toast
        await asyncio.sleep(0.1)
        assert fake.calls("editMessageReplyMarkup") == []  # nothing left to take away
        assert fake.calls("sendPhoto") == [] and len(provider.requests) == 2


class Held(InlineRunner):
    """Runs each query once ``release`` is set, counting them: the press stays computing."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.runs = 0

    async def run(self, job: QueryJob) -> QueryOutcome:
        self.runs += 1
        await self.release.wait()
        return await super().run(job)


async def test_run_and_cancel_pressed_while_the_answer_computes_say_it_is_on_its_way(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p38c B1: a second Run and a Cancel pressed while the query computed were told "This
    plan is out of date: ask again." (the plan was marked done from the first press on), and
    each sent an editMessageReplyMarkup Telegram refused; Run after Done was told the same.
    Now each is told where the answer is, the query runs once, and no button edit is sent."""
    fake = fake_telegram
    runner = Held()
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS)), text("Counted.")]
    )
    async with barb_bot(fake, db_url, provider=provider, runner=runner):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "how many days?")
        run, cancel = keyboard_data(plan)
        start = len(fake.requests)
        await press(fake, ALICE, ALICE, plan, run)
        await fake.wait_for("editMessageText", chat_id=ALICE)  # "Running…"
        await press(fake, ALICE, ALICE, plan, run)
        await fake.wait_for("answerCallbackQuery", 2)
        await press(fake, ALICE, ALICE, plan, cancel)
        await fake.wait_for("answerCallbackQuery", 3)
        runner.release.set()
        await fake.wait_for("sendPhoto", chat_id=ALICE)
        assert await plan_status(fake, ALICE, plan) == "⏵ Done."
        await press(fake, ALICE, ALICE, plan, run)
        await fake.wait_for("answerCallbackQuery", 4)
        await asyncio.sleep(0.1)

        toasts = [call.params.get("text") for call in fake.calls("answerCallbackQuery")]
        assert toasts == [
            "Running…",
            "Already running: the answer is on its way.",
            "The query is already running and cannot be stopped: the answer is on its way.",
            DONE,
        ]
        sent = [r for r in fake.requests[start:] if r.method in SENT]
        assert all(r.status == 200 for r in sent)  # nothing refused
        assert [r.method for r in sent] == [
            "answerCallbackQuery",
            "editMessageText",  # Running…
            "answerCallbackQuery",
            "answerCallbackQuery",
            "sendPhoto",
            "editMessageText",  # Done.
            "answerCallbackQuery",
        ]
        assert runner.runs == 1 and len(provider.requests) == 2


#: What the bot sends a chat (not getUpdates, nor 'sending photo…', which depends on timing).
SENT = (
    "sendMessage",
    "sendPhoto",
    "sendDocument",
    "editMessageText",
    "editMessageReplyMarkup",
    "answerCallbackQuery",
)


async def plan_status(fake: FakeBotAPI, chat_id: int, plan: dict, timeout: float = 10.0) -> str:
    """The plan's last line once its run has ended (neither "Running…" nor buttons)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        last = fake.message(chat_id, plan["message_id"])["text"].splitlines()[-1]
        if last.startswith("⏵") and "…" not in last:
            return last
        assert asyncio.get_running_loop().time() < deadline, f"plan still says {last!r}"
        await asyncio.sleep(0.02)


async def no_work_in_flight(svc: BotServices, timeout: float = 10.0) -> None:
    """Wait until every piece of work in flight has ended."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while await svc.store.in_flight.open():
        assert loop.time() < deadline, "the work never ended"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize(
    ("lang", "question", "status"),
    [
        ("en", "range on Christmas", f"⏵ {FAILED}"),
        (
            "ru",
            "диапазон на Рождество",
            "⏵ Не удалось: запрос завершился ошибкой; ниже — причина или исправленный план.",
        ),
    ],
)
async def test_a_query_that_fails_ends_its_plan_failed_and_the_model_explains(
    fake_telegram: FakeBotAPI, db_url: str, lang: str, question: str, status: str
) -> None:
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            turn("Range on Christmas.", tool_call("execute_query", query=CHRISTMAS)),
            text("The exchange was closed that day."),
        ]
    )
    async with barb_bot(fake, db_url, provider=provider) as svc:
        # The language chosen in /settings (the fake's presses carry no language_code).
        await svc.store.chats.ensure(ALICE, "private")
        await svc.store.chats.update_settings(ALICE, language=lang)
        plan = await ask_and_get_plan(fake, ALICE, ALICE, question, language_code=lang)
        [*_, answer] = await run_and_wait_answer(fake, plan, 1)
        assert answer["text"] == "The exchange was closed that day."
        assert fake.calls("sendPhoto") == []
        assert await plan_status(fake, ALICE, plan) == status
        # The model read the engine's error.
        [result] = results_of(provider.requests[1])
        assert result.is_error and "not a trading date" in result.content


async def test_a_failed_run_still_says_failed_when_its_plan_is_edited_later(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The connection drops on both edits of the plan ("Running…", then "Failed."): the
    answer is stored, and the next sending pass edits the plan from what the database kept,
    so it says the query failed, not "Done."."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            turn("Range on Christmas.", tool_call("execute_query", query=CHRISTMAS)),
            text("The exchange was closed that day."),
        ]
    )
    async with barb_bot(fake, db_url, provider=provider, keep_sending_every_s=0.3) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "range on Christmas")
        fake.fault_next("editMessageText", "drop_before", times=2, chat_id=ALICE)
        [*_, answer] = await run_and_wait_answer(fake, plan, 1)
        assert answer["text"] == "The exchange was closed that day."
        assert await plan_status(fake, ALICE, plan) == f"⏵ {FAILED}"
        edits = fake.calls("editMessageText", chat_id=ALICE)
        assert [call.fault for call in edits[:2]] == ["drop_before", "drop_before"]
        await no_work_in_flight(svc)  # the run ends once the edit is through


class DiesOnce(InlineRunner):
    """The first query's worker dies (a failure on Barb's side), and Telegram then fails
    the next edit of the plan; later queries run."""

    def __init__(self, fake: FakeBotAPI) -> None:
        super().__init__()
        self.fake = fake
        self.died = False

    async def run(self, job: QueryJob) -> QueryOutcome:
        if not self.died:
            self.died = True
            self.fake.fail_next("editMessageText", error_code=502, chat_id=ALICE)
            return failed_outcome("WorkerDied", "The query failed in its worker.", "ref12345")
        return await super().run(job)


async def test_a_plan_reopened_gets_its_buttons_back_after_a_restart(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The query's worker dies, so the plan should show Run and Cancel again; Telegram
    fails that edit, leaving the plan "Running…": the next start edits it from what the
    database kept, and Run works from there."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, runner=DiesOnce(fake)) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "average RTH range by weekday?")
        [*_, sorry] = await run_and_wait_answer(fake, plan, 1)
        assert "ref12345" in sorry["text"]
        running, refused = await fake.wait_for("editMessageText", 2, chat_id=ALICE)
        assert (running.status, refused.status) == (200, 502)
        assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Running…")
        [run] = [w for w in await svc.store.in_flight.open() if w.kind == "run"]
        assert run.outcome == "reopened"

    async with barb_bot(fake, db_url) as svc:  # Telegram answers again
        await fake.wait_for("editMessageText", 3, chat_id=ALICE)
        shown = fake.message(ALICE, plan["message_id"])
        assert shown["text"] == plan["text"]  # the plan as sent, with no "Running…"
        assert keyboard_data(shown) == keyboard_data(plan)
        await no_work_in_flight(svc)
        photos = len(fake.calls("sendPhoto", chat_id=ALICE))
        await press(fake, ALICE, ALICE, shown, keyboard_data(shown)[0])
        await fake.wait_for("sendPhoto", photos + 1, chat_id=ALICE)
        assert await plan_status(fake, ALICE, plan) == "⏵ Done."


async def test_a_query_that_runs_ends_its_plan_done(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS)), text("Counted.")]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "how many days?")
        await run_and_wait_answer(fake, plan, 1)
        assert await plan_status(fake, ALICE, plan) == "⏵ Done."


async def test_a_long_plan_explanation_is_cut_between_paragraphs(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    paragraphs = [
        f"Paragraph {i}: " + "we compare the weekday ranges carefully. " * 8 for i in range(20)
    ]
    explanation = "\n\n".join(p.strip() for p in paragraphs)
    provider = ScriptedProvider([turn(explanation, tool_call("execute_query", query=COUNT_DAYS))])
    async with barb_bot(fake, db_url, provider=provider):
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="how many days?"))
        await fake.wait_said(2, chat_id=ALICE)
        while not keyboard_data(fake.said(ALICE)[-1]):  # the last part carries Run, Cancel
            await asyncio.sleep(0.02)
        parts = [m["text"] for m in fake.said(ALICE)]
        assert len(parts) >= 2 and keyboard_data(fake.said(ALICE)[-1]) != []
        # Each part holds whole paragraphs: nothing is cut mid-sentence, nothing is lost.
        for part in parts[:-1]:
            assert part.startswith("Paragraph ") and part.endswith("carefully.")
        shown = "\n\n".join(parts).split("\n\nPlan:")[0]
        assert shown == explanation


async def test_a_second_press_on_a_russian_plan_is_answered_in_russian(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """A Russian question from a phone set to English: Run said "Считаю…", then the same
    person's second Run said "Already done: the answer is below." A refusal to the one who
    asked is in the plan's language, as its status is."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Считаю дни.", tool_call("execute_query", query=COUNT_DAYS)), text("Готово.")]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "сколько дней?", language_code="en")
        assert "Период: все данные" in plan["text"]
        run, cancel = keyboard_data(plan)
        await run_and_wait_answer(fake, plan, 1)
        toasts = []
        for data in (run, cancel):
            before = len(fake.calls("answerCallbackQuery"))
            await press(fake, ALICE, ALICE, plan, data, language_code="en")
            [*_, toast] = await fake.wait_for("answerCallbackQuery", before + 1)
            toasts.append(toast.params["text"])
        assert toasts == ["Уже готово: ответ ниже.", "Уже готово: ответ ниже."]
        assert len(fake.calls("sendPhoto", chat_id=ALICE)) == 1 and len(provider.requests) == 2

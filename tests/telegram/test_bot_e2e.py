"""The real PTB Application over a real wire (the fake Bot API) with the scripted model."""

from __future__ import annotations

import asyncio
import io

import pytest
from bot_harness import (
    ALICE,
    BOB,
    GROUP,
    WEEKDAY_RANGE,
    ask_and_get_plan,
    barb_bot,
    brain,
    keyboard_data,
    press,
)
from fake_bot_api import FakeBotAPI

from barb import execute
from bot.assistant.orchestrator import Assistant
from bot.llm.errors import ProviderUnavailable
from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call
from bot.pool.jobs import QueryJob, QueryOutcome
from bot.pool.runner import InlineRunner, ProcessRunner
from bot.settings import BotSettings
from bot.store.db import open_store
from bot.store.settings import StoreSettings
from bot.telegram.app import build_application
from bot.telegram.services import BotServices, RateLimiter


async def test_private_question_plan_run_proof(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "average RTH range by weekday?")
        assert "Plan:" in plan["text"] and "average range, by weekday" in plan["text"]
        assert "<over all data> & more" in plan["text"]  # escaped HTML came through intact
        run, cancel = keyboard_data(plan)
        assert run.startswith("r:") and cancel.startswith("c:") and len(run.encode()) <= 64
        await fake.wait_for("sendChatAction", chat_id=ALICE)

        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=plan["message_id"], data=run
            )
        )
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        # The chart's caption is its headline, then the commentary; the CSV comes when its
        # button is pressed.
        headline, commentary = photo.result["caption"].split("\n\n", 1)
        assert (
            headline.startswith("average range: Mon 134.58 to Wed 140.78 points")
            and "points" in headline
        )
        assert commentary.startswith("Answer: Result: 5 groups by weekday")
        csv_button, query_button = keyboard_data(photo.result)
        assert query_button.startswith("q:")
        await press(fake, ALICE, ALICE, photo.result, csv_button)
        [document] = await fake.wait_for("sendDocument", chat_id=ALICE)

        png = photo.files["photo"].content
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        csv = document.files["document"].content.decode("utf-8-sig")
        engine = execute(WEEKDAY_RANGE, "NQ")
        rows = [line.split(",") for line in csv.splitlines()[1:]]
        assert [r[0] for r in rows] == ["Mon", "Tue", "Wed", "Thu", "Fri"]
        # Six significant digits, two more than the chart.
        want = engine.table["mean_range"].tolist()
        assert [float(r[1]) for r in rows] == pytest.approx(want, rel=5e-6)
        assert document.files["document"].filename.startswith("NQ_RTH_average_range_by_weekday_")

        # The plan message lost its buttons and says it is done.
        await fake.wait_for("editMessageText", 2, chat_id=ALICE)
        edited = fake.message(ALICE, plan["message_id"])
        assert "Done" in edited["text"] and not keyboard_data(edited)
        # A second press on the same plan runs nothing twice.
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=plan["message_id"], data=run
            )
        )
        await fake.wait_for("answerCallbackQuery", 3)
        assert len(fake.calls("sendPhoto", chat_id=ALICE)) == 1
        # Everything sent is stored.
        sent = await svc.store.outbox.unsent(ALICE)
        assert sent == []


async def test_cancel(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "range by weekday")
        _, cancel = keyboard_data(plan)
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=plan["message_id"], data=cancel
            )
        )
        messages = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        assert messages[-1].result["text"] == "Cancelled; anything else?"
        assert "Cancelled" in fake.message(ALICE, plan["message_id"])["text"]
        assert fake.calls("sendPhoto") == []


async def test_groups_answer_only_when_addressed(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        fake.inject(
            fake.message_update(
                chat_id=GROUP, user_id=ALICE, text="hello everyone", chat_type="supergroup"
            )
        )
        # A private message afterwards proves the group one was processed (in order of ids).
        await ask_and_get_plan(fake, ALICE, ALICE, "hello")
        assert fake.calls("sendMessage", chat_id=GROUP) == []

        plan = await ask_and_get_plan(
            fake,
            GROUP,
            ALICE,
            f"@{fake.bot['username']} range by weekday?",
            chat_type="supergroup",
        )
        assert "Plan:" in plan["text"]
        run, _ = keyboard_data(plan)
        # Another member cannot press it.
        fake.inject(
            fake.callback_update(
                chat_id=GROUP,
                user_id=BOB,
                message_id=plan["message_id"],
                data=run,
                chat_type="supergroup",
                first_name="Bob",
            )
        )
        [answer] = await fake.wait_for("answerCallbackQuery")
        assert "Only the person who asked" in answer.params["text"]
        assert fake.calls("sendPhoto") == []
        # A reply to the bot's message is addressed to it too.
        before = len(fake.calls("sendMessage", chat_id=GROUP))
        fake.inject(
            fake.message_update(
                chat_id=GROUP,
                user_id=BOB,
                text="hello",
                first_name="Bob",
                chat_type="supergroup",
                reply_to_bot=True,
            )
        )
        await fake.wait_for("sendMessage", before + 1, chat_id=GROUP)


async def test_restart_between_plan_and_run(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "range by weekday")
    run, _ = keyboard_data(plan)
    async with barb_bot(fake, db_url):  # a new process: new store, model and runner
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=plan["message_id"], data=run
            )
        )
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        assert photo.files["photo"].content[:4] == b"\x89PNG"


class HeldRunner(InlineRunner):
    """Runs queries only once ``release`` is set: the first Run stays in progress."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def run(self, job: QueryJob) -> QueryOutcome:
        await self.release.wait()
        return await super().run(job)


async def test_a_run_pressed_while_another_runs_says_how_many_are_ahead(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    runner = HeldRunner()
    async with barb_bot(fake, db_url, runner=runner):
        first = await ask_and_get_plan(fake, ALICE, ALICE, "range by weekday")
        second = await ask_and_get_plan(fake, BOB, BOB, "range by weekday")
        await press(fake, ALICE, ALICE, first, keyboard_data(first)[0])
        await fake.wait_for("editMessageText", chat_id=ALICE)
        await press(fake, BOB, BOB, second, keyboard_data(second)[0])
        await fake.wait_for("editMessageText", chat_id=BOB)

        assert fake.message(ALICE, first["message_id"])["text"].endswith("⏵ Running…")
        assert fake.message(BOB, second["message_id"])["text"].endswith(
            "⏵ Running… (1 ahead in line)"
        )
        runner.release.set()
        await fake.wait_for("editMessageText", 2, chat_id=BOB)
        assert fake.message(BOB, second["message_id"])["text"].endswith("⏵ Done.")


async def test_query_past_its_time_limit(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    runner = ProcessRunner(workers=1, timeout_s=0.5)
    async with barb_bot(fake, db_url, runner=runner):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "something slow please")
        run, _ = keyboard_data(plan)
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=plan["message_id"], data=run
            )
        )
        messages = await fake.wait_for("sendMessage", 2, chat_id=ALICE, timeout=30)
        assert "took too long" in messages[-1].result["text"]  # the time limit, named as such
        assert runner.restarts == 1
        # The pool still answers afterwards.
        await ask_and_get_plan(fake, ALICE, ALICE, "hello")


async def test_provider_failure_is_one_plain_sentence(fake_telegram: FakeBotAPI, db_url: str):
    def down(request: ModelRequest):
        raise ProviderUnavailable("connection refused", provider="scripted")

    fake = fake_telegram
    async with barb_bot(fake, db_url, model=down):
        reply = await ask_and_get_plan(fake, ALICE, ALICE, "range by weekday")
        assert reply["text"] == (
            "The language model is not reachable right now; please try again in a minute."
        )


async def test_rate_limit(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url, questions_per_minute=1):
        await ask_and_get_plan(fake, ALICE, ALICE, "hello")
        reply = await ask_and_get_plan(fake, ALICE, ALICE, "hello again")
        assert "faster than I can answer" in reply["text"]


async def test_allowlist_keeps_strangers_out(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url, allowed_users=frozenset({ALICE})) as svc:
        fake.inject(fake.message_update(chat_id=BOB, user_id=BOB, text="hello", first_name="Bob"))
        await ask_and_get_plan(fake, ALICE, ALICE, "hello")
        assert fake.calls("sendMessage", chat_id=BOB) == []
        assert len(svc.assistant.provider.requests) == 1  # only Alice cost a token


async def test_same_update_twice_is_handled_once(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        update = fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello")
        fake.inject(update)
        fake.inject(dict(update))
        await fake.wait_for("sendMessage", chat_id=ALICE)
        await asyncio.sleep(0.3)
        assert len(fake.calls("sendMessage", chat_id=ALICE)) == 1
        assert len(svc.assistant.provider.requests) == 1


async def test_commands(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        await fake.wait_for("setMyCommands")
        names = {c["command"] for c in fake.calls("setMyCommands")[0].params["commands"]}
        assert names == {
            "start",
            "help",
            "instrument",
            "settings",
            "cancel",
            "reset",
            "query",
            "examples",
            "usage",
        }
        start = await ask_and_get_plan(fake, ALICE, ALICE, "/start")
        assert "NQ" in start["text"] and len(keyboard_data(start)) == 3

        instrument = await ask_and_get_plan(fake, ALICE, ALICE, "/instrument")
        assert keyboard_data(instrument) == ["i:CL", "i:ES", "i:NQ"]
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=instrument["message_id"], data="i:ES"
            )
        )
        [edited] = await fake.wait_for("editMessageText", chat_id=ALICE)
        assert edited.result["text"] == "Instrument set to ES (S&P 500 E-mini)."
        assert (await svc.store.chats.get(ALICE)).instrument == "ES"

        query = '/query {"session": "RTH", "from": "daily", "select": "count()"}'
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=query))
        [document] = await fake.wait_for("sendDocument", chat_id=ALICE)
        assert document.files["document"].filename.startswith("ES_RTH_number_of_days_")
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        # The caption: the headline (the number, said once), then the bars it came from.
        headline, result = photo.result["caption"].split("\n\n", 1)
        assert headline.startswith("number of days = ") and not headline.endswith(" days")
        assert result.startswith("From ") and "number of days" not in result

        bad = await ask_and_get_plan(fake, ALICE, ALICE, "/query {nope")
        assert "not valid JSON" in bad["text"]
        usage = await ask_and_get_plan(fake, ALICE, ALICE, "/usage")
        assert usage["text"].startswith("Today:")
        await svc.store.preferences.add(ALICE, "Only trades RTH")
        settings = await ask_and_get_plan(fake, ALICE, ALICE, "/settings")
        assert "Only trades RTH" in settings["text"]  # visible to the person…
        assert "s:forget" in keyboard_data(settings)
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=settings["message_id"], data="s:confirm"
            )
        )
        await fake.wait_for("editMessageText", 2, chat_id=ALICE)
        assert (await svc.store.chats.get(ALICE)).settings.confirm_queries is False
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=settings["message_id"], data="s:forget"
            )
        )
        await fake.wait_for("editMessageText", 3, chat_id=ALICE)
        assert await svc.store.preferences.for_user(ALICE) == []  # …and clearable


async def test_query_button_reveals_the_script(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "range by weekday")
        run, _ = keyboard_data(plan)
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=plan["message_id"], data=run
            )
        )
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        _, show = keyboard_data(photo.result)  # CSV, Query
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=photo.result["message_id"], data=show
            )
        )
        revealed = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        assert '"group_by": "weekday"' in revealed[-1].result["text"]
        assert io.StringIO(revealed[-1].result["text"]).read().count("mean(range)") >= 1


class BrokenRunner(InlineRunner):
    async def run(self, job):
        raise RuntimeError("boom")


async def test_handler_exception_is_one_sentence_with_a_reference(
    fake_telegram: FakeBotAPI, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url, runner=BrokenRunner()):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "range by weekday")
        run, _ = keyboard_data(plan)
        fake.inject(
            fake.callback_update(
                chat_id=ALICE, user_id=ALICE, message_id=plan["message_id"], data=run
            )
        )
        messages = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        text = messages[-1].result["text"]
        assert text.startswith("Something broke on my side (reference ")
        ref = text.split("reference ")[1][:8]
        assert any(ref in record.getMessage() for record in caplog.records)
        assert "boom" not in text


async def test_webhook_mode(fake_telegram: FakeBotAPI, db_url: str) -> None:
    """BARB_WEBHOOK_URL: Telegram is told the URL and the secret; an update POSTed there is
    stored before the 200 (so a kill after the 200 loses nothing), answered once even if
    Telegram sends it twice, and a POST without the secret is refused."""
    import socket

    import httpx

    from bot.telegram.app import receiving
    from bot.telegram.intake import SECRET_HEADER, WEBHOOK_PATH

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    fake = fake_telegram
    store = await open_store(StoreSettings(database_url=db_url))
    runner = InlineRunner()
    settings = BotSettings(
        telegram_token=fake.token,
        webhook_url=f"http://127.0.0.1:{port}",
        webhook_port=port,
        webhook_listen="127.0.0.1",
        webhook_secret="s3cret-s3cret",
    )
    services = BotServices(
        settings=settings,
        assistant=Assistant(ScriptedProvider([brain] * 5), store, runner),
        store=store,
        runner=runner,
        limiter=RateLimiter(10),
        examples=(),
    )
    application = build_application(fake.token, services, base_url=fake.url)
    try:
        async with application:
            await application.start()
            async with receiving(application, settings):
                [hook] = fake.calls("setWebhook")
                assert hook.params["url"] == f"http://127.0.0.1:{port}/{WEBHOOK_PATH}"
                assert hook.params["secret_token"] == "s3cret-s3cret"
                update = fake.message_update(chat_id=ALICE, user_id=ALICE, text="hello")
                async with httpx.AsyncClient() as client:
                    refused = await client.post(hook.params["url"], json=update)
                    assert refused.status_code == 403
                    assert await store.updates.unhandled() == []  # not stored
                    headers = {SECRET_HEADER: "s3cret-s3cret"}
                    response = await client.post(hook.params["url"], json=update, headers=headers)
                    assert response.status_code == 200
                    # Stored by the time Telegram hears 200: a second delivery is refused.
                    assert await store.updates.receive([(update["update_id"], update)]) == []
                    again = await client.post(hook.params["url"], json=update, headers=headers)
                    assert again.status_code == 200
                [sent] = await fake.wait_for("sendMessage", chat_id=ALICE)
                assert sent.result["text"] == "Hi! Ask me about the bars."
                for _ in range(50):  # the handler's end is recorded just after its reply
                    if not await store.updates.unhandled():
                        break
                    await asyncio.sleep(0.02)
                assert await store.updates.unhandled() == []
            await application.stop()
        assert len(fake.calls("sendMessage", chat_id=ALICE)) == 1
    finally:
        await store.close()


async def test_handler_exception_is_worded_in_the_language_chosen_in_settings(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Telegram says English (the fake's presses carry no language_code), /settings says
    Russian: the error sentence is Russian, as everything else in the chat."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, runner=BrokenRunner()) as svc:
        await svc.store.chats.ensure(ALICE, "private")
        await svc.store.chats.update_settings(ALICE, language="ru")
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "range by weekday")
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        messages = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        assert messages[-1].result["text"].startswith("У меня что-то сломалось (код ")


LONG_REPLY = (
    "A really long suggested reply that goes on and on past the sixty characters a button can hold"
)


async def test_a_long_suggested_reply_is_cut_between_words_and_answers_whole(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p38c C16: a suggested reply's button was cut at 60 characters mid-word with no "…"
    ("…past the s"). Now it is cut between words with "…"; pressing it answers with the
    whole reply, and a second press says the question was answered."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            tool_call(
                "ask_user_clarification",
                question_text="Best by what?",
                suggested_replies=["Widest range", LONG_REPLY],
            ),
            text("Understood."),
        ]
    )
    async with barb_bot(fake, db_url, provider=provider):
        asked = await ask_and_get_plan(fake, ALICE, ALICE, "which was the best day?")
        labels = [b["text"] for row in asked["reply_markup"]["inline_keyboard"] for b in row]
        assert labels == [
            "Widest range",
            "A really long suggested reply that goes on and on past the…",
        ]
        option = keyboard_data(asked)[1]
        await press(fake, ALICE, ALICE, asked, option)
        await fake.wait_said(2, chat_id=ALICE)
        assert provider.requests[1].messages[-1].tool_results[-1].content.endswith(LONG_REPLY)
        await press(fake, ALICE, ALICE, asked, option)
        [*_, again] = await fake.wait_for("answerCallbackQuery", 2)
        assert again.params["text"] == "This question was already answered."
        assert len(provider.requests) == 2


async def test_a_suggested_reply_can_be_pressed_again_after_the_model_failed(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p40b F33: the model failed after a suggested reply was pressed; the person read
    "…please try again in a minute", but the question had lost its replies, and a press
    still showing them said "This question was already answered.". Now the failed
    continuation hands the question back: its replies come back under it, a press asks
    again, and the model reads the reply once (nothing of the failed attempt kept)."""
    fake = fake_telegram
    continued = 0

    def model(request: ModelRequest):
        nonlocal continued
        if request.messages[-1].role == "tool":
            continued += 1
            if continued == 1:
                raise ProviderUnavailable("connection refused", provider="scripted")
            return text("Widest range it is.")
        return tool_call(
            "ask_user_clarification",
            question_text="Best by what?",
            suggested_replies=["Widest range", "Biggest gain"],
        )

    provider = ScriptedProvider([model] * 10)
    async with barb_bot(fake, db_url, provider=provider) as svc:
        asked = await ask_and_get_plan(fake, ALICE, ALICE, "which was the best day?")
        replies = keyboard_data(asked)
        await press(fake, ALICE, ALICE, asked, replies[0])
        said = await fake.wait_said(2, chat_id=ALICE)
        assert said[1]["text"] == (
            "The language model is not reachable right now; please try again in a minute."
        )
        # The replies come back under the question, after its buttons went at the press,
        # before "try again" is said (p46c C1: they came after it).
        edits = fake.calls("editMessageReplyMarkup", chat_id=ALICE)
        assert keyboard_data(fake.message(ALICE, asked["message_id"])) == replies, edits
        [action] = await svc.store.pending.open_for_chat(ALICE)
        assert action.status == "pending"

        await press(fake, ALICE, ALICE, fake.message(ALICE, asked["message_id"]), replies[0])
        said = await fake.wait_said(3, chat_id=ALICE)

    assert said[2]["text"] == "Widest range it is."
    toasts = [r.params.get("text") for r in fake.calls("answerCallbackQuery")]
    assert toasts == [None, None]  # never "This question was already answered."
    # The model read the question, its clarification and the reply once each.
    last = provider.requests[-1].messages
    assert [m.role for m in last] == ["user", "assistant", "tool"]
    assert last[-1].tool_results[-1].content.endswith("Widest range")
    assert len(provider.requests) == 3


async def test_a_suggested_reply_tapped_twice_at_once_is_asked_once(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p40b: two taps on a suggested reply (or on both replies) that arrived together each
    passed the check and each asked: the model was called twice and the person got two
    plans, the first "Replaced by…". Now the press claims the clarification: one question,
    and the other tap is told the question was answered."""
    fake = fake_telegram

    def model(request: ModelRequest):
        last = request.messages[-1]
        if last.role == "tool":
            return text("Widest range it is.")
        if last.text == "which was the best day?":
            return tool_call(
                "ask_user_clarification",
                question_text="Best by what?",
                suggested_replies=["Widest range", "Biggest gain"],
            )
        return text("You're welcome.")

    provider = ScriptedProvider([model] * 10)
    async with barb_bot(fake, db_url, provider=provider):
        asked = await ask_and_get_plan(fake, ALICE, ALICE, "which was the best day?")
        widest, gain = keyboard_data(asked)
        await press(fake, ALICE, ALICE, asked, widest)
        await press(fake, ALICE, ALICE, asked, gain)
        await fake.wait_for("answerCallbackQuery", 2)
        await fake.wait_said(2, chat_id=ALICE)
        # Asked after both taps: answered after whatever they started (a chat's questions
        # are answered in the order they arrived).
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="thanks"))
        said = await fake.wait_said(3, chat_id=ALICE)
        while said[-1]["text"] != "You're welcome.":
            said = await fake.wait_said(len(said) + 1, chat_id=ALICE)
    said = [m["text"] for m in fake.said(ALICE)]
    assert said == ["Best by what?", "Widest range it is.", "You're welcome."]
    # The clarification, its one answer, the thanks: no second question.
    assert len(provider.requests) == 3
    # Either tap may win (they are handled at once); the model reads that one reply.
    answered = provider.requests[1].messages[-1].tool_results[-1].content
    assert answered.endswith(("Widest range", "Biggest gain"))
    toasts = [r.params.get("text") for r in fake.calls("answerCallbackQuery")]
    assert toasts == [None, "This question was already answered."]

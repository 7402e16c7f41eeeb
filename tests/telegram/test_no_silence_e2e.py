"""Issue 12 §6: nothing gets silence, nothing leaks; through the real PTB Application
against the fake Bot API, with the scripted model."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from bot_harness import (
    ALICE,
    GROUP,
    ask_and_get_plan,
    barb_bot,
    fetch_csv,
    keyboard_data,
    press,
)
from fake_bot_api import FakeBotAPI, media

from barb.data.store import data_path
from barb.reference import query_examples
from barb.settings import EngineSettings
from bot.llm.messages import Usage
from bot.llm.pricing import ModelPrice, PriceTable
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn
from bot.texts import t

COUNT_DAYS = {"session": "RTH", "from": "daily", "select": "count()"}
MODEL_FACING = ("say so in the answer", "1 rows", "Scanned", "Result:")


def rth_days(symbol: str, year: int | None = None) -> int:
    """RTH days (a bar opening 09:30-16:00 ET) in the sample, counted by hand."""
    bars = pd.read_parquet(data_path(symbol, EngineSettings()), columns=["timestamp", "minute"])
    rth = bars[(bars["minute"] >= 9 * 60 + 30) & (bars["minute"] < 16 * 60)]
    if year is not None:
        rth = rth[rth["timestamp"].dt.year == year]
    return rth["timestamp"].dt.date.nunique()


async def say(fake: FakeBotAPI, text: str, chat_id: int = ALICE, **kwargs) -> dict:
    return await ask_and_get_plan(fake, chat_id, ALICE, text, **kwargs)


@pytest.mark.parametrize("kind", ["photo", "document", "sticker", "voice"])
async def test_what_is_not_text_gets_one_line_and_no_model_call(
    fake_telegram: FakeBotAPI, db_url: str, kind: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        reply = await say(fake, "", media=media(kind))
        if kind == "document":  # NQ_1m.csv: a file of bars, which only admins import
            assert reply["text"] == t("upload_admins_only", "en")
        else:
            assert reply["text"].startswith("I read text only")
        assert "\n" not in reply["text"]
        assert svc.assistant.provider.requests == []
        assert len(fake.calls("sendMessage", chat_id=ALICE)) == 1


async def test_unknown_commands_get_one_line_and_no_model_call(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        reply = await say(fake, "/frobnicate now")
        assert reply["text"] == "I don't know /frobnicate: /help lists what I can do."
        # In a group, a command addressed to Barb is answered, in reply to the asker.
        bot = fake.bot["username"]
        grouped = await say(fake, f"/frobnicate@{bot}", GROUP, chat_type="supergroup")
        assert grouped["text"].startswith("I don't know /frobnicate")
        assert grouped["reply_to_message"]["text"] == f"/frobnicate@{bot}"
        assert svc.assistant.provider.requests == []


async def test_query_reads_as_a_person_reads_it_with_smart_quotes(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        # A phone keyboard's quotes, as typed on iOS.
        typed = "/query {“session”: “RTH”, “from”: “daily”, “select”: “count()”}"
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=typed))
        [document] = await fake.wait_for("sendDocument", chat_id=ALICE)
        assert document.files["document"].filename.startswith("NQ_RTH_number_of_days_")
        [answer] = await fake.wait_said(1, chat_id=ALICE)  # the chart, captioned
        headline, shown = answer["text"].split("\n\n", 1)  # the chart's headline first
        assert headline == f"number of days = {rth_days('NQ'):,}"
        assert shown.startswith("From ") and "number of days" not in shown  # said once
        assert keyboard_data(answer) == []  # the person typed the query: no Query button
        assert "Synthetic sample data" in shown
        for leak in MODEL_FACING:
            assert leak not in shown
        assert svc.assistant.provider.requests == []  # no model, no tokens


async def test_query_has_its_own_rate_limit(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    query = '/query {"session": "RTH", "from": "daily", "select": "count()"}'
    async with barb_bot(fake, db_url, questions_per_minute=1, queries_per_minute=2) as svc:
        await say(fake, "hello")  # the one question this minute
        for number in (1, 2):
            fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=query))
            await fake.wait_said(1 + number, chat_id=ALICE)  # its answer
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=query))
        [*_, limited] = await fake.wait_said(4, chat_id=ALICE)
        assert limited["text"].startswith("You are asking faster")
        assert len(fake.calls("sendDocument", chat_id=ALICE)) == 2
        assert len(svc.assistant.provider.requests) == 1  # only "hello"


async def test_cancel_drops_the_waiting_plan(fake_telegram: FakeBotAPI, db_url: str) -> None:
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS))]
    )
    async with barb_bot(fake, db_url, provider=provider) as svc:
        plan = await say(fake, "how many days?")
        done = await say(fake, "/cancel")
        assert done["text"] == "The plan is cancelled; nothing was run."
        # p40b: the plan said nothing once its buttons went, and read as still open.
        shown = fake.message(ALICE, plan["message_id"])
        assert shown["text"].endswith("⏵ Cancelled.")
        assert "reply_markup" not in shown
        assert await svc.store.pending.open_for_chat(ALICE) == []
        # The model reads that the plan was not run.
        rows = await svc.store.transcript.recent(ALICE, 5)
        assert any(r.role == "tool" and "instead of confirming" in r.model_summary for r in rows)
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        [answer] = await fake.wait_for("answerCallbackQuery")
        assert answer.params["text"] == (
            "This plan was cancelled or replaced by a newer one: it will not run."
        )
        assert fake.calls("sendDocument") == []
        nothing = await say(fake, "/cancel")
        assert nothing["text"] == "There is no plan waiting to be cancelled."


async def test_reset_ends_the_waiting_plan_with_a_status_line(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p40b: /reset took a waiting plan's buttons and left it without a word, unlike
    Cancel, a newer message, Done; it now says "⏵ Cancelled." and a late Run says why."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS))]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await say(fake, "how many days?")
        done = await say(fake, "/reset")
        assert done["text"] == "Conversation forgotten (settings and usage stay)."
        shown = fake.message(ALICE, plan["message_id"])
        assert shown["text"] == plan["text"] + "\n\n⏵ Cancelled."
        assert "reply_markup" not in shown
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        [answer] = await fake.wait_for("answerCallbackQuery")
        assert answer.params["text"] == (
            "This plan was cancelled or replaced by a newer one: it will not run."
        )
        assert fake.calls("sendPhoto") == []


async def test_start_deep_link_opens_with_its_example(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    second = query_examples()[1].question
    async with barb_bot(fake, db_url) as svc:
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="/start ex2"))
        welcome, answer = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        assert "Barb" in welcome.result["text"] and second in welcome.result["text"]
        [request] = svc.assistant.provider.requests
        assert request.messages[-1].text == second  # the example was asked
        assert answer.result["text"]
        plain = await say(fake, "/start whatever")  # an unknown link: the usual welcome
        assert len(keyboard_data(plain)) == 3


async def test_usage_says_price_unknown_for_a_model_without_a_price(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    tokens = Usage(input_tokens=1000, output_tokens=200)
    provider = ScriptedProvider([turn("Hi!", usage=tokens)])  # no price table: cost unknown
    async with barb_bot(fake, db_url, provider=provider):
        await say(fake, "hello")
        usage = await say(fake, "/usage")
        assert usage["text"] == "Today: 1,200 tokens, price unknown, 1 model call."
        assert "$0" not in usage["text"]


async def test_usage_shows_dollars_for_a_priced_model(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    price = ModelPrice(pattern="scripted", input=3.0, output=15.0)
    tokens = Usage(input_tokens=1000, output_tokens=200)
    provider = ScriptedProvider([turn("Hi!", usage=tokens)], prices=PriceTable([price]))
    async with barb_bot(fake, db_url, provider=provider):
        await say(fake, "hello")
        usage = await say(fake, "/usage")
        # 1000 × $3/M + 200 × $15/M = $0.006
        assert usage["text"] == "Today: 1,200 tokens, $0.0060, 1 model call."


async def test_in_a_forum_topic_every_reply_answers_the_question_there(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    topic = 77
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS)), text("Done.")]
    )
    question = f"@{fake.bot['username']} how many RTH days?"
    async with barb_bot(fake, db_url, provider=provider):
        plan = await say(fake, question, GROUP, chat_type="supergroup", thread_id=topic)
        assert plan["reply_to_message"]["text"] == question
        assert plan["message_thread_id"] == topic
        await press(fake, GROUP, ALICE, plan, keyboard_data(plan)[0])
        [_, answer] = await fake.wait_said(2, chat_id=GROUP)  # the plan, the captioned chart
        document = await fetch_csv(fake, GROUP, ALICE, answer)
        for sent in (answer, document.result):
            assert sent["reply_to_message"]["text"] == question
            assert sent["message_thread_id"] == topic
        assert answer["text"].endswith("Done.")


async def test_query_answers_in_russian_for_a_russian_speaker(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    typed = "/query {«session»: «RTH», «from»: «daily», «period»: «2024», «where»: «range > 0»}"
    async with barb_bot(fake, db_url):
        fake.inject(
            fake.message_update(chat_id=ALICE, user_id=ALICE, text=typed, language_code="ru")
        )
        [answer] = await fake.wait_said(1, chat_id=ALICE)
        headline, shown = answer["text"].split("\n\n", 1)  # the chart's headline, in Russian
        assert re.fullmatch(
            r"закрытие: последнее \d{1,3}(\u00a0\d{3})*(,\d+)? \(2024-12-31\)", headline
        )
        lines = shown.splitlines()
        assert lines[0].startswith(f"Строк: {rth_days('NQ', 2024)} ") and "в CSV" in lines[0]
        # The table in a <pre> block of its own, its columns aligned.
        # The bars' columns as the chart names them, in Russian.
        assert lines[2].split() == ["date", "открытие", "максимум", "минимум", "закрытие"]
        assert lines[3].startswith("2024-01-02")
        entities = answer.get("caption_entities") or answer.get("entities") or []
        assert any(e["type"] == "pre" for e in entities)
        assert "Синтетические данные" in shown
        for leak in MODEL_FACING:
            assert leak not in shown


@pytest.mark.parametrize("words", ["  \n ", "```\n```"])
async def test_a_blank_model_reply_to_a_question_says_what_happened(
    fake_telegram: FakeBotAPI, db_url: str, words: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url, provider=ScriptedProvider([text(words)])):
        reply = await say(fake, "hello")
        assert reply["text"] == "The model gave an empty answer; please ask again."


@pytest.mark.parametrize("words", ["  \n ", "```\n```"])
async def test_a_blank_model_reply_after_run_keeps_the_answer_and_its_query_button(
    fake_telegram: FakeBotAPI, db_url: str, words: str
) -> None:
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS)), text(words)]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await say(fake, "how many days?")
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        caption = photo.result["caption"]
        assert caption.endswith("\n\n(no answer)")
        # The headline (the count, by hand) is bold, and the Query button is there.
        headline = caption.split("\n\n")[0]
        assert f"{rth_days('NQ'):,}" in headline
        assert any(e["type"] == "bold" for e in photo.result["caption_entities"])
        assert any(d.startswith("q:") for d in keyboard_data(photo.result))


async def test_raw_html_from_the_model_is_formatted_not_shown(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    words = "Monday is <b>widest</b>.<br>Friday is narrowest. <!-- hidden note -->"
    async with barb_bot(fake, db_url, provider=ScriptedProvider([text(words)])):
        reply = await say(fake, "hello")
        assert reply["text"] == "Monday is widest.\nFriday is narrowest."
        [bold] = reply["entities"]
        assert (bold["type"], bold["offset"], bold["length"]) == ("bold", 10, 6)


async def test_a_query_error_says_its_kind_its_field_and_its_hint(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    typed = '/query {"session": "RTH", "from": "daily", "select": "mean(nosuch)"}'
    async with barb_bot(fake, db_url):
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=typed))
        [answer] = await fake.wait_said(1, chat_id=ALICE)
        said = answer["text"]
        # What kind of error, in which field; the engine's sentence; its hint, named.
        kind, columns, hint = said.split("\n")
        assert kind == "The query did not run: there is no column nosuch in field select."
        assert columns.startswith("Columns there are: close, high, low, open, range")
        assert hint.startswith("Hint: add it first") and "map" in hint


async def test_a_query_error_in_russian_is_russian_around_the_engines_words(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """The commonest error, a column not there, is said in Russian whole: the column, the
    field, the columns there are (it read «такой колонки нет» over the engine's English
    "Column 'nosuch' does not exist. Available: …")."""
    fake = fake_telegram
    typed = '/query {"session": "RTH", "from": "daily", "select": "mean(nosuch)"}'
    async with barb_bot(fake, db_url):
        fake.inject(
            fake.message_update(chat_id=ALICE, user_id=ALICE, text=typed, language_code="ru")
        )
        [answer] = await fake.wait_said(1, chat_id=ALICE)
    lines = answer["text"].split("\n")
    assert lines[0] == "Запрос не выполнен: колонки nosuch нет в поле select."
    assert lines[1].startswith("Есть колонки: close, high, low, open, range")
    assert lines[2].startswith("Подсказка: ") and "map" in lines[2]
    # The field, the engine's sentence and its hint arrive as code, not as raw backticks.
    codes = [
        answer["text"][e["offset"] : e["offset"] + e["length"]]
        for e in answer.get("entities", [])
        if e["type"] == "code"
    ]
    assert codes[:2] == ["nosuch", "select"] and codes[2] == lines[1].split(": ", 1)[1]
    assert "`" not in answer["text"]

"""An answer through the real bot, as Telegram receives it: Markdown rendered, at most three
Bot API requests under the flood limit, the CSV behind its button, sent once."""

from __future__ import annotations

import asyncio
import json

import pytest
from bot_harness import ALICE, WEEKDAY_RANGE, ask_and_get_plan, barb_bot, keyboard_data, press
from fake_bot_api import FakeBotAPI, formatted

from barb import execute
from bot.llm.messages import ModelRequest
from bot.llm.scripted import text, tool_call, turn

#: Requests that count against Telegram's ~30 messages a second (answering a button and
#: "sending photo…" do not).
FLOOD_COUNTED = ("sendMessage", "sendPhoto", "sendDocument", "editMessageText", "sendMediaGroup")
#: How a Russian chart names the weekdays.
RU_DAYS = {"Mon": "Пн", "Tue": "Вт", "Wed": "Ср", "Thu": "Чт", "Fri": "Пт"}

RUSSIAN_ANSWER = """\
### Итог

Самый **широкий** день — *понедельник*: средний диапазон `mean(range)` больше, чем в пятницу.

| День | Среднее |
|------|--------:|
| Пн   |   312,4 |
| Пт   |   287,1 |

- 2 < 3 & a_b * c
"""


def russian_model(long: bool):
    def brain(request: ModelRequest):
        last = request.messages[-1]
        if last.role == "user":
            return turn(
                "Посчитаю **средний** диапазон RTH по дням недели <по всем данным>.",
                tool_call("execute_query", query=WEEKDAY_RANGE),
            )
        extra = "\n\n".join(f"Абзац {i}: *подробности* года {2008 + i}." for i in range(40))
        return text(RUSSIAN_ANSWER + ("\n" + extra if long else ""))

    return brain


def counted_since(fake: FakeBotAPI, start: int) -> list[str]:
    return [
        r.method for r in fake.requests[start:] if r.method in FLOOD_COUNTED and r.status == 200
    ]


async def test_an_answer_is_three_requests_with_the_commentary_as_caption(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url, model=russian_model(long=False)):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "средний диапазон по дням недели?")
        shown, _ = formatted(plan["text"], None, plan.get("entities"))
        assert "<по всем данным>" in shown and "**" not in shown
        run, _ = keyboard_data(plan)
        start = len(fake.requests)
        await press(fake, ALICE, ALICE, plan, run)
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        await fake.wait_for("editMessageText", 2, chat_id=ALICE)
        done = fake.message(ALICE, plan["message_id"])
        # In the plan's language (the press came from an English phone).
        assert done["text"].endswith("⏵ Готово.") and not keyboard_data(done)

        # Running…, the chart with the commentary, Done.: three requests, nothing else sent.
        assert counted_since(fake, start) == ["editMessageText", "sendPhoto", "editMessageText"]
        caption = photo.result["caption"]
        # The headline first: the number, in Russian, in one bold line; then the commentary.
        headline, blank, commentary = caption.split("\n", 2)
        table = execute(WEEKDAY_RANGE, "NQ").table
        assert table is not None
        widest = table.set_index("weekday")["mean_range"]
        # The weekdays are within noise: the range, no winner (p47d D1).
        assert headline.startswith(f"средний диапазон: {RU_DAYS[widest.idxmin()]} ")
        assert f" – {RU_DAYS[widest.idxmax()]} " in headline
        assert headline.endswith("(разница в пределах шума)")
        # Points at NQ's tick, two decimals.
        assert f"{widest.max():.2f}".replace(".", ",") + " пункта" in headline
        assert blank == "" and commentary.startswith("Итог\n\nСамый широкий день — понедельник")
        assert "Пн      312,4" in caption and "2 < 3 & a_b * c" in caption
        entities = photo.result["caption_entities"]
        assert entities[0] == {"type": "bold", "offset": 0, "length": len(headline)}
        assert {"bold", "italic", "code", "pre"} <= {e["type"] for e in entities}
        csv_button, query_button = keyboard_data(photo.result)
        assert csv_button.startswith("f:") and query_button.startswith("q:")

        # The CSV comes when asked for, once, and is the engine's result.
        await press(fake, ALICE, ALICE, photo.result, csv_button)
        [document] = await fake.wait_for("sendDocument", chat_id=ALICE)
        # A Russian chat's file, as Russian-locale Excel reads it: ";" and decimal commas.
        rows = [
            line.split(";")
            for line in document.files["document"].content.decode("utf-8-sig").splitlines()
        ]
        engine = execute(WEEKDAY_RANGE, "NQ")
        assert [r[0] for r in rows[1:]] == list(RU_DAYS.values())  # as its chart names them
        assert [float(r[1].replace(",", ".")) for r in rows[1:]] == pytest.approx(
            engine.table["mean_range"].tolist(), rel=1e-5
        )
        # Sent, its button goes and the Query button stays (p38c: it stayed, and a second
        # press was told the CSV was "already sent, or is no longer kept").
        [unmarked] = await fake.wait_for("editMessageReplyMarkup", chat_id=ALICE)
        assert unmarked.params["message_id"] == photo.result["message_id"]
        after = fake.message(ALICE, photo.result["message_id"])
        assert keyboard_data(after) == [query_button] and after["caption"] == caption
        # A press from a screen that still shows it sends nothing twice, and asks Telegram
        # to remove nothing more.
        await press(fake, ALICE, ALICE, photo.result, csv_button)
        answers = await fake.wait_for("answerCallbackQuery", 3)
        assert "already sent" in (answers[-1].params.get("text") or "")
        await asyncio.sleep(0.1)
        assert len(fake.calls("sendDocument", chat_id=ALICE)) == 1
        assert len(fake.calls("editMessageReplyMarkup", chat_id=ALICE)) == 1


async def test_a_commentary_too_long_for_a_caption_follows_the_chart(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url, model=russian_model(long=True)):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "средний диапазон по дням недели?")
        run, _ = keyboard_data(plan)
        await press(fake, ALICE, ALICE, plan, run)
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        messages = await fake.wait_for("sendMessage", 2, chat_id=ALICE)

        assert [b[:2] for b in keyboard_data(photo.result)] == ["f:"]
        commentary = messages[-1].result
        assert (
            commentary["text"].startswith("Итог") and "Абзац 39: подробности" in commentary["text"]
        )
        assert keyboard_data(commentary)[0].startswith("q:")
        assert fake.calls("sendDocument") == []


LONG_QUERY = {
    "session": "RTH",
    "from": "daily",
    # Under 100 columns: more make pandas warn of a fragmented frame (an error in tests).
    "map": {f"spread_{i}": f"rolling_mean(high - low, {i + 2}) + 0" for i in range(90)},
    "select": "mean(spread_1)",
}


def long_query_model(request: ModelRequest):
    if request.messages[-1].role == "user":
        return turn("Many columns.", tool_call("execute_query", query=LONG_QUERY))
    return text("Mean spread: see the chart.")


async def test_the_query_behind_an_answer_comes_whole_however_long(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Too long for one message (Telegram refused it, cut inside its <pre>): it comes in
    several, each a valid <pre> block, and together they are the query that ran."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, model=long_query_model):
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text="many columns"))
        plan = None
        for _ in range(200):
            plan = next((m for m in fake.messages(ALICE) if keyboard_data(m)), None)
            if plan:
                break
            await asyncio.sleep(0.05)
        assert plan is not None
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        await press(fake, ALICE, ALICE, photo.result, keyboard_data(photo.result)[-1])
        await fake.wait_for("sendMessage", before + 2, chat_id=ALICE)
        await asyncio.sleep(0.5)  # every part sent

        parts = fake.calls("sendMessage", chat_id=ALICE)[before:]
        assert all(r.status == 200 for r in parts), fake.describe()
        blocks = []
        for part in parts:  # the plan after the query may come in a message of its own
            shown, entities = formatted(part.result["text"], None, part.result.get("entities"))
            encoded = shown.encode("utf-16-le")
            blocks += [
                encoded[2 * e["offset"] : 2 * (e["offset"] + e["length"])].decode("utf-16-le")
                for e in entities
                if e["type"] == "pre"
            ]
        assert len(blocks) >= 2
        ran = json.loads("\n".join(blocks))
        assert ran["map"] == LONG_QUERY["map"] and ran["instrument"] == "NQ"

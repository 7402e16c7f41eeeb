"""The answer's photo through the real PTB Application: a portrait chart, drawn in the
asker's language, captioned with the model's answer (one request for chart and words)."""

from __future__ import annotations

import io

import pytest
from bot_harness import ALICE, BOB, WEEKDAY_RANGE, ask_and_get_plan, barb_bot, keyboard_data, press
from fake_bot_api import FakeBotAPI
from PIL import Image

from barb import execute
from barb.charts import chart_headline


@pytest.mark.parametrize(
    ("user", "question", "code", "language"),
    [
        (ALICE, "average RTH range by weekday?", "en", "en"),
        (BOB, "средний диапазон RTH по weekday?", "ru", "ru"),
    ],
)
async def test_the_answer_photo_is_a_portrait_chart_captioned_with_the_answer(
    fake_telegram: FakeBotAPI, db_url: str, user: int, question: str, code: str, language: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        plan = await ask_and_get_plan(fake, user, user, question, language_code=code)
        run, _ = keyboard_data(plan)
        await press(fake, user, user, plan, run)
        [photo] = await fake.wait_for("sendPhoto", chat_id=user)

    headline = chart_headline(execute(WEEKDAY_RANGE, "NQ"), language)
    # NQ's weekdays are within noise of each other: said, no winner named (p47d D1)
    word = {"en": "within noise", "ru": "в пределах шума"}[language]
    assert headline is not None and word in headline  # the chart's title, in their language
    # The caption starts with the chart's headline in one line, then the commentary.
    first_line, blank, commentary = photo.result["caption"].split("\n", 2)
    assert first_line == headline and blank == "" and commentary.startswith("Answer:")
    png = Image.open(io.BytesIO(photo.files["photo"].content))
    assert png.width < png.height  # portrait, for a phone

"""The answer's photo through the real PTB Application: a portrait chart whose caption opens
with the number it proves, in the asker's language."""

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
async def test_the_photo_caption_opens_with_the_headline(
    fake_telegram: FakeBotAPI, db_url: str, user: int, question: str, code: str, language: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        plan = await ask_and_get_plan(fake, user, user, question, language_code=code)
        run, _ = keyboard_data(plan)
        await press(fake, user, user, plan, run)
        [photo] = await fake.wait_for("sendPhoto", chat_id=user)

    expected = chart_headline(execute(WEEKDAY_RANGE, "NQ"), language)
    assert expected is not None
    caption = photo.result["caption"]
    assert caption.splitlines()[0] == expected
    word = {"en": "highest", "ru": "максимум"}[language]
    assert word in caption.splitlines()[0]
    png = Image.open(io.BytesIO(photo.files["photo"].content))
    assert png.width < png.height  # portrait, for a phone

"""Issue 12 §5 over the real Telegram path: the command menu registered once per language,
the language taken from Telegram's ``language_code`` unless /settings fixes it, the settings
message re-rendered in the language it was switched to, and a Russian plan's numbers
written as Russian writes them."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from pathlib import Path

import pytest
from bot_harness import ALICE, WEEKDAY_RANGE, ask_and_get_plan, barb_bot, keyboard_data, press
from fake_bot_api import FakeBotAPI

from barb.data import sample
from barb.data.importer import import_file
from barb.data.store import data_path, read_meta
from barb.i18n import day
from barb.settings import EngineSettings
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn
from bot.telegram.commands import COMMANDS

_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
#: The menu as written in the Russian catalog, checked word for word for two commands.
RUSSIAN_MENU = {"start": "Что умеет Barb, с примерами", "usage": "Токены и стоимость за сегодня"}


async def test_the_menu_is_registered_once_per_language(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        calls = await fake.wait_for("setMyCommands", 2)
    assert len(fake.calls("setMyCommands")) == 2
    languages = sorted(call.params.get("language_code", "") for call in calls)
    assert languages == ["", "ru"]  # English for everyone, Russian for language_code ru
    english, russian = fake.my_commands(), fake.my_commands(language_code="ru")
    names = [c.name for c in COMMANDS]
    assert [c["command"] for c in english] == names == [c["command"] for c in russian]
    for en, ru in zip(english, russian, strict=True):
        assert _CYRILLIC.search(ru["description"]), ru  # translated, no English fallback
        assert not _CYRILLIC.search(en["description"]), en
    by_name = {c["command"]: c["description"] for c in russian}
    assert {name: by_name[name] for name in RUSSIAN_MENU} == RUSSIAN_MENU


async def test_switching_the_language_re_renders_settings_in_the_new_language(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """An English phone: /settings in English; switched to Russian (auto → en → ru), the
    same message is in Russian, and so is what follows; back to auto, English again."""
    fake = fake_telegram
    async with barb_bot(fake, db_url):
        shown = await ask_and_get_plan(fake, ALICE, ALICE, "/settings", language_code="en")
        assert shown["text"].startswith("Settings: confirmation on")
        assert "s:language" in keyboard_data(shown)

        async def switch() -> dict:
            edits = len(fake.calls("editMessageText", chat_id=ALICE))
            await press(fake, ALICE, ALICE, shown, "s:language")
            await fake.wait_for("editMessageText", edits + 1, chat_id=ALICE)
            return fake.message(ALICE, shown["message_id"])

        english = await switch()
        assert "language English" in english["text"]
        russian = await switch()
        assert russian["text"].startswith("Настройки: подтверждение вкл")
        assert "язык русский" in russian["text"]
        labels = [b["text"] for row in russian["reply_markup"]["inline_keyboard"] for b in row]
        assert "Язык: русский" in labels and "Забыть мои предпочтения" in labels
        help_text = await ask_and_get_plan(fake, ALICE, ALICE, "/help", language_code="en")
        assert help_text["text"].startswith("Задайте вопрос по барам")
        back = await switch()
        assert back["text"].startswith("Settings:") and "as Telegram's" in back["text"]


async def test_a_russian_plan_writes_its_numbers_as_russian_does(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Babel's Russian groups digits with a no-break space (U+00A0): ``первые 1 500 строк``."""
    query = {"session": "RTH", "from": "5m", "select": "range", "limit": 1500}
    provider = ScriptedProvider([turn("Покажу бары.", tool_call("execute_query", query=query))])
    async with barb_bot(fake_telegram, db_url, provider=provider):
        plan = await ask_and_get_plan(
            fake_telegram, ALICE, ALICE, "покажи 1500 баров", language_code="ru"
        )
    assert "первые 1\u00a0500 строк" in plan["text"]
    assert "1,500" not in plan["text"] and "1500 строк" not in plan["text"]


async def test_examples_are_offered_in_russian_with_the_chat_instrument_s_times(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """/examples in a Russian chat offered English questions, and pressing one asked the
    English question; "$opening_range" was shown as written, not as the chat's 09:30-09:45."""
    from barb.instruments import load_instrument
    from barb.reference import example_questions, query_examples

    provider = ScriptedProvider([turn("Готово.")] * 3)
    russian = example_questions(query_examples(), "ru", load_instrument("NQ"))
    async with barb_bot(fake_telegram, db_url, provider=provider):
        shown = await ask_and_get_plan(fake_telegram, ALICE, ALICE, "/examples", language_code="ru")
        labels = [b["text"] for row in shown["reply_markup"]["inline_keyboard"] for b in row]
        # A long question's label is cut between words, with "…" (p38c: cut at 60
        # characters mid-word, "…доля закрытых в тот ", "…последнего года (").
        for label, question in zip(labels, russian, strict=True):
            kept = label.removesuffix("…")
            assert len(label) <= 60 and question.startswith(kept)
            assert label == question or question[len(kept)] == " "
        assert sum(label.endswith("…") for label in labels) == sum(len(q) > 60 for q in russian)
        assert any(label.endswith("года…") for label in labels)
        assert "(09:30-09:45)" in russian[15] and "$" not in "".join(russian)
        await press(fake_telegram, ALICE, ALICE, shown, keyboard_data(shown)[0], language_code="ru")
        await fake_telegram.wait_for("sendMessage", 2, chat_id=ALICE)
    asked = [m.text for m in provider.requests[0].messages if m.role == "user"]
    assert asked[-1] == russian[0] == "Средний диапазон RTH по дням недели?"


@pytest.mark.parametrize(
    ("phone", "question", "pressed", "status"),
    [
        ("ru", "average RTH range by weekday?", "run", "⏵ Done."),
        ("en", "средний диапазон RTH по дням недели?", "run", "⏵ Готово."),
        ("ru", "average RTH range by weekday?", "cancel", "⏵ Cancelled."),
    ],
)
async def test_a_plan_keeps_its_language_when_pressed_from_a_phone_in_another(
    fake_telegram: FakeBotAPI, db_url: str, phone: str, question: str, pressed: str, status: str
) -> None:
    """The plan is written in its question's language; Run or Cancel pressed from a phone
    in the other language re-renders it in that same language, header and status: the plan
    as sent, then its status, and not one word of the phone's language."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Computing.", tool_call("execute_query", query=WEEKDAY_RANGE)), text("Ok.")]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, question, language_code=phone)
        run, cancel = keyboard_data(plan)
        await press(
            fake, ALICE, ALICE, plan, run if pressed == "run" else cancel, language_code=phone
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10.0
        while "…" in (shown := fake.message(ALICE, plan["message_id"])["text"])[-12:] or (
            shown == plan["text"]
        ):
            assert loop.time() < deadline, f"the plan still says {shown[-30:]!r}"
            await asyncio.sleep(0.02)
    assert shown == f"{plan['text']}\n\n{status}"
    russian_plan = bool(_CYRILLIC.search(question))
    assert ("План:" in shown) is russian_plan and ("Plan:" in shown) is not russian_plan


@pytest.mark.parametrize(
    ("lang", "with_plan", "at_once"),
    [
        ("en", "you press Run", "I compute it at once and send the answer"),
        ("ru", "вы нажмёте Запустить", "я сразу посчитаю и пришлю ответ"),
    ],
)
async def test_start_describes_the_chat_s_confirmation_setting(
    fake_telegram: FakeBotAPI, db_url: str, lang: str, with_plan: str, at_once: str
) -> None:
    """/start said "you press Run" even with confirmation off in /settings, where a question
    is computed at once and no Run button ever comes. Now it says what the setting does,
    and where to turn the plan back on."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        before = await ask_and_get_plan(fake, ALICE, ALICE, "/start", language_code=lang)
        shown = await ask_and_get_plan(fake, ALICE, ALICE, "/settings", language_code=lang)
        await press(fake, ALICE, ALICE, shown, "s:confirm")
        edits = fake.calls("editMessageText", chat_id=ALICE)
        await fake.wait_for("editMessageText", len(edits) + 1, chat_id=ALICE)
        assert not (await svc.store.chats.get(ALICE)).settings.confirm_queries
        after = await ask_and_get_plan(fake, ALICE, ALICE, "/start", language_code=lang)

    assert with_plan in before["text"] and at_once not in before["text"]
    assert at_once in after["text"] and "/settings" in after["text"]
    assert with_plan not in after["text"]
    assert len(keyboard_data(after)) == 3  # the example questions, as before


@pytest.mark.parametrize(
    ("lang", "with_chart", "csv_only"),
    [
        (
            "en",
            "the answer with a chart and a CSV that prove it.",
            "the answer with a CSV that proves it.",
        ),
        ("ru", "ответ с графиком и CSV в доказательство.", "ответ с CSV в доказательство."),
    ],
)
async def test_start_describes_the_chat_s_chart_setting(
    fake_telegram: FakeBotAPI, db_url: str, lang: str, with_chart: str, csv_only: str
) -> None:
    """/start promised "a chart and a CSV" with charts turned off in /settings, where an
    answer brings the CSV alone."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        before = await ask_and_get_plan(fake, ALICE, ALICE, "/start", language_code=lang)
        shown = await ask_and_get_plan(fake, ALICE, ALICE, "/settings", language_code=lang)
        await press(fake, ALICE, ALICE, shown, "s:charts")
        edits = fake.calls("editMessageText", chat_id=ALICE)
        await fake.wait_for("editMessageText", len(edits) + 1, chat_id=ALICE)
        assert not (await svc.store.chats.get(ALICE)).settings.charts
        after = await ask_and_get_plan(fake, ALICE, ALICE, "/start", language_code=lang)

    assert with_chart in before["text"] and csv_only not in before["text"]
    assert csv_only in after["text"] and with_chart not in after["text"]


@pytest.mark.parametrize("source", ["imported", "synthetic"])
@pytest.mark.parametrize(
    ("lang", "line", "note"),
    [
        ("en", "Instrument: NQ (Nasdaq 100 E-mini), data", ", synthetic sample"),
        ("ru", "Инструмент: NQ (Nasdaq 100 E-mini), данные", ", синтетические данные"),
    ],
)
async def test_start_s_data_dates_are_not_followed_by_a_second_period(
    fake_telegram: FakeBotAPI,
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
    line: str,
    note: str,
    source: str,
) -> None:
    """Russian dates end in «г.», and the data line ended in a full stop: over imported data
    (no "synthetic" note after the date) /start read «данные 18 мар. 2024 г. — 22 мар.
    2024 г..»."""
    engine = EngineSettings(data_dir=tmp_path / "data")
    if source == "imported":
        bars = tmp_path / "bars.csv"
        bars.write_text(
            "Date,Time,Open,High,Low,Close,Volume\n"
            "2024-03-18,09:30,100,101,99.5,100.5,10\n"
            "2024-03-22,09:31,100.5,101,100,100.75,20\n"
        )
        import_file(bars, "NQ", engine, timezone="America/Chicago", any_level=True)
    else:
        real = sample.generate_sample
        monkeypatch.setattr(
            sample,
            "generate_sample",
            lambda instrument: real(instrument, dt.date(2024, 3, 18), dt.date(2024, 3, 22)),
        )
        sample.write_samples(["NQ"], engine, False)
    meta = read_meta(data_path("NQ", engine))
    assert (meta.source, meta.first_date, meta.last_date) == (
        source,
        dt.date(2024, 3, 18),
        dt.date(2024, 3, 22),
    )
    async with barb_bot(fake_telegram, db_url, engine_settings=engine):
        start = await ask_and_get_plan(fake_telegram, ALICE, ALICE, "/start", language_code=lang)

    first, last = day(dt.date(2024, 3, 18), lang), day(dt.date(2024, 3, 22), lang)
    expected = f"{line} {first} — {last}{note if source == 'synthetic' else ''}\n"
    assert expected in start["text"], start["text"]
    assert ".." not in start["text"]

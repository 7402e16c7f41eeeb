"""What the person confirmed is what runs, whatever changes between the plan and the press
(the instrument's data, imported through the bot while the plan waits), and the plan says it
in the person's words, as it reaches the fake Bot API."""

from __future__ import annotations

import csv
import datetime as dt
import sys
from pathlib import Path

import pandas as pd
import pytest
from bot_harness import ALICE, ask_and_get_plan, barb_bot, fetch_csv, keyboard_data, press
from fake_bot_api import FakeBotAPI

from barb.data.store import data_path
from barb.settings import EngineSettings
from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))
import bar_files as bf

LAST_3 = {
    "instrument": "ES",
    "session": "ETH",
    "from": "daily",
    "period": "last_3_bars",
    "select": "mean(range)",
}


async def import_file(fake: FakeBotAPI, path: Path) -> str:
    """ALICE (an admin) sends ``path`` as ES bars and presses Import: the bot's last words."""
    before = len(fake.calls("sendMessage", chat_id=ALICE))
    fake.inject(
        fake.document_update(
            chat_id=ALICE,
            user_id=ALICE,
            content=path.read_bytes(),
            file_name=path.name,
            caption="ES",
        )
    )
    [*_, offer] = await fake.wait_for("sendMessage", before + 1, chat_id=ALICE)
    await press(fake, ALICE, ALICE, offer.result, keyboard_data(offer.result)[0])
    [*_, done] = await fake.wait_for("sendMessage", before + 2, chat_id=ALICE)
    return done.result["text"]


def answer(request: ModelRequest):
    last = request.messages[-1]
    return text("Ответ: " + last.tool_results[-1].content.splitlines()[0])


async def test_the_last_bars_of_a_plan_are_the_bars_run_after_an_import(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "средний диапазон последних 3 дней": the plan said "последние 3 бара"; a week of ES
    bars was imported before Run, and Run averaged 3 days the person never confirmed. The
    plan now names the data's last date, and Run runs those 3 bars (checked against the
    file imported, not the sample)."""
    fake = fake_telegram
    engine = EngineSettings(data_dir=tmp_path / "data")
    monkeypatch.setattr("barb.interpreter.default_settings", lambda: engine)  # the runs'
    first = bf.week_of_bars(level=5000)  # 2024-03-18 … 2024-03-22, at ES's level
    second = bf.week_of_bars(dt.date(2024, 3, 24), seed=8, level=5000)  # 2024-03-25 … 03-29
    provider = ScriptedProvider(
        [
            turn("Средний диапазон последних 3 дней.", tool_call("execute_query", query=LAST_3)),
            answer,
        ]
    )
    async with barb_bot(fake, db_url, provider=provider, engine_settings=engine, admins={ALICE}):
        said = await import_file(fake, bf.plain_csv(tmp_path / "week1.csv", first))
        assert "the data now runs Mar 18, 2024 to Mar 22, 2024" in said
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "средний диапазон последних 3 дней ES")
        assert "Период: последние 3 бара по 2024-03-22" in plan["text"]
        said = await import_file(fake, bf.plain_csv(tmp_path / "week2.csv", second))
        assert "the data now runs Mar 18, 2024 to Mar 29, 2024" in said
        before = len(fake.said(ALICE))
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        [*_, reply] = await fake.wait_said(before + 1, chat_id=ALICE)
        document = await fetch_csv(fake, ALICE, ALICE, reply)
    # Independently: ETH days run 18:00 to 17:00, dated by the day they end on.
    stamps = first["timestamp"].dt.tz_convert("America/New_York").dt.tz_localize(None)
    days = first.assign(day=(stamps + pd.Timedelta(hours=6)).dt.date).groupby("day")
    ranges = (days["high"].max() - days["low"].min()).iloc[-3:]
    assert [str(d) for d in ranges.index] == ["2024-03-20", "2024-03-21", "2024-03-22"]
    rows = list(
        csv.reader(
            document.files["document"].content.decode("utf-8-sig").splitlines(), delimiter=";"
        )
    )
    assert [row[0] for row in rows[1:]] == ["2024-03-20", "2024-03-21", "2024-03-22"]
    mean = f"{ranges.mean():.2f}".replace(".", ",")
    assert reply["caption"].startswith(f"средний диапазон = {mean} пункта")


async def test_a_russian_plan_says_its_filter_in_russian(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """«сколько дней роста на большом объёме» got «Фильтр: закрытие > открытие and объём >
    100000 or not диапазон > 300»: English joins among Russian words, and a "not" that read
    as applying to the range alone."""
    fake = fake_telegram
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "where": "close > open and volume > 100000 or not (range > 300)",
        "select": "count()",
    }
    provider = ScriptedProvider([turn("Считаю дни.", tool_call("execute_query", query=query))])
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "сколько дней роста на объёме?")
    filtered = [line for line in plan["text"].splitlines() if line.startswith("Фильтр:")]
    assert filtered == ["Фильтр: закрытие > открытие и объём > 100000 или не (диапазон > 300)"]


async def test_a_russian_plan_names_what_it_sorts_by_in_words(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """«в какой день недели диапазон больше всего?» got «Затем: Покажу бары; Сортировка:
    mean_range (по убыванию); первая 1 строка»: the engine's name for the average, and
    "bars" for the five weekday averages the then stage sorts."""
    fake = fake_telegram
    query = {
        "session": "RTH",
        "from": "daily",
        "period": "2025",
        "map": {"weekday": "dayname()"},
        "group_by": "weekday",
        "select": "mean(range)",
        "then": {"sort": "mean_range desc", "limit": 1},
    }
    provider = ScriptedProvider([turn("Считаю.", tool_call("execute_query", query=query))])
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "в какой день недели диапазон больше?")
    [then] = [line for line in plan["text"].splitlines() if line.startswith("Затем:")]
    assert then == "Затем: Сортировка: средний диапазон (по убыванию); первая 1 строка"


COUNT_DAYS = {"session": "RTH", "from": "daily", "select": "count()"}
# Refused only when it runs: the exchange was closed.
CHRISTMAS = {"session": "RTH", "from": "daily", "period": "2025-12-25", "select": "mean(range)"}
CHRISTMAS_EVE = {**CHRISTMAS, "period": "2025-12-24"}


def results_text(request: ModelRequest):
    results = [r for m in request.messages if m.role == "tool" for r in m.tool_results]
    return text("Ответ: " + " | ".join(r.content.splitlines()[0] for r in results))


async def test_each_answer_of_a_corrected_plan_keeps_its_own_csv(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Two queries confirmed: the count of days ran and was shown, Christmas failed, and the
    model's corrected plan (Christmas Eve) was confirmed and answered. Both answers' CSV
    buttons were the question's "proof 0": the one under «средний диапазон = 190,50» sent
    the count's 4,647 days, and the count's sent Christmas Eve."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            turn(
                "Дни и диапазон на Рождество.",
                tool_call("execute_query", query=COUNT_DAYS),
                tool_call("execute_query", query=CHRISTMAS),
            ),
            turn("Исправляю дату.", tool_call("execute_query", query=CHRISTMAS_EVE)),
            results_text,
        ]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "сколько дней и диапазон на Рождество")
        assert "Запрос 1 из 2:" in plan["text"] and "Запрос 2 из 2:" in plan["text"]
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        count, corrected = (await fake.wait_said(3, chat_id=ALICE))[1:3]
        # One day reads as one date, not "2025-12-24 (2025-12-24 — 2025-12-24)".
        assert "Период: 2025-12-25\n" in plan["text"] + "\n"
        assert corrected["text"].endswith("✎ Период: 2025-12-24")
        await press(fake, ALICE, ALICE, corrected, keyboard_data(corrected)[0])
        [*_, eve] = await fake.wait_said(4, chat_id=ALICE)
        eve_csv = await fetch_csv(fake, ALICE, ALICE, eve)
        count_csv = await fetch_csv(fake, ALICE, ALICE, count)

    # Independently: Christmas Eve's RTH bars (09:30 to 17:00), and every RTH trading date.
    bars = pd.read_parquet(data_path("NQ", EngineSettings()), columns=["timestamp", "high", "low"])
    minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    rth = bars[(minute >= 9 * 60 + 30) & (minute < 17 * 60)]
    eve_bars = rth[rth["timestamp"].dt.date == dt.date(2025, 12, 24)]
    eve_range = eve_bars["high"].max() - eve_bars["low"].min()
    assert eve["caption"].startswith(f"средний диапазон = {eve_range:.2f}".replace(".", ","))
    rows = read_csv(eve_csv)
    assert [row[0] for row in rows[1:]] == ["2025-12-24"]
    assert float(rows[1][6].replace(",", ".")) == eve_range
    assert count["caption"].startswith("количество дней = ")
    days = rth["timestamp"].dt.date.nunique()
    assert len(read_csv(count_csv)) == days + 1


def read_csv(document) -> list[list[str]]:
    return list(
        csv.reader(
            document.files["document"].content.decode("utf-8-sig").splitlines(), delimiter=";"
        )
    )

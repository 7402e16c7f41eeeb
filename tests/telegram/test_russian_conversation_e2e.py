"""A whole conversation in Russian, read as it arrives on the fake Bot API: one bot, the
questions a trader writes (a breakdown by weekday, a count, the hour of the day's high on
Moscow's clock, a follow-up, a year with no data), the model failing mid-turn, /query with
a misspelt column, /help and /usage, and the same bot in a group. The scripted model writes
what a good one would (a plan in Russian, answers with Russian numbers and the Markdown
models use); every number the person reads is checked against pandas over the sample's
minute bars, never through Barb."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pandas as pd
from bot_harness import ALICE, BOB, GROUP, ask_and_get_plan, barb_bot, keyboard_data, press
from fake_bot_api import FakeBotAPI

from barb.data.store import data_path
from barb.settings import EngineSettings
from bot.llm.errors import ProviderUnavailable
from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn

RTH = (570, 1020)  # NQ's RTH, 09:30-17:00 ET, in minutes of the day
WEEKDAYS = {
    "session": "RTH",
    "from": "daily",
    "period": "2024",
    "map": {"weekday": "dayname()"},
    "group_by": "weekday",
    "select": "mean(range)",
}
INSIDE = {"session": "RTH", "from": "daily", "period": "2024", "where": "inside_day()"}
HIGH_HOUR = {
    "session": "RTH",
    "from": "1h",
    "period": "2024",
    "group_by": "date()",
    "select": "arg_max(time('Moscow'), high) as high_time",
    "then": {"group_by": "high_time", "select": "count() as days", "sort": "days desc"},
}
#: What the person types, the plan the model writes, its query, and its answer.
SCRIPT: dict[str, tuple[str, dict[str, Any], str]] = {
    "средний диапазон RTH по дням недели за 2024": (
        "Посчитаю средний диапазон RTH по дням недели за 2024 год.",
        WEEKDAYS,
        "Шире всего в среднем **вторник**, уже всего **среда**.\n\n*Данные синтетические.*",
    ),
    "сколько inside days в 2024?": (
        "Посчитаю inside days: хай ниже и лоу выше вчерашних.",
        {**INSIDE, "select": "count()"},
        "Итог:**{n} дней** в 2024 году были inside day.",
    ),
    "а в 2023?": (
        "То же за 2023 год.",
        {**INSIDE, "period": "2023", "select": "count()"},
        "В 2023 году —**{n} дней**.",
    ),
    "во сколько обычно хай дня по Москве в 2024": (
        "Найду, в какой час по Москве чаще всего ставится хай дня RTH.",
        HIGH_HOUR,
        "Чаще всего хай дня ставится в **{time} по Москве**.",
    ),
    "средний диапазон за 2030": (
        "Посчитаю средний диапазон за 2030 год.",
        {"session": "RTH", "from": "daily", "period": "2030", "select": "mean(range)"},
        "За 2030 год данных нет: они заканчиваются в **январе 2026**.",
    ),
}
FAILS = "средний диапазон RTH за 2024, модель упадёт"


def russian_model(request: ModelRequest):
    """Plans each scripted question; answers from the numbers it read; fails when told."""
    asked = [m.text or "" for m in request.messages if m.role == "user"][-1]
    if asked == FAILS:
        if request.messages[-1].role == "user":
            query = {"session": "RTH", "from": "daily", "period": "2024", "select": "mean(range)"}
            return turn(
                "Посчитаю средний диапазон RTH за 2024.", tool_call("execute_query", query=query)
            )
        raise ProviderUnavailable("upstream 503", provider="scripted")
    plan, query, answer = SCRIPT[asked.removeprefix("@barb_test_bot ")]
    last = request.messages[-1]
    if last.role == "user":
        return turn(plan, tool_call("execute_query", query=query))
    read = last.tool_results[-1].content
    count = re.search(r"count = (\d+)", read)
    first = re.search(r"^(\d\d:\d\d),\d+$", read, re.M)
    return text(
        answer.format(n=count.group(1) if count else "", time=first.group(1) if first else "")
    )


def rth_days(years: tuple[int, ...]) -> pd.DataFrame:
    """The sample's RTH days (high, low) of ``years`` and the day before, from minute bars."""
    bars = pd.read_parquet(
        data_path("NQ", EngineSettings()), columns=["timestamp", "high", "low", "minute"]
    )
    bars = bars[bars["timestamp"].dt.year.between(min(years) - 1, max(years))]
    rth = bars[(bars["minute"] >= RTH[0]) & (bars["minute"] < RTH[1])]
    days = rth.groupby(rth["timestamp"].dt.normalize()).agg(
        high=("high", "max"), low=("low", "min")
    )
    days["inside"] = (days["high"] < days["high"].shift()) & (days["low"] > days["low"].shift())
    days["range"] = days["high"] - days["low"]
    return days.assign(hours=rth.groupby(rth["timestamp"].dt.normalize()).apply(_high_hour))


def _high_hour(day: pd.DataFrame) -> str:
    """The Moscow time of the RTH hour (from 09:30) that made the day's high first."""
    top = day.loc[day["high"].idxmax(), "timestamp"]
    start = top.normalize() + pd.Timedelta(
        minutes=RTH[0] + (top.hour * 60 + top.minute - RTH[0]) // 60 * 60
    )
    return start.tz_localize("America/New_York").tz_convert("Europe/Moscow").strftime("%H:%M")


def ru(value: float, places: int) -> str:
    return f"{value:.{places}f}".replace(".", ",")


def csv_rows(fake: FakeBotAPI) -> list[dict[str, str]]:
    document = fake.calls("sendDocument", chat_id=ALICE)[-1]
    content = document.files["document"].content.decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(content), delimiter=";"))


async def ask_and_run(
    fake: FakeBotAPI, question: str, *, chat: int = ALICE, user: int = ALICE, **kwargs: Any
) -> tuple[dict, dict]:
    """Ask, read the plan, press Run: the plan and the answer that follows it."""
    before = len(fake.said(chat))
    plan = await ask_and_get_plan(fake, chat, user, question, language_code="ru", **kwargs)
    assert [b["text"] for row in plan["reply_markup"]["inline_keyboard"] for b in row] == [
        "▶ Запустить",
        "✖ Отмена",
    ]
    await press(fake, chat, user, plan, keyboard_data(plan)[0], language_code="ru")
    said = await fake.wait_said(before + 2, chat_id=chat)
    return plan, said[before + 1]


async def fetch_csv(fake: FakeBotAPI, answer: dict) -> list[dict[str, str]]:
    before = len(fake.calls("sendDocument", chat_id=ALICE))
    [button] = [d for d in keyboard_data(answer) if d.startswith("f:")]
    await press(fake, ALICE, ALICE, answer, button, language_code="ru")
    await fake.wait_for("sendDocument", before + 1, chat_id=ALICE)
    return csv_rows(fake)


async def test_a_russian_conversation_reads_russian_with_the_true_numbers(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    days = rth_days((2023, 2024))
    y2024, y2023 = days[days.index.year == 2024], days[days.index.year == 2023]
    by_weekday = y2024.groupby(y2024.index.dayofweek)["range"].mean()
    provider = ScriptedProvider([russian_model] * 40)
    async with barb_bot(fake, db_url, provider=provider):
        # A breakdown by weekday: the plan, the headline and the CSV in Russian words.
        plan, answer = await ask_and_run(fake, "средний диапазон RTH по дням недели за 2024")
        assert "План:" in plan["text"] and "Период: 2024-01-01 — 2024-12-31" in plan["text"]
        names = ["Пн", "Вт", "Ср", "Чт", "Пт"]
        low, high = by_weekday.idxmin(), by_weekday.idxmax()
        assert answer["caption"].startswith(
            f"средний диапазон: {names[low]} {ru(by_weekday[low], 2)} – "
            f"{names[high]} {ru(by_weekday[high], 2)} пункта"
        )
        rows = await fetch_csv(fake, answer)
        assert list(rows[0])[:2] == ["день недели", "средний диапазон"]
        # The file is named in the chart's words («NQ_RTH_daily_mean_range_by_weekday_…»).
        [document] = fake.calls("sendDocument", chat_id=ALICE)
        first, last = y2024.index[0].date(), y2024.index[-1].date()
        assert document.files["document"].filename == (
            f"NQ_RTH_средний_диапазон_по_дню_недели_{first}_{last}.csv"
        )
        assert [r["день недели"] for r in rows] == names
        for day, row in enumerate(rows):
            assert float(row["средний диапазон"].replace(",", ".")) == round(by_weekday[day], 3)

        # A count, with the model's «Итог:**17 дней**» read with its space.
        _, answer = await ask_and_run(fake, "сколько inside days в 2024?")
        n = int(y2024["inside"].sum())
        assert answer["caption"] == (
            f"количество дней = {n}\n\nИтог: {n} дней в 2024 году были inside day."
        )
        assert [r["дата"] for r in await fetch_csv(fake, answer)] == [
            d.strftime("%Y-%m-%d") for d in y2024.index[y2024["inside"]]
        ]
        # The follow-up is asked with the conversation before it.
        _, answer = await ask_and_run(fake, "а в 2023?")
        planned = next(r for r in provider.requests if r.messages[-1].text == "а в 2023?")
        earlier = [m.text for m in planned.messages if m.role == "user"]
        assert "сколько inside days в 2024?" in earlier
        n = int(y2023["inside"].sum())
        assert answer["caption"].endswith(f"В 2023 году — {n} дней.")

        # The hour of the day's high on Moscow's clock: the CSV names the clock.
        _, answer = await ask_and_run(fake, "во сколько обычно хай дня по Москве в 2024")
        counts = y2024["hours"].value_counts()
        top = counts.idxmax()
        # The headline names the clock as the axis does.
        assert answer["caption"].startswith(f"дни: чаще всего {top} (Moscow) {counts[top]} ")
        assert answer["caption"].endswith(f"в {top} по Москве.")
        rows = await fetch_csv(fake, answer)
        assert {r["high_time_moscow"]: int(r["дни"]) for r in rows} == counts.to_dict()

        # A year with no data: no plan to run, the model's sentence alone.
        before = len(fake.said(ALICE))
        said = await ask_and_get_plan(
            fake, ALICE, ALICE, "средний диапазон за 2030", language_code="ru"
        )
        assert said["text"] == "За 2030 год данных нет: они заканчиваются в январе 2026."
        assert len(fake.said(ALICE)) == before + 1 and keyboard_data(said) == []

        # The model fails after the numbers: they come with a Russian sentence saying so.
        _, answer = await ask_and_run(fake, FAILS)
        headline, sentence = answer["caption"].split("\n\n")
        assert headline == f"средний диапазон = {ru(y2024['range'].mean(), 2)} пункта"
        assert sentence.startswith("Эти цифры полные, но языковая модель перестала отвечать")

        # /query with a misspelt column, /help and /usage.
        said = await ask_and_get_plan(
            fake,
            ALICE,
            ALICE,
            '/query {"from": "daily", "select": "mean(rnage)"}',
            language_code="ru",
        )
        assert said["text"].split("\n")[-1] == "Может быть, имелось в виду range?"
        said = await ask_and_get_plan(fake, ALICE, ALICE, "/help", language_code="ru")
        assert said["text"].startswith("Задайте вопрос по барам")
        said = await ask_and_get_plan(fake, ALICE, ALICE, "/usage", language_code="ru")
        assert said["text"].startswith("Сегодня: ") and "вызовов модели" in said["text"]

        # In a group: Bob asks, Alice may not run his plan, Bob does.
        name = fake.bot["username"]
        question = f"@{name} сколько inside days в 2024?"
        plan = await ask_and_get_plan(
            fake, GROUP, BOB, question, chat_type="supergroup", language_code="ru"
        )
        pressed = len(fake.calls("answerCallbackQuery"))
        await press(fake, GROUP, ALICE, plan, keyboard_data(plan)[0], language_code="ru")
        await fake.wait_for("answerCallbackQuery", pressed + 1)
        before = len(fake.said(GROUP))
        await press(fake, GROUP, BOB, plan, keyboard_data(plan)[0], language_code="ru")
        [*_, answer] = await fake.wait_said(before + 1, chat_id=GROUP)
    assert "Эту кнопку может нажать только тот, кто спросил." in [
        c.params.get("text") for c in fake.calls("answerCallbackQuery")
    ]
    n = int(y2024["inside"].sum())
    assert answer["caption"].endswith(f"Итог: {n} дней в 2024 году были inside day.")
    # Nothing English, raw or engine-named reached the person.
    shown = [m.get("text") or m.get("caption") or "" for m in fake.said(ALICE) + fake.said(GROUP)]
    for message in shown:
        assert "**" not in message and "mean_range" not in message and "$" not in message
        assert not re.search(r"\b(the|and|of|did you mean)\b", message), message

"""What a person reads of an answer, as Telegram receives it (play test p38c): a CSV cut
short says so, both queries of a plan are shown, a statistic of an expression is drawn and
its values are in the CSV, an answer with no chart reads as one with a chart, /query gives
its numbers rounded once in an aligned table, in the chat's language, and a heading stays
with its paragraph when a long commentary is split."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import math
import re
from decimal import ROUND_HALF_UP, Decimal

import pandas as pd
import pytest
from asking import as_read
from bot_harness import ALICE, ask_and_get_plan, barb_bot, fetch_csv, keyboard_data, press
from fake_bot_api import FakeBotAPI, formatted

import bot.pool.jobs as jobs
from barb import execute
from barb.data.store import data_path
from barb.settings import EngineSettings
from bot.llm.messages import ModelRequest
from bot.llm.scripted import text, tool_call, turn

RTH = (570, 1020)  # NQ's and ES's RTH, 09:30-17:00 ET, in minutes of the day
MEAN_RANGE_2024 = {"session": "RTH", "from": "daily", "period": "2024", "select": "mean(range)"}


def rth_days(symbol: str, year: int = 2024) -> pd.DataFrame:
    """The sample's RTH days of ``year`` (open, high, low, close), from its minute bars."""
    bars = pd.read_parquet(data_path(symbol, EngineSettings()))
    rth = bars[(bars["minute"] >= RTH[0]) & (bars["minute"] < RTH[1])]
    rth = rth[rth["trading_date"].dt.year == year]
    rth = rth.assign(trading_date=rth["trading_date"].dt.strftime("%Y-%m-%d"))
    return rth.groupby("trading_date").agg(
        open=("open", "first"), high=("high", "max"), low=("low", "min"), close=("close", "last")
    )


def two_places(value: float, comma: bool = False) -> str:
    """``value`` rounded once to 2 decimals, half up, as the locale writes it."""
    written = str(Decimal(repr(float(value))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    return written.replace(".", ",") if comma else written


def plays(*queries: dict, answer: str = "Here it is.") -> object:
    """A model that plans ``queries`` in one message, then answers ``answer``."""

    def brain(request: ModelRequest):
        if request.messages[-1].role == "user":
            return turn("I'll compute it.", *(tool_call("execute_query", query=q) for q in queries))
        return text(answer)

    return brain


async def run_plan(fake: FakeBotAPI, question: str = "how big?", **kwargs) -> None:
    plan = await ask_and_get_plan(fake, ALICE, ALICE, question, **kwargs)
    await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])


def csv_table(document, delimiter: str = ",") -> list[dict[str, str]]:
    text = document.files["document"].content.decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(text), delimiter=delimiter))


@pytest.mark.parametrize(
    ("question", "label", "caption", "named", "date"),
    [
        (
            "how big?",
            "CSV · first 100 of {n} rows",
            "first 100 of {n} rows",
            "_first_100_of_{n}_rows.csv",
            "date",
        ),
        (
            "какой размер?",
            "CSV · первые 100 из {n} строк",
            "первые 100 из {n} строк",
            "_первые_100_из_{n}_строк.csv",
            "дата",
        ),
    ],
)
async def test_a_csv_cut_short_says_of_how_many_rows(
    fake_telegram: FakeBotAPI,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    question: str,
    label: str,
    caption: str,
    named: str,
    date: str,
) -> None:
    """B2: the first 50,000 of 1,774,380 minutes read "CSV · 50,000 rows", a 5-year name on
    7 weeks. Here the engine keeps 100 rows, of 2024's RTH days. A Russian chat's file was
    named in English and headed with the engine's names ("date;open;…")."""
    small = EngineSettings(max_table_rows=100)
    monkeypatch.setattr(jobs, "execute", lambda q, i: execute(q, i, settings=small))
    fake = fake_telegram
    days = rth_days("NQ")
    n = f"{len(days):,}"
    async with barb_bot(fake, db_url, model=plays(MEAN_RANGE_2024)):
        await run_plan(fake, question)
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
        buttons = photo.result["reply_markup"]["inline_keyboard"]
        # The cut CSV's longer label on a row of its own, Query under it.
        assert [[b["text"] for b in row] for row in buttons] == [
            [label.format(n=n)],
            ["Query" if question.isascii() else "Запрос"],
        ]
        document = await fetch_csv(fake, ALICE, ALICE, photo.result)

    assert document.result["caption"] == caption.format(n=n)
    name = document.files["document"].filename
    assert name.endswith(named.format(n=len(days)))
    # Still plain data: the rows, the first 100 days of 2024 (a Russian chat's between ";").
    rows = csv_table(document, "," if question.isascii() else ";")
    assert [r[date] for r in rows] == [str(d) for d in days.index[:100]]


def mean_range_pct(symbol: str) -> tuple[float, pd.Series]:
    days = rth_days(symbol)
    pct = (days["high"] - days["low"]) / days["open"] * 100
    return float(pct.mean()), pct


NQ_PCT = {"instrument": "NQ", **MEAN_RANGE_2024, "select": "mean(range / open * 100)"}
ES_PCT = {"instrument": "ES", **MEAN_RANGE_2024, "select": "mean(range / open * 100)"}


async def test_two_queries_of_a_plan_are_both_drawn_kept_and_shown(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """B3: NQ vs ES, each ``mean(range / open * 100)``: no chart, two CSVs sent unasked
    before the answer without the averaged values, and Query showed ES's query alone."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, model=plays(NQ_PCT, ES_PCT)):
        await run_plan(fake)
        photos = await fake.wait_for("sendPhoto", 2, chat_id=ALICE)
        assert fake.calls("sendDocument") == []  # the CSVs wait for their buttons
        for photo, symbol in zip(photos, ("NQ", "ES"), strict=True):
            mean, pct = mean_range_pct(symbol)
            # The expression's histogram, headed by its number.
            assert photo.files["photo"].filename.startswith(  # in the chart's words
                f"{symbol}_RTH_average_(range_÷_open_×_100)_"
            )
            headline = photo.result["caption"].split("\n")[0]
            # Named by its formula, the average over all of it (it read "mean_range_open_100").
            assert headline == f"average (range / open * 100) = {as_read(mean)}%"
            document = await fetch_csv(fake, ALICE, ALICE, photo.result)
            rows = csv_table(document)
            assert [r["date"] for r in rows] == [str(d) for d in pct.index]
            held = [float(r["range / open * 100"]) for r in rows]
            assert held == pytest.approx(pct.tolist(), rel=5e-6)  # 6 significant digits

        before = len(fake.calls("sendMessage", chat_id=ALICE))
        query_button = keyboard_data(photos[-1].result)[-1]
        await press(fake, ALICE, ALICE, photos[-1].result, query_button)
        shown = await fake.wait_for("sendMessage", before + 2, chat_id=ALICE)

    queries = []
    for message in shown[before:]:
        plain, entities = formatted(message.result["text"], None, message.result.get("entities"))
        [pre] = [e for e in entities if e["type"] == "pre"]
        queries.append(json.loads(plain[pre["offset"] : pre["offset"] + pre["length"]]))
    assert queries == [NQ_PCT, ES_PCT]


async def test_two_csvs_pressed_together_both_lose_their_buttons(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """p43e #8: an answer with no chart and two CSVs ("NQ · CSV", "ES · CSV", "Query" under
    its words), both CSVs pressed before either press is handled: each press carries all
    three buttons. Before, each edit took its own button from that snapshot and the last
    one put the other, spent button back; pressing it again only said the CSV was gone.
    Now both go and Query stays."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, model=plays(NQ_PCT, ES_PCT)) as svc:
        await svc.store.chats.ensure(ALICE, "private")
        await svc.store.chats.update_settings(ALICE, charts=False)
        await run_plan(fake)
        [_plan, answer] = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        nq, es, query = keyboard_data(answer.result)
        assert [nq[:2], es[:2], query[:2]] == ["f:", "f:", "q:"]
        message_id = answer.result["message_id"]
        presses = [
            fake.inject(
                fake.callback_update(chat_id=ALICE, user_id=ALICE, message_id=message_id, data=d)
            )
            for d in (nq, es)
        ]
        documents = await fake.wait_for("sendDocument", 2, chat_id=ALICE)
        for update_id in presses:
            await fake.wait_confirmed(update_id)
        while set(presses) & {u for u, _ in await svc.store.updates.unhandled()}:
            await asyncio.sleep(0.02)  # handled: each press has edited what it will

        names = sorted(d.files["document"].filename[:2] for d in documents)
        assert names == ["ES", "NQ"]
        assert keyboard_data(fake.message(ALICE, message_id)) == [query]


def charts_off_model(request: ModelRequest):
    if request.messages[-1].role == "user":
        query = MEAN_RANGE_2024
        if "none" in (request.messages[-1].text or ""):
            query = {**MEAN_RANGE_2024, "where": "range < 0"}
        return turn("I'll compute it.", tool_call("execute_query", query=query))
    return text("The **answer** is above.")


async def test_an_answer_without_a_chart_reads_as_one_with_a_chart(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """B3.3: with charts off the CSV came unasked before the words, the headline never
    showed, and no rows sent a CSV of a header alone, without a caption."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, model=charts_off_model) as svc:
        await svc.store.chats.ensure(ALICE, "private")
        await svc.store.chats.update_settings(ALICE, charts=False)
        await run_plan(fake)
        [_plan, answer] = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        assert fake.calls("sendDocument") == [] and fake.calls("sendPhoto") == []
        # The words first, headed by the number in bold, the CSV and Query under them.
        days = rth_days("NQ")
        mean = float((days["high"] - days["low"]).mean())
        headline = f"average range = {two_places(mean)} points"
        assert answer.result["text"] == f"{headline}\n\nThe answer is above."
        entities = answer.result["entities"]
        assert entities[0] == {"type": "bold", "offset": 0, "length": len(headline)}
        labels = [
            b["text"] for row in answer.result["reply_markup"]["inline_keyboard"] for b in row
        ]
        assert labels == [f"CSV · {len(days)} rows", "Query"]
        document = await fetch_csv(fake, ALICE, ALICE, answer.result)
        assert len(csv_table(document)) == len(days)

        # No rows: no file at all.
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        await run_plan(fake, "none of them")
        said = await fake.wait_for("sendMessage", before + 2, chat_id=ALICE)
        nothing = said[-1].result
        # Says what was searched, not "average range = n/a points" (p47d D10).
        assert re.match(r"nothing matched \(0 of \d+ days, 2024\)\n", nothing["text"])
        assert [d[:2] for d in keyboard_data(nothing)] == ["q:"]
        assert len(fake.calls("sendDocument")) == 1  # the first answer's, asked for


def eth_days(symbol: str, year: int = 2024) -> pd.DataFrame:
    """The sample's whole trading days of ``year`` (high, low), from its minute bars."""
    bars = pd.read_parquet(data_path(symbol, EngineSettings()))
    days = bars[bars["trading_date"].dt.year == year].groupby("trading_date")
    return days.agg(high=("high", "max"), low=("low", "min"))


@pytest.mark.parametrize(
    ("question", "words", "rows", "comma"),
    [
        ("RTH vs ETH range?", "average range", "rows", False),
        ("диапазон RTH и ETH?", "средний диапазон", "строк", True),
    ],
)
async def test_two_answers_without_charts_are_named_by_what_differs(
    fake_telegram: FakeBotAPI, db_url: str, question: str, words: str, rows: str, comma: bool
) -> None:
    """p48e: RTH and ETH of one instrument, charts off, read "average range = 317.61 points"
    above "average range = 393.20 points", under CSVs "1 ·" and "2 ·": nothing said which
    was RTH. Each line and its CSV are named by the session, the one thing that differs."""
    fake = fake_telegram
    eth = {**MEAN_RANGE_2024, "session": "ETH"}
    async with barb_bot(fake, db_url, model=plays(MEAN_RANGE_2024, eth)) as svc:
        await svc.store.chats.ensure(ALICE, "private")
        await svc.store.chats.update_settings(ALICE, charts=False)
        await run_plan(fake, question)
        [_plan, answer] = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        rth, whole = rth_days("NQ"), eth_days("NQ")
        means = [float((d["high"] - d["low"]).mean()) for d in (rth, whole)]
        first, second, *_ = answer.result["text"].splitlines()
        assert first.startswith(f"RTH: {words} = {two_places(means[0], comma)} ")
        assert second.startswith(f"ETH: {words} = {two_places(means[1], comma)} ")
        labels = [
            b["text"] for row in answer.result["reply_markup"]["inline_keyboard"] for b in row
        ]
        assert labels[:2] == [f"RTH · CSV · {len(rth)} {rows}", f"ETH · CSV · {len(whole)} {rows}"]


TOP = {
    "session": "RTH",
    "from": "daily",
    "period": "2024",
    "map": {"range_pct": "range / open * 100"},
    "select": ["range", "range_pct"],
    "sort": "range desc",
    "limit": 25,
}
WEEKLY_CUT = {
    "session": "RTH",
    "from": "weekly",
    "period": "2024-03-05:2024-06-20",
    "select": "mean(range)",
}


async def test_query_rounds_once_aligns_its_table_and_speaks_the_chats_language(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """B5, B4: /query showed 7.244972578 as "7,25" (rounded to 4 digits, then to 2), its
    table unaligned, its CSV before its numbers, "(weekly, RTH)" and the engine's English
    notes in a Russian chat."""
    fake = fake_telegram
    days = rth_days("NQ")
    days["range"] = days["high"] - days["low"]
    days["range_pct"] = days["range"] / days["open"] * 100
    widest = days.sort_values("range", ascending=False, kind="stable").head(10)
    async with barb_bot(fake, db_url):
        fake.inject(
            fake.message_update(
                chat_id=ALICE, user_id=ALICE, text=f"/query {json.dumps(TOP)}", language_code="ru"
            )
        )
        await fake.wait_for("sendDocument", chat_id=ALICE)
        fake.inject(
            fake.message_update(
                chat_id=ALICE,
                user_id=ALICE,
                text=f"/query {json.dumps(WEEKLY_CUT)}",
                language_code="ru",
            )
        )
        await fake.wait_for("sendDocument", 2, chat_id=ALICE)
        none = {**MEAN_RANGE_2024, "where": "range < 0", "select": None}
        none = {k: v for k, v in none.items() if v is not None}
        fake.inject(
            fake.message_update(
                chat_id=ALICE, user_id=ALICE, text=f"/query {json.dumps(none)}", language_code="ru"
            )
        )
        [*_, nothing] = await fake.wait_said(3, chat_id=ALICE)

    sent = [r for r in fake.requests if r.method in ("sendPhoto", "sendMessage", "sendDocument")]
    # Each answer: its chart (the numbers in its caption), then its CSV, last; no rows, no CSV.
    assert [r.method for r in sent[:4]] == ["sendPhoto", "sendDocument"] * 2
    assert [r.method for r in sent[4:]] in (["sendMessage"], ["sendPhoto"])
    assert nothing["text"].split("\n\n")[1] == "Ни одна строка не подошла."
    top, weekly = (r.result for r in sent[:4] if r.method == "sendPhoto")
    shown, entities = top["caption"], top["caption_entities"]
    assert entities[0]["type"] == "bold" and entities[0]["offset"] == 0  # the headline
    [pre] = [e for e in entities if e["type"] == "pre"]
    table = shown[pre["offset"] : pre["offset"] + pre["length"]].split("\n")
    assert table[0].split() == ["date", "диапазон", "range_pct"]  # the bars' own in words
    assert len({len(line) for line in table}) == 1  # aligned: every line as wide
    for line, (date, row) in zip(table[1:], widest.iterrows(), strict=True):
        assert line.split() == [
            str(date),
            two_places(row["range"], comma=True),
            two_places(row["range_pct"], comma=True),
            "%",  # a percent says so, «7,24 %», as the chart does
        ]
    assert table[1].split()[-2] == "7,24"  # 7.244972578, once

    lines = weekly["caption"].split("\n")
    assert any(re.match(r"По \d+ барам NQ \(недельные, RTH\)", line) for line in lines)
    notes = lines.index("Примечания движка (на английском):")
    assert lines[notes + 1].startswith("⚠ 2 weekly bars cut")


async def test_query_names_columns_in_the_chats_words_and_an_empty_cell_plainly(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """/query in Russian headed its numbers with the engine's names ("mean_range: 364,56",
    a table under "dayname  mean_range") where the chart says «средний диапазон», «день
    недели»; a streak's first row, which has no bar before it, read "None"; a table of one
    row read «Строк: 1 (первые 1 ниже, все — в CSV)». A number came without its unit
    ("средний диапазон: 364,56", the caption above it: «364,56 пункта»), and
    ``mean(high - low)``, the range by its formula, was headed "mean_high_low"."""
    fake = fake_telegram
    days = rth_days("NQ")
    days["range"] = days["high"] - days["low"]
    weekdays = pd.to_datetime(days.index).dayofweek
    by_day = days.groupby(weekdays)["range"].mean()
    answers = {**MEAN_RANGE_2024, "select": ["mean(range)", "count()"]}
    grouped = {**MEAN_RANGE_2024, "group_by": "dayname()"}
    first = rth_days("NQ", 2008).index[0]
    runs = {
        "session": "RTH",
        "from": "daily",
        "period": "2008-01",
        "map": {"run": "streak(close > prev(close))"},
        "select": ["date()", "run"],
    }
    widest = {**MEAN_RANGE_2024, "select": ["date()", "range"], "sort": "range desc", "limit": 1}
    formula = {**MEAN_RANGE_2024, "select": "mean(high - low)"}
    async with barb_bot(fake, db_url):
        for number, query in enumerate((answers, grouped, runs, widest, formula), start=1):
            fake.inject(
                fake.message_update(
                    chat_id=ALICE,
                    user_id=ALICE,
                    text=f"/query {json.dumps(query)}",
                    language_code="ru",
                )
            )
            await fake.wait_for("sendDocument", number, chat_id=ALICE)

    said, by_weekday, streak, top, by_formula = (
        r.result for r in fake.requests if r.method == "sendPhoto"
    )
    lines = said["caption"].split("\n")
    # A fraction of points is «пункта» in Russian (CLDR's "other" form). The numbers are
    # said once, in the bold headline: «средний диапазон: 364,56 пункта» under it was
    # the same again.
    mean_range = f"средний диапазон = {two_places(days['range'].mean(), comma=True)} пункта"
    assert lines[0] == f"{mean_range} · количество дней = {len(days)}"
    assert by_formula["caption"].split("\n")[0] == mean_range
    assert "средний диапазон:" not in said["caption"] + by_formula["caption"]
    assert "mean_high_low" not in by_formula["caption"]
    assert "mean_range" not in said["caption"] and "count:" not in said["caption"]

    def table(caption: dict) -> list[str]:
        [pre] = [e for e in caption["caption_entities"] if e["type"] == "pre"]
        return caption["caption"][pre["offset"] : pre["offset"] + pre["length"]].split("\n")

    rows = table(by_weekday)
    # Every row shown, counted in the number's form: «Строк: 1 (первые 1 ниже, все — в
    # CSV)» counted a first of one.
    assert "5 строк (все ниже и в CSV):" in by_weekday["caption"].split("\n")
    assert "1 строка (она же в CSV):" in top["caption"].split("\n")
    assert table(top)[1].split()[-1] == two_places(days["range"].max(), comma=True)
    assert rows[0].split() == ["день", "недели", "средний", "диапазон"]
    for line, (_, mean) in zip(rows[1:], by_day.items(), strict=True):
        assert line.split()[-1] == two_places(mean, comma=True)
    rows = table(streak)
    assert rows[1].split() == [first, "—"]  # no run before the data's first bar
    assert rows[2].split()[-1] in ("0", "1")


def percent_text(points: float, language: str, decimals: int = 1) -> str:
    """A percent with ``decimals``, half up, as the locale writes it: "53.7%", «53,7 %» (a
    no-break space before the sign)."""
    step = Decimal(1).scaleb(-decimals)
    written = str(Decimal(repr(float(points))).quantize(step, rounding=ROUND_HALF_UP))
    return f"{written}%" if language == "en" else f"{written.replace('.', ',')}\u00a0%"


@pytest.mark.parametrize(
    ("language", "weekdays", "key"),
    [
        ("en", ["Mon", "Tue", "Wed", "Thu", "Fri"], "weekday"),
        ("ru", ["Пн", "Вт", "Ср", "Чт", "Пт"], "день недели"),
    ],
)
async def test_query_writes_weekdays_and_shares_as_the_chart_does(
    fake_telegram: FakeBotAPI, db_url: str, language: str, weekdays: list[str], key: str
) -> None:
    """/query in Russian wrote a table of "Mon" to "Fri" (the chart beside it: «Пн» to
    «Пт»), the weekdays of ``dayofweek()`` as 0 to 4, a share of days as "0,54" (in
    English "0.54") where the chart and the headline say 53.7%, and a mean return in
    percent as "0,05" and "-0,00" where the chart says 0,051 % and −0,001 %: three
    significant digits of the column's largest, and its sign. The rows checked against
    the sample's RTH days of 2024 computed here."""
    fake = fake_telegram
    days = rth_days("NQ")
    weekday = pd.to_datetime(days.index).dayofweek
    up = (days["close"] > days["open"]).groupby(weekday).mean()
    moves = ((days["close"] - days["open"]) / days["open"] * 100).groupby(weekday).mean()
    decimals = max(2, 2 - math.floor(math.log10(moves.abs().max())))
    select = ["mean((close - open) / open * 100)", "mean(close > open)"]
    async with barb_bot(fake, db_url):
        for number, call in enumerate(("dayname()", "dayofweek()"), start=1):
            query = {**MEAN_RANGE_2024, "group_by": call, "select": select}
            fake.inject(
                fake.message_update(
                    chat_id=ALICE,
                    user_id=ALICE,
                    text=f"/query {json.dumps(query)}",
                    language_code=language,
                )
            )
            await fake.wait_for("sendDocument", number, chat_id=ALICE)

    # The table is in the chart's caption, or in the message after it when the caption
    # would run past Telegram's limit.
    said = [
        (
            r.result.get("caption") or r.result.get("text", ""),
            r.result.get("caption_entities") or r.result.get("entities"),
        )
        for r in fake.requests
        if r.method in ("sendPhoto", "sendMessage")
    ]
    tables = [
        body[e["offset"] : e["offset"] + e["length"]].split("\n")
        for body, entities in said
        for e in entities or ()
        if e["type"] == "pre"
    ]
    assert len(tables) == 2
    for rows in tables:
        assert rows[0].startswith(key)
        for line, day, share, move in zip(rows[1:], weekdays, up, moves, strict=True):
            assert line.startswith(day) and line.endswith(percent_text(share * 100, language))
            assert f" {percent_text(move, language, decimals)} " in line, line


LONG_ANSWER = "\n\n".join(
    f"### Part {i}\n\n" + " ".join([f"Paragraph {i} says the mean range was 140.7 points."] * 12)
    for i in range(1, 9)
)


async def test_a_heading_stays_with_its_paragraph_when_the_words_are_split(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """C17: split over 4096 characters, "Part 5" ended message 1 and its paragraph opened
    message 2."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, model=plays(MEAN_RANGE_2024, answer=LONG_ANSWER)):
        await run_plan(fake)
        await fake.wait_for("sendPhoto", chat_id=ALICE)
        said = await fake.wait_for("sendMessage", 3, chat_id=ALICE)  # the plan, 2 parts

    parts = [r.result["text"] for r in said[1:]]
    assert len(parts) == 2 and all(len(p) <= 4096 for p in parts)
    assert "".join(parts).count("Paragraph") == 8 * 12  # nothing lost
    for part in parts:
        lines = [line for line in part.split("\n") if line]
        for heading, after in zip(lines, [*lines[1:], ""], strict=True):
            if heading.startswith("Part "):
                assert after.startswith(f"Paragraph {heading.split()[1]} "), parts


#: Thirty items of one Russian list, each with bold, code and a link, over 4096 characters:
#: one block, which has no blank line to be cut at.
RUSSIAN_LIST = "\n".join(
    f"- день {i}: **понедельник** — средний диапазон `mean_range` < 140 & > 130 пунктов; "
    f"*важно*: [источник](https://example.com/{i}) и __вывод__ номер {i} про диапазон дня."
    for i in range(30)
)


async def test_a_long_russian_list_is_split_between_its_items(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """A Russian list longer than a message was cut where 4096 characters fell, inside an
    item's word: «• день 12: понедельник — сре» ended one message and «дний диапазон …» began
    the next. Each message now ends with an item and the next begins with one."""
    fake = fake_telegram
    async with barb_bot(fake, db_url, model=plays(MEAN_RANGE_2024, answer=RUSSIAN_LIST)):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "средний диапазон 2024 по дням")
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        await fake.wait_for("sendPhoto", chat_id=ALICE)
        said = await fake.wait_for("sendMessage", 3, chat_id=ALICE)  # the plan, 2 parts
    parts = [r.result["text"] for r in said[1:]]
    assert len(parts) == 2 and all(len(r.params["text"]) <= 4096 for r in said[1:])
    lines = [line for part in parts for line in part.split("\n")]
    assert lines == [
        f"• день {i}: понедельник — средний диапазон mean_range < 140 & > 130 пунктов; "
        f"важно: источник и вывод номер {i} про диапазон дня."
        for i in range(30)
    ]
    for part in parts:
        assert part.startswith("• день ") and part.endswith(" про диапазон дня.")


async def test_bold_closed_right_after_a_colon_reaches_the_person_bold(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Models close bold right after a colon and go on without a space ("**Итог:**Пн");
    CommonMark does not read that ** as closing, and the person saw the asterisks. Bold glued
    to a word («год**2020**») read «год2020», and a space inside the marks («** 42 дня**»)
    left them on the screen: the person reads «год 2020» and a bold «42 дня». A formula
    reads as plain text, a power one way however the model wrote it."""
    answer = (
        "**Итог:**Пн — самый широкий день. **Average range:**134.5, а 2**10 = 1024. "
        "Лучший год**2020**, всего:** 42 дня**. "
        r"Отношение \( \frac{312.4}{287.1} \approx 1.09 \), объём 10<sup>6</sup> = 10^{6}."
    )
    fake = fake_telegram
    async with barb_bot(fake, db_url, model=plays(MEAN_RANGE_2024, answer=answer)):
        await run_plan(fake, "какой день самый широкий?")
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
    caption = photo.result["caption"]
    assert caption.endswith(
        "Итог: Пн — самый широкий день. Average range: 134.5, а 2**10 = 1024. "
        "Лучший год 2020, всего: 42 дня. Отношение 312.4/287.1 ≈ 1.09, объём 10⁶ = 10⁶."
    )
    encoded = caption.encode("utf-16-le")
    bold = [
        encoded[2 * e["offset"] : 2 * (e["offset"] + e["length"])].decode("utf-16-le")
        for e in photo.result["caption_entities"]
        if e["type"] == "bold"
    ]
    assert bold[-4:] == ["Итог:", "Average range:", "2020", "42 дня"]


async def test_query_says_the_engines_notes_in_the_chats_language(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Weekly closes to the data's end, asked by /query in a Russian chat and in an English
    one: the session taken and the unfinished week left out were said in English under
    «Примечания движка (на английском)» in Russian; now in Russian, and in English as the
    engine writes them."""
    fake = fake_telegram
    query = {"from": "weekly", "period": "2025-12-01:", "select": ["close"]}
    dates = pd.read_parquet(data_path("NQ", EngineSettings()), columns=["trading_date"])
    dates = dates["trading_date"]
    last = dates.max().normalize()
    monday = last - pd.Timedelta(days=last.dayofweek)  # the week the data's end cuts
    first = dates[dates >= monday].min()
    week, held = f"{monday:%Y-%m-%d}", f"{first:%Y-%m-%d} — {last:%Y-%m-%d}"
    async with barb_bot(fake, db_url):
        for n, language in enumerate(("ru", "en"), 1):
            fake.inject(
                fake.message_update(
                    chat_id=ALICE,
                    user_id=ALICE,
                    text=f"/query {json.dumps(query)}",
                    language_code=language,
                )
            )
            # The first /query loads the sample and draws a chart: slow on a loaded machine.
            await fake.wait_for("sendDocument", n, chat_id=ALICE, timeout=120)

    russian, english = (
        r.result["caption"].replace("\\", "") for r in fake.requests if r.method == "sendPhoto"
    )
    assert "Примечания движка (на английском):" not in russian
    lines = russian.split("\n")
    notes = lines.index("Примечания:")
    assert lines[notes + 1 : notes + 3] == [
        "⚠ Сессия не указана: недельные бары взяты по RTH (сессия по умолчанию).",
        f"⚠ Неделя {week} ещё не закончилась (в данных только {held}); в расчёте только "
        'полные недели. Текущая неделя: «"period": "wtd"».',
    ]
    lines = english.split("\n")
    notes = lines.index("Notes:")
    assert lines[notes + 1 : notes + 3] == [
        "⚠ No session given for weekly bars: RTH (the default session) used.",
        f"⚠ The week {week} is not over yet (the data covers only {held}): left out, so only "
        'whole weeks count. This week so far: "period": "wtd".',
    ]

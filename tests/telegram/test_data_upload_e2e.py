"""An admin sends a file of bars to the bot: the validation report arrives with Import and
Cancel, Import writes the data with the importer's code, and nobody else can do it. The
file crosses the fake Bot API (getFile and the download) as it would cross Telegram."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bot_harness import ALICE, BOB, GROUP, barb_bot, keyboard_data, press
from fake_bot_api import QUERY_INVALID, FakeBotAPI

import bot.data_uploads as data_uploads
from barb.data.layouts import LAYOUTS
from barb.data.store import data_path, previous_path, read_bars, read_meta
from barb.i18n import day, decimal
from barb.interpreter import execute
from barb.settings import EngineSettings
from bot.data_uploads import DataUploads
from bot.pool.celery_runner import CeleryRunner
from bot.telegram.app import StoppableUpdates
from bot.texts import t

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))
import bar_files as bf

ES_LEVEL = 5000  # ES's in March 2024 (NQ's, the bars' default, is refused as ES's)


@pytest.fixture
def engine(tmp_path: Path) -> EngineSettings:
    return EngineSettings(data_dir=tmp_path / "data")


@pytest.fixture
def chicago_csv(tmp_path: Path) -> tuple[bytes, pd.DataFrame]:
    bars = bf.week_of_bars()
    return bf.plain_csv(tmp_path / "x.csv", bars, "America/Chicago").read_bytes(), bars


@pytest.fixture
def es_chicago_csv(tmp_path: Path) -> tuple[bytes, pd.DataFrame]:
    """As ``chicago_csv``, at ES's level: NQ's sent as ES is refused (another instrument's)."""
    bars = bf.week_of_bars(level=ES_LEVEL)
    return bf.plain_csv(tmp_path / "x.csv", bars, "America/Chicago").read_bytes(), bars


def staged(engine: EngineSettings) -> list[str]:
    """The uploaded files still staged (an imported offer's record stays, without its file,
    as what a second press of its buttons is answered from, until it expires)."""
    root = engine.data_dir / ".uploads"
    return sorted(p.name for p in root.glob("*/*") if p.name != "offer.json")


async def send_file(
    fake: FakeBotAPI, user: int, content: bytes, name: str, caption: str | None = None
) -> dict:
    before = len(fake.calls("sendMessage", chat_id=user))
    fake.inject(
        fake.document_update(
            chat_id=user, user_id=user, content=content, file_name=name, caption=caption
        )
    )
    sent = await fake.wait_for("sendMessage", before + 1, chat_id=user)
    return sent[-1].result


async def test_admin_gets_the_report_and_imports_with_one_press(
    tmp_path: Path,
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    es_chicago_csv: tuple[bytes, pd.DataFrame],
) -> None:
    fake = fake_telegram
    content, bars = es_chicago_csv
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        offer = await send_file(fake, ALICE, content, "nq chicago.csv", caption="ES please")
        assert fake.calls("getFile")  # the bot fetched the file through the Bot API
        text = offer["text"]
        assert text.startswith("nq chicago.csv as ES bars: what the check found.")
        assert "6,900 bars" in text
        assert "Times read as Chicago time (America/Chicago)" in text
        assert "No problems that stop the import." in text
        import_button, cancel_button = keyboard_data(offer)
        assert import_button.startswith("di:") and cancel_button.startswith("dc:")
        assert not data_path("ES", engine).exists()  # nothing written before Import

        await press(fake, ALICE, ALICE, offer, import_button)
        done = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        # A first import keeps nothing: "The previous data is kept (barb data restore ES
        # brings it back)" followed, with nothing for the restore to bring back.
        imported = "ES: imported 6,900 bars; the data now runs Mar 18, 2024 to Mar 22, 2024."
        assert done[-1].result["text"] == imported
        assert not previous_path(data_path("ES", engine)).exists()
        frame, meta = read_bars(data_path("ES", engine))
        assert meta.source_file == "nq chicago.csv"
        assert frame["timestamp"].tolist() == bars["timestamp"].dt.tz_localize(None).tolist()
        assert frame["close"].tolist() == bars["close"].tolist()
        answer = execute(
            {"session": "ETH", "from": "daily", "select": "max(high)"}, "ES", settings=engine
        )
        assert answer.summary.value == bars["high"].max()
        assert not keyboard_data(fake.message(ALICE, offer["message_id"]))  # buttons gone

        # A second file that does not continue the data (one volume corrected) replaces it,
        # as its report says; the previous one is kept for `barb data restore`.
        fixed = bars.copy()
        fixed.loc[10, "volume"] += 1
        content = bf.plain_csv(tmp_path / "again.csv", fixed, "America/Chicago").read_bytes()
        again = await send_file(fake, ALICE, content, "again.csv", caption="ES")
        assert (
            "Import replaces the stored ES data (6,900 bars, 2024-03-18 to 2024-03-22)"
            in (again["text"])
        )
        # The --append tried first is refused, the replace stands: the report says so.
        assert "No problems that stop the import." in again["text"]
        await press(fake, ALICE, ALICE, again, keyboard_data(again)[0])
        replaced = await fake.wait_for("sendMessage", 4, chat_id=ALICE)
        assert replaced[-1].result["text"] == (
            f"{imported} The previous data is kept (barb data restore ES brings it back)."
        )
        assert read_meta(data_path("ES", engine)).source_file == "again.csv"
        assert read_meta(previous_path(data_path("ES", engine))).source_file == "nq chicago.csv"
    # Each offer's staged file goes once it is imported; its record, once the reply is stored,
    # stays as its outcome.
    assert staged(engine) == []
    records = [json.loads(p.read_text()) for p in engine.data_dir.glob(".uploads/*/offer.json")]
    assert sorted((r["file_name"], r["said"]) for r in records) == [
        ("again.csv", True),
        ("nq chicago.csv", True),
    ]


async def test_a_bad_file_gets_the_report_and_no_import_button(
    fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    fake = fake_telegram
    bad = b"timestamp,open,high,low,close,volume\n2024-01-02 09:30:00,100,99,101,100,10\n"
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        reply = await send_file(fake, ALICE, bad, "bad.csv")
        assert "Not imported: bad.csv, line 2: high 99 is below low 101." in reply["text"]
        assert "Refused: OHLC inconsistent: 1" in reply["text"]
        assert not keyboard_data(reply)
        odd = await send_file(fake, ALICE, b"a,b\n1,2\n", "odd.csv")
        assert "unrecognised columns. Found: a, b" in odd["text"] and "--columns" in odd["text"]
    assert not data_path("NQ", engine).exists()


async def test_a_file_over_telegrams_limit_is_told_to_be_sent_zipped(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """A 40 MB CSV (two years of minute bars) was told only to use `barb data import` on the
    server, which a trader on his phone has no way to; zipped, it is 9 MB, which the bot
    takes. The reply says so, and the zipped file sent again is checked and offered."""
    fake = fake_telegram
    bars = bf.week_of_bars()
    csv = bf.plain_csv(tmp_path / "nq.csv", bars)
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        update = fake.document_update(
            chat_id=ALICE, user_id=ALICE, content=csv.read_bytes(), file_name="nq.csv"
        )
        update["message"]["document"]["file_size"] = 40_854_399  # as Telegram reports it
        fake.inject(update)
        reply = (await fake.wait_for("sendMessage", before + 1, chat_id=ALICE))[-1].result
        assert reply["text"] == (
            "This file is over the 20 MB a bot can download. Send it zipped (.zip or .gz: a "
            "CSV file of bars shrinks four to five times), or import it on the server with "
            "barb data import."
        )
        assert staged(engine) == []
        # Without its size (Telegram's file_size is optional), getFile refuses the file as
        # too big: it was answered "please send it again", which sent the admin round.
        update = fake.document_update(
            chat_id=ALICE, user_id=ALICE, content=csv.read_bytes(), file_name="nq.csv"
        )
        del update["message"]["document"]["file_size"]
        fake.fail_next("getFile", error_code=400, description="Bad Request: file is too big")
        fake.inject(update)
        unsized = (await fake.wait_for("sendMessage", before + 2, chat_id=ALICE))[-1].result
        assert unsized["text"] == reply["text"]
        assert staged(engine) == []
        zipped = await send_file(fake, ALICE, bf.zipped(csv).read_bytes(), "nq.zip")
        assert keyboard_data(zipped)  # Import and Cancel


async def test_an_archive_unpacking_past_the_limit_is_refused_before_it_fills_the_disk(
    tmp_path: Path,
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 20 MB .gz may unpack to gigabytes (zeros squeeze a thousandfold): the bot unpacked
    every byte into its temporary directory before reading a line. Unpacked past the limit
    (made small here), it is refused in one sentence, in English and in Russian, and nothing
    is staged or written."""
    fake = fake_telegram
    bars = bf.week_of_bars()
    packed = bf.gzipped(bf.plain_csv(tmp_path / "week.csv", bars)).read_bytes()
    unpacked = (tmp_path / "week.csv").stat().st_size
    monkeypatch.setattr(data_uploads, "MAX_UNPACKED_BYTES", unpacked // 2)
    limit = round(unpacked // 2 / 1e6)
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        reply = await send_file(fake, ALICE, packed, "week.csv.gz")
        assert reply["text"].splitlines()[-1] == (
            f"Not imported: week.csv.gz: unpacked, it holds over {limit} MB, more than a file "
            "sent to the bot may; send a shorter span of bars, or import it on the server "
            "with barb data import."
        )
        assert not keyboard_data(reply)
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        fake.inject(
            fake.document_update(
                chat_id=ALICE,
                user_id=ALICE,
                content=packed,
                file_name="week.csv.gz",
                language_code="ru",
            )
        )
        russian = (await fake.wait_for("sendMessage", before + 1, chat_id=ALICE))[-1].result
        assert "в распакованном виде в нём больше" in russian["text"]
    assert staged(engine) == []
    assert not data_path("NQ", engine).exists()


async def test_a_damaged_stored_file_is_said_in_one_sentence_and_import_writes_over_it(
    tmp_path: Path,
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    es_chicago_csv: tuple[bytes, pd.DataFrame],
) -> None:
    """Stored ES bars whose pages no longer decompress: the check's OSError escaped the
    worker thread, the admin got the generic error, and the upload stayed under .uploads;
    then the bot refused every file, though writing a good one over it is the way out. Now
    the report says what cannot be read, and Import replaces it without keeping it."""
    fake = fake_telegram
    content, bars = es_chicago_csv
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        offer = await send_file(fake, ALICE, content, "week.csv", caption="ES")
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
        await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        target = data_path("ES", engine)
        damaged = bytearray(target.read_bytes())
        damaged[100:5000] = b"\xab" * 4900  # the first column's pages, not the footer
        target.write_bytes(bytes(damaged))

        again = bf.plain_csv(tmp_path / "mon.csv", bars.iloc[:1380], "America/Chicago")
        reply = await send_file(fake, ALICE, again.read_bytes(), "mon.csv", caption="ES")
        text = reply["text"]
        assert "The stored ES data in ES.parquet cannot be read (" in text
        assert "): this file replaces it, and the damaged file is not kept." in text
        assert text.endswith(
            "Import writes this file in place of the stored ES data, which cannot be read."
        )
        assert "Traceback" not in text and "Not imported" not in text
        assert target.read_bytes() == bytes(damaged)  # nothing written before Import

        await press(fake, ALICE, ALICE, reply, keyboard_data(reply)[0])
        done = await fake.wait_for("sendMessage", 4, chat_id=ALICE)
        assert done[-1].result["text"].startswith("ES: imported 1,380 bars;")
        assert "previous data is kept" not in done[-1].result["text"]  # the damaged file is not
        frame, meta = read_bars(target)
        assert meta.source_file == "mon.csv" and len(frame) == 1380
        assert not previous_path(target).exists()  # the damaged file is not kept
    assert staged(engine) == []


async def test_cancel_and_other_people(
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    chicago_csv: tuple[bytes, pd.DataFrame],
) -> None:
    fake = fake_telegram
    content, _ = chicago_csv
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}) as svc:
        refused = await send_file(fake, BOB, content, "mine.csv")  # not an admin: any file
        assert refused["text"] == t("upload_admins_only", "en")
        # A trader's own trades with a question: not told their file is one of bars, and
        # the question is not asked of a file never read (no model call, no getFile).
        trades = b"date,side,pnl\r\n2024-03-01,long,250\r\n"
        said = await send_file(fake, BOB, trades, "trades.csv", "my win rate on these?")
        assert said["text"].startswith("I don't open files sent to me (only Barb's admins")
        assert said["text"] == t("upload_admins_only", "en")
        assert not fake.calls("getFile") and svc.assistant.provider.requests == []

        offer = await send_file(fake, ALICE, content, "nq.csv")
        import_button, cancel_button = keyboard_data(offer)
        await press(fake, ALICE, BOB, offer, import_button)  # Bob presses Alice's button
        await fake.wait_for("sendMessage", 2, chat_id=ALICE)  # the offer, then "not yours"
        await press(fake, ALICE, ALICE, offer, cancel_button)
        sent = await fake.wait_for("sendMessage", 3, chat_id=ALICE)
        texts = [c.result["text"] for c in sent]
        assert "Only the admin who sent this file can import it." in texts
        assert texts[-1] == "Import cancelled; nothing was written."
        await press(fake, ALICE, ALICE, offer, import_button)  # too late: the offer is gone
        sent = await fake.wait_for("sendMessage", 4, chat_id=ALICE)
        assert (
            sent[-1].result["text"]
            == "This file is no longer waiting to be imported; send it again."
        )
    assert not data_path("NQ", engine).exists()


async def test_in_a_group_only_a_file_handed_to_the_bot_by_an_admin_is_taken(
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    chicago_csv: tuple[bytes, pd.DataFrame],
) -> None:
    fake = fake_telegram
    content, _ = chicago_csv
    mention = f"@{fake.bot['username']} NQ"
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        for user, caption in ((BOB, mention), (ALICE, "our minutes"), (ALICE, mention)):
            fake.inject(
                fake.document_update(
                    chat_id=GROUP, user_id=user, content=content, file_name="g.csv", caption=caption
                )
            )
        said = await fake.wait_for("sendMessage", 2, chat_id=GROUP)
        texts = sorted(c.result["text"] for c in said)
        # Bob, not an admin, is told in one sentence who can import and what he can do (his
        # caption "NQ" was asked as a question, under "I can't see pictures").
        assert texts[0] == t("upload_admins_only", "en")
        assert texts[1].startswith("g.csv as NQ bars")
        assert len(fake.calls("getFile")) == 1  # the other two files were never fetched


async def test_a_russian_admin_reads_what_import_does_in_russian_and_commands_as_code(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """A Russian admin's offers said "Import adds the file's 2,760 new bars to the stored ES
    data (4,140 bars, …)" in English, and «…с 18 мар. 2024 г. по 20 мар. 2024 г.. Прежние
    данные сохранены (`barb data restore ES` вернёт их).» showed its backticks and two dots;
    that sentence also followed a first import, when there was nothing to bring back."""
    fake = fake_telegram
    bars = bf.week_of_bars(level=ES_LEVEL)
    cut = len(bars) * 3 // 5  # three of the five days; the second file overlaps by 100 bars

    async def send(part: pd.DataFrame, name: str) -> dict:
        content = bf.plain_csv(tmp_path / name, part.reset_index(drop=True), "America/Chicago")
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        update = fake.document_update(
            chat_id=ALICE,
            user_id=ALICE,
            content=content.read_bytes(),
            file_name=name,
            caption="ES",
            language_code="ru",
        )
        fake.inject(update)
        return (await fake.wait_for("sendMessage", before + 1, chat_id=ALICE))[-1].result

    async def import_(offer: dict) -> dict:
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0], language_code="ru")
        return (await fake.wait_for("sendMessage", before + 1, chat_id=ALICE))[-1].result

    MAR_18, MAR_20, MAR_22 = (dt.date(2024, 3, d) for d in (18, 20, 22))  # «18 мар. 2024 г.»

    def n(value: int) -> str:
        return decimal(value, "ru")  # 4 140, with a no-break space

    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        # Nothing stored before: no «прежние данные сохранены», there were none.
        first = await import_(await send(bars.iloc[:cut], "w1.csv"))
        assert first["text"] == (
            f"ES: импортировано {n(cut)} баров (данные теперь с {day(MAR_18, 'ru')} по "
            f"{day(MAR_20, 'ru')})."
        )
        assert not previous_path(data_path("ES", engine)).exists()

        offer = await send(bars.iloc[cut - 100 :], "w2.csv")
        assert (
            f"Импорт добавит {n(len(bars) - cut)} новых баров файла к хранящимся данным ES "
            f"({n(cut)} баров, 2024-03-18 — 2024-03-20)."
        ) in offer["text"]
        appended = await import_(offer)
        assert appended["text"] == (
            f"ES: импортировано {n(len(bars) - cut)} баров (данные теперь с {day(MAR_18, 'ru')} "
            f"по {day(MAR_22, 'ru')}). Прежние данные сохранены (barb data restore ES вернёт их)."
        )
        assert [e["type"] for e in appended["entities"]] == ["code"]
        assert read_meta(previous_path(data_path("ES", engine))).rows == cut
        assert read_meta(data_path("ES", engine)).rows == len(bars)

        fixed = bars.copy()
        fixed.loc[10, "volume"] += 1
        offer = await send(fixed, "fixed.csv")
        assert (
            f"Импорт заменит хранящиеся данные ES ({n(len(bars))} баров, 2024-03-18 — "
            "2024-03-22); barb data restore ES вернёт их до следующего импорта. Данные, "
            f"сохранённые с прошлого раза ({n(cut)} баров, 2024-03-18 — 2024-03-20), при этом "
            "удаляются."
        ) in offer["text"]
        assert "`" not in offer["text"]
        replaced = await import_(offer)
        assert replaced["text"] == (
            f"ES: импортировано {n(len(bars))} баров (данные теперь с {day(MAR_18, 'ru')} по "
            f"{day(MAR_22, 'ru')}). Прежние данные сохранены (barb data restore ES вернёт их)."
        )
        assert read_meta(previous_path(data_path("ES", engine))).rows == len(bars)


async def test_a_russian_admin_reads_the_report_and_the_refusal_in_russian(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """The bot's offer around it was Russian, but the importer's report and its refusal
    reached a Russian admin in English: "Suspicious: far highs or lows: 1", "Not imported:
    bad.csv, line 2: high 99 is below low 101. (2 more problems in the report)"."""
    fake = fake_telegram
    bars = bf.week_of_bars(level=ES_LEVEL)
    bars.loc[300, "high"] = bars.loc[300, "high"] * 1.5  # a wild high with a normal close
    content = bf.plain_csv(tmp_path / "wick.csv", bars, "America/Chicago").read_bytes()
    bad = (
        b"timestamp,open,high,low,close,volume\n"
        b"2024-01-02 09:30:00,100,99,101,100,10\n"
        b"2024-01-02 09:31:00,100,99,101,100,-1\n"
    )

    async def send(data: bytes, name: str) -> dict:
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        update = fake.document_update(
            chat_id=ALICE,
            user_id=ALICE,
            content=data,
            file_name=name,
            caption="ES",
            language_code="ru",
        )
        fake.inject(update)
        return (await fake.wait_for("sendMessage", before + 1, chat_id=ALICE))[-1].result

    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        offer = await send(content, "wick.csv")
        report = offer["text"]
        bar = bars.loc[300]
        stamp = bar["timestamp"].tz_convert("America/Chicago").tz_localize(None)  # as written
        assert report.splitlines()[1:4] == [
            f"wick.csv: один столбец времени, {decimal(len(bars), 'ru')} баров",
            "Даты: 2024-03-18 — 2024-03-22, 5 торговых дней; бары по 1 мин.",
            "Время прочитано как время Chicago (America/Chicago): дневной перерыв в файле "
            "приходится на 16:00–17:00.",
        ]
        assert "Подозрительно: далёкие high или low: 1\n" in report
        assert (
            f"  строка 302: {stamp}: high {bar['high']:g}, low {bar['low']:g} при open "
            f"{bar['open']:g} и close {bar['close']:g} (больше чем на 10% за ними: ошибочный "
            "принт?)."
        ) in report
        assert "Проблем, мешающих импорту, нет." in report
        assert keyboard_data(offer)  # reported, not refused: Import is offered

        refused = (await send(bad, "bad.csv"))["text"]
        assert "Отклонено: отрицательный объём: 1\n  строка 3: отрицательный объём -1." in refused
        assert "Отклонено: OHLC не согласованы: 2\n  строка 2: high 99 ниже low 101." in refused
        assert refused.endswith(
            "Не импортировано: bad.csv, строка 2: high 99 ниже low 101. (ещё 2 проблемы в отчёте)"
        )
        # No English sentence of the importer's is left in either.
        for english in ("bars", "Dates", "Times", "Suspicious", "Refused", "line", "problem"):
            assert english not in report + refused, english


async def test_a_russian_admin_reads_a_whole_file_refusal_in_russian(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """Refusals of a file as a whole reached a Russian admin in English: "unrecognised
    columns. Found: a, b. …", "the file's times fit none of the zones Barb tries: …"."""
    fake = fake_telegram
    bars = bf.week_of_bars(level=ES_LEVEL)
    dubai = bf.plain_csv(tmp_path / "dubai.csv", bars, "Asia/Dubai").read_bytes()
    # Where ES's 17:00-18:00 New York break falls on the Dubai clock, worked out by hand.
    brk = pd.Timestamp("2024-03-18 17:00", tz="America/New_York").tz_convert("Asia/Dubai")
    end = brk + pd.Timedelta(hours=1)

    async def send(data: bytes, name: str) -> str:
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        update = fake.document_update(
            chat_id=ALICE,
            user_id=ALICE,
            content=data,
            file_name=name,
            caption="ES",
            language_code="ru",
        )
        fake.inject(update)
        sent = await fake.wait_for("sendMessage", before + 1, chat_id=ALICE)
        return sent[-1].result["text"]

    def english_words(text: str) -> set[str]:
        # Verbatim: zone names, and the names Barb and the exchange's data go by.
        found = set(re.findall(r"[A-Za-z]{2,}", re.sub(r"[A-Za-z_]+/[A-Za-z_]+", " ", text)))
        return found - {"ES", "Barb", "IANA", "New", "York", "timezone", "columns"}

    # The layouts Barb knows are named by their own column names, verbatim.
    known = "; ".join(f"{x.name}: {x.example}" for x in LAYOUTS.values() if x.header)
    example = "timestamp=Time,open=Open,high=High,low=Low,close=Close,volume=Volume"
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        odd = await send(b"a,b\n1,2\n", "odd.csv")
        refusal = odd.splitlines()[-1]
        assert refusal == (
            "Не импортировано: odd.csv, строка 1: столбцы не распознаны. Найдены: a, b. "
            f"Форматы, которые знает Barb: {known}. Иначе отправьте файл ещё раз, назвав "
            f"столбцы в подписи, например --columns {example} (или date=…,time=… для "
            "отдельных столбцов даты и времени); форматы, которые знает Barb, описаны в "
            "docs/data.md."
        )
        rest = refusal.replace(known, "").replace(example, "").replace("date=…,time=…", "")
        assert english_words(rest.replace("odd.csv", "").replace("docs/data.md", "")) == set()

        zone = (await send(dubai, "dubai.csv")).splitlines()[-1]
        assert zone == (
            "Не импортировано: dubai.csv: время в файле не подходит ни к одному поясу, которые "
            f"пробует Barb: дневной перерыв в файле приходится на {brk:%H:%M}–{end:%H:%M}, а у "
            "биржи он в 17:00–18:00, время New York (America/New_York); отправьте файл ещё "
            "раз с поясом его времени в подписи, например --timezone Asia/Dubai."
        )
        assert english_words(zone.replace("dubai.csv", "")) == set()
    assert not data_path("ES", engine).exists()


async def test_a_russian_excel_export_joined_from_two_is_offered_and_imported(
    fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """A Russian Excel's CSV (Windows-1251, «Дата;Время;Открытие;…», decimal commas), two
    exports joined with their header repeated: refused as "unrecognised columns" (or, saved
    so, asked to be saved as UTF-8), then "delete this line". Offered in Russian, saying how
    it was read, and imported as the bars written."""
    fake = fake_telegram
    bars = bf.week_of_bars(level=ES_LEVEL, days=2)
    wall = bf.in_zone(bars, "America/Chicago")
    header = "Дата;Время;Открытие;Максимум;Минимум;Закрытие;Объём"
    rows = [
        f"{t:%d.%m.%Y};{t:%H:%M};"
        + ";".join(
            f"{getattr(r, c):.2f}".replace(".", ",") for c in ("open", "high", "low", "close")
        )
        + f";{r.volume}"
        for t, r in zip(wall, bars.itertuples(), strict=True)
    ]
    text = "\r\n".join([header, *rows[:1000], header, *rows[1000:]]) + "\r\n"
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        update = fake.document_update(
            chat_id=ALICE,
            user_id=ALICE,
            content=text.encode("cp1251"),
            file_name="es.csv",
            caption="ES",
            language_code="ru",
        )
        fake.inject(update)
        offer = (await fake.wait_for("sendMessage", before + 1, chat_id=ALICE))[-1].result
        report = offer["text"]
        assert "Файл в кодировке Windows-1251" in report
        assert "(всего 1, первый в строке 1002)" in report
        assert "Время прочитано как время Chicago (America/Chicago)" in report
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
        await fake.wait_for("sendMessage", before + 2, chat_id=ALICE)
    frame, _ = read_bars(data_path("ES", engine))
    assert frame["timestamp"].tolist() == bars["timestamp"].dt.tz_localize(None).tolist()
    assert frame["close"].tolist() == bars["close"].tolist()


async def test_a_russian_admin_is_told_what_barb_takes_of_odd_files_and_gets_the_rest(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """In a Russian chat: 1-second bars were refused with each bar "not on a whole minute";
    a New York cash-session file captioned Chicago time was offered and stored an hour
    late; a Finam file in Windows-1251 with a Cyrillic ticker on every line and a `;` ending
    each bar's line was refused twice over. Each is now one Russian sentence, or an offer
    that imports the bars written."""
    fake = fake_telegram

    async def send(data: bytes, name: str, caption: str) -> dict:
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        update = fake.document_update(
            chat_id=ALICE,
            user_id=ALICE,
            content=data,
            file_name=name,
            caption=caption,
            language_code="ru",
        )
        fake.inject(update)
        return (await fake.wait_for("sendMessage", before + 1, chat_id=ALICE))[-1].result

    times = pd.date_range("2024-03-18 09:30", periods=600, freq="s")
    seconds = pd.DataFrame(
        {"timestamp": times.strftime("%Y-%m-%d %H:%M:%S"), "open": 18000.0, "high": 18000.25}
    ).assign(low=18000.0, close=18000.0, volume=1)
    bars = bf.week_of_bars(days=2)
    minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    cash = bars[(minute >= 570) & (minute < 960)]
    wall = bf.in_zone(bars, bf.NY)
    finam = ["<TICKER>;<PER>;<DATE>;<TIME>;<OPEN>;<HIGH>;<LOW>;<CLOSE>;<VOL>"] + [
        f"Фьючерс NQ;1;{t:%Y%m%d};{t:%H%M%S};{r.open};{r.high};{r.low};{r.close};{r.volume};"
        for t, r in zip(wall, bars.itertuples(), strict=True)
    ]
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        fast = (await send(seconds.to_csv(index=False).encode(), "sec.csv", "NQ"))["text"]
        assert fast.splitlines()[-1] == (
            "Не импортировано: sec.csv: в файле бары по 1 с (первый внутри минуты — "
            "2024-03-18 09:30:01), а Barb принимает бары от одной минуты: соберите из них "
            "минутные бары (в каждой минуте первый open, наибольший high, наименьший low, "
            "последний close и сумма объёмов) и импортируйте их."
        )
        path = bf.plain_csv(tmp_path / "cash.csv", cash)
        chicago = await send(path.read_bytes(), "cash.csv", "NQ --timezone America/Chicago")
        assert not keyboard_data(chicago)  # refused: no Import button
        assert (
            chicago["text"]
            .splitlines()[-1]
            .endswith(
                "дни файла идут 10:30–17:00, а такой сессии у инструмента нет; как время New York "
                "(America/New_York) они идут 09:30–16:00, ровно от начала до конца одной из его "
                "сессий: похоже, файл в этом поясе; отправьте файл ещё раз с подписью "
                "--timezone America/New_York."
            )
        )
        offer = await send(("\r\n".join(finam) + "\r\n").encode("cp1251"), "nq.csv", "NQ")
        assert "Файл в кодировке Windows-1251" in offer["text"]
        before = len(fake.calls("sendMessage", chat_id=ALICE))
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
        await fake.wait_for("sendMessage", before + 1, chat_id=ALICE)
    frame, _ = read_bars(data_path("NQ", engine))
    assert frame["timestamp"].tolist() == wall.tolist()
    assert frame["close"].tolist() == bars["close"].tolist()
    assert frame["volume"].tolist() == bars["volume"].tolist()


async def test_a_dubai_time_file_is_imported_with_the_zone_in_its_caption(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """A file in Dubai time was refused with "pass --timezone …", which the bot gave no way
    to do: it could not be imported through the bot at all. Now the refusal says to send it
    again with the zone in the caption, and with it the bars are stored at the right times."""
    fake = fake_telegram
    bars = bf.week_of_bars(level=ES_LEVEL)
    path = bf.plain_csv(tmp_path / "dubai.csv", bars, "Asia/Dubai")
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        refused = await send_file(fake, ALICE, path.read_bytes(), "dubai.csv", caption="ES")
        assert (
            refused["text"]
            .splitlines()[-1]
            .endswith(
                "send the file again with the zone of its times in the caption, "
                "e.g. --timezone Asia/Dubai."
            )
        )
        assert not keyboard_data(refused)
        assert not list((engine.data_dir / ".uploads").iterdir())
        # A caption the file contradicts is refused without "Import uses the same" (r47d).
        wrong = await send_file(
            fake, ALICE, path.read_bytes(), "dubai.csv", caption="ES --timezone America/Chicago"
        )
        assert "Not imported: " in wrong["text"]
        assert "Checked with" not in wrong["text"]
        assert not keyboard_data(wrong)

        offer = await send_file(
            fake, ALICE, path.read_bytes(), "dubai.csv", caption="ES —timezone Asia/Dubai"
        )
        assert (
            "Checked with the caption's --timezone Asia/Dubai: read as Asia/Dubai time; "
            "Import uses the same." in offer["text"]
        )
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
        done = await fake.wait_for("sendMessage", 4, chat_id=ALICE)
        assert done[-1].result["text"].startswith("ES: imported 6,900 bars")
    # The file's own times, read as Dubai time by pandas, are New York's 18:00-17:00.
    written = pd.read_csv(path)["timestamp"]
    expected = (
        pd.to_datetime(written)
        .dt.tz_localize("Asia/Dubai")
        .dt.tz_convert(bf.NY)
        .dt.tz_localize(None)
    )
    frame, meta = read_bars(data_path("ES", engine))
    assert frame["timestamp"].tolist() == expected.tolist()
    assert frame["timestamp"].iloc[0] == pd.Timestamp("2024-03-17 18:00")
    assert frame["close"].tolist() == bars["close"].tolist()
    assert meta.source_file == "dubai.csv"


async def test_prices_a_hundred_times_too_small_are_refused_unless_the_caption_says_so(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """NQ at 180.77 (points over 100) sent as a first import was offered with Import (the
    note about the level was not even shown: nothing was stored to compare with), and every
    answer over it was off a hundredfold. Refused in one sentence naming the file's level
    and NQ's (NQ.yaml's anchors, log-linear between 2023-12-29's 16,900 and 2024-12-31's
    21,200), with the caption that imports it anyway."""
    fake = fake_telegram
    bars = bf.week_of_bars(level=ES_LEVEL)
    small = bars.assign(**{c: (bars[c] / 100).round(6) for c in ("open", "high", "low", "close")})
    content = bf.plain_csv(tmp_path / "nq.csv", small).read_bytes()
    days = [dt.date(2023, 12, 29), dt.date(2024, 12, 31)]
    middle = small["timestamp"].iloc[len(small) // 2].date()
    known = np.exp(
        np.interp(middle.toordinal(), [d.toordinal() for d in days], np.log([16900, 21200]))
    )
    ratio = small["close"].median() / known
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        refused = await send_file(fake, ALICE, content, "nq.csv", caption="NQ")
        last = refused["text"].splitlines()[-1]
        assert f"is ×{ratio:.2g} the level NQ had around {middle}" in last
        assert f"about {round(known, -1):,.0f}," in last
        assert last.endswith("send the file again with the caption --any-level.")
        # The report above the refusal does not say the import would go.
        assert "No problems that stop the import." not in refused["text"]
        assert not keyboard_data(refused)
        assert not data_path("NQ", engine).exists()

        offer = await send_file(fake, ALICE, content, "nq.csv", caption="NQ --any-level")
        assert "Checked with the caption's --any-level" in offer["text"]
        assert f"is ×{ratio:.2g} the level NQ had around {middle}" in offer["text"]
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
        done = await fake.wait_for("sendMessage", 3, chat_id=ALICE)
        assert done[-1].result["text"].startswith("NQ: imported 6,900 bars")
    frame, _ = read_bars(data_path("NQ", engine))
    assert frame["close"].tolist() == small["close"].tolist()


async def test_the_options_checked_are_the_options_imported(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """5-minute Dubai bars stamped at their close: the offer says how it read them, keeps the
    options in its record, and Import reads the file with exactly them."""
    fake = fake_telegram
    bars = bf.week_of_bars(step_minutes=5, level=ES_LEVEL)
    path = tmp_path / "five.csv"
    closes = bf.in_zone(bars, "Asia/Dubai", "close", step_minutes=5)
    bars.assign(timestamp=closes.dt.strftime("%Y-%m-%d %H:%M:%S")).to_csv(path, index=False)
    caption = "ES --timezone Asia/Dubai --interval=5m --stamp close"
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        offer = await send_file(fake, ALICE, path.read_bytes(), "five.csv", caption=caption)
        assert (
            "Checked with the caption's --timezone Asia/Dubai --interval 5m --stamp close: "
            "read as Asia/Dubai time, 5-minute bars, times are bar closes; Import uses the same."
        ) in offer["text"]
        (record,) = (engine.data_dir / ".uploads").glob("*/offer.json")
        assert '"timezone":"Asia/Dubai","interval":"5m","stamp":"close"' in record.read_text()
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
        done = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        assert done[-1].result["text"].startswith(f"ES: imported {decimal(len(bars), 'en')} bars")
    frame, meta = read_bars(data_path("ES", engine))
    assert meta.interval_minutes == 5
    # Stored as bar opens on the New York clock: each close five minutes back.
    opens = pd.to_datetime(pd.read_csv(path)["timestamp"]) - pd.Timedelta(minutes=5)
    expected = opens.dt.tz_localize("Asia/Dubai").dt.tz_convert(bf.NY).dt.tz_localize(None)
    assert frame["timestamp"].tolist() == expected.tolist()
    assert frame["timestamp"].tolist() == bars["timestamp"].dt.tz_localize(None).tolist()


@pytest.mark.parametrize(
    ("caption", "said"),
    [
        (
            "ES --replace",
            "--replace в подписи — не параметр импорта; подпись может содержать инструмент и "
            "--timezone, --interval, --stamp, --date-order, --format, --columns, --any-level, "
            "--fill-volumes, как в командной строке "
            "(--timezone Asia/Dubai --interval 5m).",
        ),
        ("ES --stamp end", "--stamp в подписи принимает open или close, а не end."),
        (
            "ES --timezone",
            "у --timezone в подписи нет значения; пишите как в командной строке, "
            "например --timezone Asia/Dubai.",
        ),
        (
            "ES --timezone Asia/Dubay",
            "неизвестный часовой пояс 'Asia/Dubay'; используйте имя IANA, например "
            "America/Chicago или UTC.",
        ),
        ('ES --columns "timestamp=Time', "в подписи не закрыта кавычка."),
        # p46b #3: a region alone is a folder of the zone database (IsADirectoryError):
        # "Something broke" until it was read as the unknown zone it is.
        (
            "ES --timezone America",
            "неизвестный часовой пояс 'America'; используйте имя IANA, например "
            "America/Chicago или UTC.",
        ),
        (
            "ES --columns ''",
            "у --columns в подписи нет значения; пишите как в командной строке, "
            "например --timezone Asia/Dubai.",
        ),
    ],
)
async def test_a_caption_not_understood_is_refused_in_russian_and_nothing_is_staged(
    caption: str,
    said: str,
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    chicago_csv: tuple[bytes, pd.DataFrame],
) -> None:
    fake = fake_telegram
    content, _ = chicago_csv
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        fake.inject(
            fake.document_update(
                chat_id=ALICE,
                user_id=ALICE,
                content=content,
                file_name="x.csv",
                caption=caption,
                language_code="ru",
            )
        )
        sent = await fake.wait_for("sendMessage", 1, chat_id=ALICE)
        assert sent[-1].result["text"] == f"Не импортировано: {said}"
        assert not keyboard_data(sent[-1].result)
        assert not fake.calls("getFile")  # not even fetched
    assert not (engine.data_dir / ".uploads").exists() or not list(
        (engine.data_dir / ".uploads").iterdir()
    )
    assert not data_path("ES", engine).exists()


async def test_an_import_pressed_while_the_bot_was_down_is_done(
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    es_chicago_csv: tuple[bytes, pd.DataFrame],
) -> None:
    """Telegram refuses to answer a press it delivers late (made while the bot was down):
    the bare answer raised, the admin read "Something broke" and nothing was imported."""
    fake = fake_telegram
    content, bars = es_chicago_csv
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        offer = await send_file(fake, ALICE, content, "week.csv", caption="ES")
        fake.fail_next(
            "answerCallbackQuery", error_code=400, description=QUERY_INVALID, retry_after=None
        )
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
        done = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
    assert done[-1].result["text"] == (
        "ES: imported 6,900 bars; the data now runs Mar 18, 2024 to Mar 22, 2024."
    )
    assert read_meta(data_path("ES", engine)).rows == len(bars)


async def test_an_import_cut_by_a_shutdown_is_said_at_the_next_start(
    tmp_path: Path,
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    es_chicago_csv: tuple[bytes, pd.DataFrame],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Import pressed, and the shutdown's grace ran out while it wrote (NQ's 6.4M bars take
    seconds): the handler was stopped, the worker thread wrote the data and deleted the
    offer, and the press, handled again at the next start, read "send it again" of a file
    that was imported. Now it reads what was imported, kept with the offer until said; the
    file sent again has nothing new, and the data from before the import stays kept."""
    fake = fake_telegram
    content, bars = es_chicago_csv
    monday = bf.plain_csv(tmp_path / "mon.csv", bars.iloc[:1380], "America/Chicago")
    stoppable: list[StoppableUpdates] = []
    real_init = StoppableUpdates.__init__

    def recording_init(self: StoppableUpdates, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        stoppable.append(self)

    monkeypatch.setattr(StoppableUpdates, "__init__", recording_init)
    writing, gate = threading.Event(), threading.Event()
    real_write = data_uploads.write_checked

    def slow_write(*args: object, **kwargs: object) -> object:
        result = real_write(*args, **kwargs)  # type: ignore[arg-type]
        if kwargs["expect"]:  # the week's, not Monday's
            writing.set()
            gate.wait(20)
        return result

    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        first = await send_file(fake, ALICE, monday.read_bytes(), "mon.csv", caption="ES")
        await press(fake, ALICE, ALICE, first, keyboard_data(first)[0])
        await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        monkeypatch.setattr(data_uploads, "write_checked", slow_write)
        offer = await send_file(fake, ALICE, content, "week.csv", caption="ES")
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
        await asyncio.to_thread(writing.wait, 20)
        assert stoppable[-1].stop_running() >= 1  # the shutdown's grace is over
        await asyncio.sleep(0.2)
    gate.set()  # the worker thread goes on (the interpreter waits for it at exit)
    target = data_path("ES", engine)
    assert read_meta(target).rows == len(bars)  # it was imported
    said = len(fake.said(ALICE))
    assert said == 3  # the imported week was not said

    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        await fake.wait_said(said + 1, chat_id=ALICE, timeout=20)
        again = await send_file(fake, ALICE, content, "week.csv", caption="ES")
    assert fake.said(ALICE)[said]["text"] == (
        "ES: imported 5,520 bars; the data now runs Mar 18, 2024 to Mar 22, 2024. "
        "The previous data is kept (barb data restore ES brings it back)."
    )
    assert again["text"].endswith(
        "Not imported: every bar of week.csv is already in the stored ES data (6,900 bars, "
        "2024-03-18 to 2024-03-22); there is nothing to import."
    )
    assert read_meta(previous_path(target)).source_file == "mon.csv"  # for barb data restore
    assert staged(engine) == []


async def test_upload_replies_are_in_the_language_chosen_in_settings(
    fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """An admin who chose Russian in /settings on an English phone read the report and its
    refusal in English: only Telegram's language_code was read."""
    fake = fake_telegram
    bad = b"timestamp,open,high,low,close,volume\n2024-01-02 09:30:00,100,99,101,100,10\n"
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}) as svc:
        await svc.store.chats.ensure(ALICE, "private")
        await svc.store.chats.update_settings(ALICE, language="ru")
        fake.inject(
            fake.document_update(
                chat_id=ALICE, user_id=ALICE, content=bad, file_name="bad.csv", language_code="en"
            )
        )
        [reply] = await fake.wait_for("sendMessage", 1, chat_id=ALICE)
    assert reply.result["text"].startswith("bad.csv как бары NQ: что нашла проверка.")
    assert reply.result["text"].endswith(
        "Не импортировано: bad.csv, строка 2: high 99 ниже low 101."
    )


async def test_an_offer_nobody_pressed_for_a_day_expires(
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    chicago_csv: tuple[bytes, pd.DataFrame],
) -> None:
    """Unpressed uploads stayed under .uploads for good, and Import worked on them days
    later. An offer untouched for a day (a plan's lifetime) is now refused in one sentence
    in the admin's language, and let go at the next start or upload."""
    fake = fake_telegram
    content, _ = chicago_csv
    desk = DataUploads(engine)

    def age(offer_id: str, hours: float) -> None:
        record = desk.root / offer_id / "offer.json"
        saved = dt.datetime.now(dt.UTC) - dt.timedelta(hours=hours)
        record.write_text(json.dumps(json.loads(record.read_text()) | {"saved_at": str(saved)}))

    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        fake.inject(
            fake.document_update(
                chat_id=ALICE, user_id=ALICE, content=content, file_name="w.csv", language_code="ru"
            )
        )
        [offer] = await fake.wait_for("sendMessage", 1, chat_id=ALICE)
        button = keyboard_data(offer.result)[0]
        age(button.split(":")[1], 25)
        await press(fake, ALICE, ALICE, offer.result, button, language_code="ru")
        sent = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        assert sent[-1].result["text"] == (
            "Этот файл ждал импорта больше суток и устарел; чтобы импортировать его, "
            "отправьте его ещё раз."
        )
        assert not keyboard_data(fake.message(ALICE, offer.result["message_id"]))
        unpressed = await send_file(fake, ALICE, content, "again.csv")
    assert not data_path("NQ", engine).exists()
    left = keyboard_data(unpressed)[0].split(":")[1]
    assert [p.name for p in desk.root.iterdir()] == [left]
    age(left, 25)
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        pass
    assert not list(desk.root.iterdir())  # let go at the start


async def test_a_second_press_on_an_imported_offer_says_what_became_of_it(
    tmp_path: Path,
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    es_chicago_csv: tuple[bytes, pd.DataFrame],
) -> None:
    """Import pressed twice (or on the second copy of an offer a lost response left), or
    Cancel after Import: the offer was deleted with the reply, and the second press read
    "This file is no longer waiting to be imported; send it again." of a file imported a
    moment ago (sent again, it replaced the data kept from before the import with itself).
    The record now stays as the offer's outcome, and the press is told what became of it."""
    fake = fake_telegram
    content, bars = es_chicago_csv
    monday = bf.plain_csv(tmp_path / "mon.csv", bars.iloc[:1380], "America/Chicago")
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        first = await send_file(fake, ALICE, monday.read_bytes(), "mon.csv", caption="ES")
        import_button, cancel_button = keyboard_data(first)
        await press(fake, ALICE, ALICE, first, import_button)
        await press(fake, ALICE, ALICE, first, cancel_button, language_code="ru")
        said = await fake.wait_said(3, chat_id=ALICE)
        assert (
            said[-1]["text"]
            == "Отменять поздно: файл уже импортирован, а данных ES до него не было."
        )

        week = await send_file(fake, ALICE, content, "week.csv", caption="ES")
        import_button, cancel_button = keyboard_data(week)
        for button in (import_button, import_button, cancel_button):
            await press(fake, ALICE, ALICE, week, button)
        said = await fake.wait_said(7, chat_id=ALICE)
    imported = (
        "ES: imported 5,520 bars; the data now runs Mar 18, 2024 to Mar 22, 2024. "
        "The previous data is kept (barb data restore ES brings it back)."
    )
    assert [m["text"] for m in said[4:]] == [
        imported,
        f"Already imported: {imported}",
        "Too late to cancel: the file was already imported "
        "(barb data restore ES brings the previous data back).",
    ]
    target = data_path("ES", engine)
    assert read_meta(target).rows == len(bars)  # imported once
    assert read_meta(previous_path(target)).source_file == "mon.csv"
    assert staged(engine) == []


@pytest.mark.parametrize("refused", ["offer", "imported"])
async def test_a_reply_telegram_refuses_for_good_leaves_no_staged_copy(
    fake_telegram: FakeBotAPI,
    db_url: str,
    engine: EngineSettings,
    es_chicago_csv: tuple[bytes, pd.DataFrame],
    refused: str,
) -> None:
    """The admin blocked the bot (403) as it sent the offer, or the reply saying it was
    imported: the staged file (up to 20 MB) stayed under .uploads, an offer nobody can
    press. It goes now; an imported offer keeps its record (its outcome)."""
    fake = fake_telegram
    content, bars = es_chicago_csv
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        if refused == "offer":
            fake.fail_next("sendMessage", error_code=403, chat_id=ALICE)
            fake.inject(
                fake.document_update(
                    chat_id=ALICE, user_id=ALICE, content=content, file_name="w.csv", caption="ES"
                )
            )
            [call] = await fake.wait_for("sendMessage", 1, chat_id=ALICE)
        else:
            offer = await send_file(fake, ALICE, content, "week.csv", caption="ES")
            fake.fail_next("sendMessage", error_code=403, chat_id=ALICE)
            await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
            call = (await fake.wait_for("sendMessage", 2, chat_id=ALICE))[-1]
        assert call.status == 403
    assert staged(engine) == []
    offers = list((engine.data_dir / ".uploads").glob("*/offer.json"))
    if refused == "offer":
        assert offers == [] and not data_path("ES", engine).exists()
    else:
        assert json.loads(offers[0].read_text())["said"]
        assert read_meta(data_path("ES", engine)).rows == len(bars)


async def test_import_pressed_once_the_queries_run_on_workers_elsewhere_is_refused(
    fake_telegram: FakeBotAPI,
    db_url: str,
    redis_url: str,
    engine: EngineSettings,
    es_chicago_csv: tuple[bytes, pd.DataFrame],
) -> None:
    """A file offered by the bot alone, its Import pressed after the bot was switched to
    workers on other machines (``BARB_QUEUE_URL``): it would land on the replica's disk,
    which they never read. One sentence with the command instead; nothing written."""
    fake = fake_telegram
    content, _ = es_chicago_csv
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        offer = await send_file(fake, ALICE, content, "nq chicago.csv", caption="ES")
    runner = CeleryRunner(redis_url, timeout_s=20)
    async with barb_bot(fake, db_url, runner=runner, engine_settings=engine, admins={ALICE}):
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
        [*_, refused] = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
    command = "barb data import 'nq chicago.csv' -i ES"
    said = t("upload_on_workers", "en", symbol="ES", command=command)
    assert refused.result["text"] == said.replace("`", "")
    assert not data_path("ES", engine).exists()
    assert staged(engine) == []


async def test_the_caption_fill_volumes_mends_stored_dates_without_volumes(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """Stored NQ data mixing dates without volumes (20 and 21 March) with dates with them:
    `barb data import FILE -i NQ --fill-volumes` mends it, and the bot refused the caption
    `--fill-volumes` as an unknown option, so an admin on his phone could not. A file whose
    bars differ from the stored ones is refused in one sentence, nothing changed; Wednesday's
    file is offered as filling in its volumes, and Import fills them and nothing else."""
    from barb.data.importer import import_file

    fake = fake_telegram
    bars = bf.week_of_bars()
    wall = bars["timestamp"].dt.tz_localize(None)
    trading_day = (wall + pd.Timedelta(hours=6)).dt.normalize()
    silent = trading_day.isin([pd.Timestamp("2024-03-20"), pd.Timestamp("2024-03-21")])
    mixed = bars.assign(volume=bars["volume"].where(~silent, 0))
    import_file(bf.plain_csv(tmp_path / "mixed.csv", mixed), "NQ", engine)
    before = data_path("NQ", engine).read_bytes()
    wednesday = bars[trading_day == "2024-03-20"]
    moved = wednesday.copy()
    moved.loc[moved.index[5], "close"] += 0.25
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        content = bf.plain_csv(tmp_path / "moved.csv", moved).read_bytes()
        refused = await send_file(fake, ALICE, content, "moved.csv", caption="NQ --fill-volumes")
        assert refused["text"].splitlines()[-1].startswith("Not imported: ")
        assert "volumes are filled in only from the same bars" in refused["text"]
        assert not keyboard_data(refused)
        assert data_path("NQ", engine).read_bytes() == before

        content = bf.plain_csv(tmp_path / "wed.csv", wednesday).read_bytes()
        offer = await send_file(fake, ALICE, content, "wed.csv", caption="NQ --fill-volumes")
        text = offer["text"]
        assert "Checked with the caption's --fill-volumes: only the volumes of stored dates" in (
            text
        )
        assert (
            "Import fills in the volumes of 1,380 bars of the stored NQ data, on its dates "
            "that have none, from the file's same bars; nothing else changes." in text
        )
        assert data_path("NQ", engine).read_bytes() == before  # nothing before Import
        await press(fake, ALICE, ALICE, offer, keyboard_data(offer)[0])
        done = await fake.wait_for("sendMessage", 3, chat_id=ALICE)
        assert done[-1].result["text"] == (
            "Imported into NQ. Filled in the volumes of 1,380 bars on 1 trading date that had "
            "none (2024-03-20) from wed.csv; nothing else changed. 1 date still has none "
            "(2024-03-21): a volume question over it is still refused. The previous data is "
            "kept (barb data restore NQ brings it back)."
        )
    frame, meta = read_bars(data_path("NQ", engine))
    expected = mixed["volume"].where(trading_day != "2024-03-20", bars["volume"])
    assert frame["volume"].tolist() == expected.tolist()
    assert frame["timestamp"].tolist() == wall.tolist()
    for column in ("open", "high", "low", "close"):
        assert frame[column].tolist() == bars[column].tolist(), column
    assert meta.rows == len(bars)


async def test_a_file_of_an_instrument_barb_does_not_know_is_refused_by_its_caption(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """Gold (GC, about 2,160 in March 2024) sent with the caption "GC": no instrument
    Barb has was named, so the file was checked as the chat's NQ and refused only for its
    level, "send the file again with the caption --any-level", which imported gold as NQ.
    A caption naming a ticker Barb does not have is refused in one sentence, the file never
    fetched; a ticker of one it has with a contract month ("ESM4") names it."""
    fake = fake_telegram
    gold = bf.week_of_bars(level=2160)
    content = bf.plain_csv(tmp_path / "gc.csv", gold).read_bytes()
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        reply = await send_file(fake, ALICE, content, "gc.csv", caption="GC")
        assert reply["text"] == (
            "Not imported: the caption's instrument GC is not one Barb has (CL, ES, NQ)."
        )
        assert not fake.calls("getFile") and staged(engine) == []
        es = bf.plain_csv(tmp_path / "es.csv", bf.week_of_bars(level=ES_LEVEL)).read_bytes()
        offer = await send_file(fake, ALICE, es, "es.csv", caption="ESM4 thanks")
        assert offer["text"].startswith("es.csv as ES bars: what the check found.")
        assert keyboard_data(offer)
    assert not data_path("NQ", engine).exists()


async def test_a_zipped_workbook_and_other_archives_are_named_in_one_sentence(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """Sent from a phone: an Excel workbook zipped (a Files app's "Compress") was refused
    as "not UTF-8 text: is it a CSV or Parquet file?", and a .rar or .7z as "not UTF-8
    text" or with every layout Barb knows. Each is named in one sentence, nothing stored
    changes, nothing stays staged."""
    import zipfile

    from barb.data.importer import import_file

    fake = fake_telegram
    import_file(bf.plain_csv(tmp_path / "stored.csv", bf.week_of_bars()), "NQ", engine)
    before = data_path("NQ", engine).read_bytes()
    book = tmp_path / "nq.xlsx"
    with zipfile.ZipFile(book, "w") as workbook:
        workbook.writestr("[Content_Types].xml", "<Types/>")
        workbook.writestr("xl/workbook.xml", "<workbook/>")
    zipped = bf.zipped(book).read_bytes()
    rar = b"Rar!\x1a\x07\x01\x00" + bytes(range(256)) * 4
    seven = b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\x00" * 64
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        sent = {
            "nq.zip": "this is an Excel workbook, not a CSV file: open it in Excel, save it as "
            "CSV (File › Save As › CSV) and import the CSV.",
            "nq.rar": "this is a RAR archive, which Barb does not unpack: unpack it and import "
            "the file of bars inside it (zipped as .zip or .gz if it is large).",
            "nq.7z": "this is a 7-Zip archive, which Barb does not unpack",
        }
        for name, content in (("nq.zip", zipped), ("nq.rar", rar), ("nq.7z", seven)):
            reply = await send_file(fake, ALICE, content, name, caption="NQ")
            last = reply["text"].splitlines()[-1]
            assert last.startswith(f"Not imported: {name}: {sent[name]}"), last
            assert not keyboard_data(reply)
    assert data_path("NQ", engine).read_bytes() == before
    assert staged(engine) == []


async def test_two_files_sent_at_once_are_both_read_with_the_albums_caption(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """Two weeks of ES bars in Dubai time sent together, captioned "ES --timezone
    Asia/Dubai": Telegram puts an album's caption on its first file only, and the second
    was checked as the chat's NQ in New York time and refused. Both are now read with the
    album's caption; the first imported, the second's Import says the stored data changed
    since its check (nothing written, sent again to see what it does), and sent again it
    appends, the stored bars then being both weeks as they went in."""
    fake = fake_telegram
    weeks = [
        bf.week_of_bars(dt.date(2024, 3, 10), seed=1, level=ES_LEVEL),
        bf.week_of_bars(dt.date(2024, 3, 17), seed=2, level=ES_LEVEL),
    ]
    files = [
        bf.plain_csv(tmp_path / f"es{i}.csv", week, "Asia/Dubai").read_bytes()
        for i, week in enumerate(weeks)
    ]
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        updates = [
            fake.document_update(
                chat_id=ALICE,
                user_id=ALICE,
                content=content,
                file_name=f"es{i}.csv",
                caption="ES --timezone Asia/Dubai" if i == 0 else None,
            )
            for i, content in enumerate(files)
        ]
        for album_update in updates:
            album_update["message"]["media_group_id"] = "13579"
            fake.inject(album_update)
        offers = [m.result for m in await fake.wait_for("sendMessage", 2, chat_id=ALICE)]
        for i, offer in enumerate(offers):
            assert offer["text"].startswith(f"es{i}.csv as ES bars: what the check found.")
            assert "Checked with the caption's --timezone Asia/Dubai" in offer["text"]
            assert keyboard_data(offer)
        await press(fake, ALICE, ALICE, offers[0], keyboard_data(offers[0])[0])
        await fake.wait_for("sendMessage", 3, chat_id=ALICE)
        await press(fake, ALICE, ALICE, offers[1], keyboard_data(offers[1])[0])
        changed = (await fake.wait_for("sendMessage", 4, chat_id=ALICE))[-1].result["text"]
        assert changed.startswith("Not imported: the stored ES data changed after this file")
        again = await send_file(fake, ALICE, files[1], "es1.csv", "ES --timezone Asia/Dubai")
        assert "Import adds the file's 6,900 new bars to the stored ES data" in again["text"]
        await press(fake, ALICE, ALICE, again, keyboard_data(again)[0])
        await fake.wait_for("sendMessage", 6, chat_id=ALICE)
    frame, _ = read_bars(data_path("ES", engine))
    both = pd.concat(weeks, ignore_index=True)
    assert frame["timestamp"].tolist() == both["timestamp"].dt.tz_localize(None).tolist()
    assert frame["close"].tolist() == both["close"].tolist()


async def test_an_albums_caption_outlives_a_restart_between_its_files(
    tmp_path: Path, fake_telegram: FakeBotAPI, db_url: str, engine: EngineSettings
) -> None:
    """The album's caption was kept in the bot's memory: the bot restarted after the first
    file of "ES --timezone Asia/Dubai" read the second as the chat's NQ in New York time
    (refused). It is kept in the database now, and the second file, handled by the new
    process, is read with it."""
    fake = fake_telegram
    weeks = [
        bf.week_of_bars(dt.date(2024, 3, 10), seed=1, level=ES_LEVEL),
        bf.week_of_bars(dt.date(2024, 3, 17), seed=2, level=ES_LEVEL),
    ]
    updates = [
        fake.document_update(
            chat_id=ALICE,
            user_id=ALICE,
            content=bf.plain_csv(tmp_path / f"es{i}.csv", week, "Asia/Dubai").read_bytes(),
            file_name=f"es{i}.csv",
            caption="ES --timezone Asia/Dubai" if i == 0 else None,
        )
        for i, week in enumerate(weeks)
    ]
    for album_update in updates:
        album_update["message"]["media_group_id"] = "24680"
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        fake.inject(updates[0])
        first = (await fake.wait_for("sendMessage", 1, chat_id=ALICE))[-1].result
    async with barb_bot(fake, db_url, engine_settings=engine, admins={ALICE}):
        fake.inject(updates[1])
        second = (await fake.wait_for("sendMessage", 2, chat_id=ALICE))[-1].result
    for i, offer in enumerate((first, second)):
        assert offer["text"].startswith(f"es{i}.csv as ES bars: what the check found.")
        assert "Checked with the caption's --timezone Asia/Dubai" in offer["text"]
        assert "No problems that stop the import." in offer["text"]
        assert keyboard_data(offer)

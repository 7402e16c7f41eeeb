"""The bot with ``BARB_QUEUE_URL``: a question is answered by a real ``barb worker`` through
a real Redis, and the person receives the same chart and CSV as from the in-process pool;
`barb bot` itself, started with the setting, sends its queries to the worker."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from bot_harness import ALICE, WEEKDAY_RANGE, ask_and_get_plan, barb_bot, keyboard_data, press
from bot_process import BotProcess
from fake_bot_api import FakeBotAPI
from servers.celery_workers import WorkerProcess, barb_worker, worker_env
from small_bars import small_bars

from barb import execute
from barb.data.store import DataMeta, data_path, read_meta, write_bars
from barb.settings import EngineSettings
from bot.pool.celery_runner import CeleryRunner
from bot.pool.choice import make_runner
from bot.pool.runner import ProcessRunner
from bot.settings import BotSettings
from bot.texts import t

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))
import bar_files as bf


@pytest.fixture
def nq_worker(
    redis_url: str, sample_settings: EngineSettings, tmp_path: Path
) -> Iterator[WorkerProcess]:
    env = worker_env(redis_url, Path(sample_settings.data_dir).resolve(), timeout_s=60)
    worker = barb_worker(env, tmp_path / "worker.log", "NQ")
    yield worker
    worker.stop()


def serve_old_bars(settings: EngineSettings, description: str) -> None:
    """NQ's ten days of March 2024 stored in ``settings``' data directory, as the bars some
    machine already serves before a file is sent (``description`` tells them apart)."""
    minutes = small_bars()
    meta = DataMeta(
        instrument="NQ",
        timezone="America/New_York",
        source="imported",
        description=description,
        first_date=dt.date(2024, 3, 4),
        last_date=dt.date(2024, 3, 15),
        rows=len(minutes),
    )
    write_bars(minutes, meta, data_path("NQ", settings))


async def test_a_question_is_answered_by_a_worker_over_redis(
    fake_telegram: FakeBotAPI, db_url: str, redis_url: str, nq_worker: WorkerProcess
) -> None:
    fake = fake_telegram
    runner = CeleryRunner(redis_url, timeout_s=60)
    async with barb_bot(fake, db_url, runner=runner):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "average RTH range by weekday?")
        await press(fake, ALICE, ALICE, plan, keyboard_data(plan)[0])
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE, timeout=60)
        # The headline (the engine's number), then the model's commentary.
        assert "\n\nAnswer: Result: 5 groups by weekday" in photo.result["caption"]
        assert photo.files["photo"].content[:8] == b"\x89PNG\r\n\x1a\n"
        await press(fake, ALICE, ALICE, photo.result, keyboard_data(photo.result)[0])
        [document] = await fake.wait_for("sendDocument", chat_id=ALICE)

    rows = [
        line.split(",")
        for line in document.files["document"].content.decode("utf-8-sig").splitlines()
    ]
    engine = execute(WEEKDAY_RANGE, "NQ")
    assert [r[0] for r in rows[1:]] == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    assert [float(r[1]) for r in rows[1:]] == pytest.approx(
        engine.table["mean_range"].tolist(), rel=1e-5
    )
    assert "Task barb.query[" in nq_worker.log.read_text()  # the worker took it


async def test_the_queue_url_alone_decides_where_queries_run(redis_url: str) -> None:
    queued = make_runner(BotSettings(queue_url=redis_url))
    local = make_runner(BotSettings(queue_url=None, workers=1))
    try:
        assert isinstance(queued, CeleryRunner)
        assert isinstance(local, ProcessRunner)
    finally:
        await queued.close()
        await local.close()


def test_a_queue_url_that_is_not_redis_is_refused() -> None:
    with pytest.raises(ValueError, match="must be a Redis URL"):
        BotSettings(queue_url="amqp://127.0.0.1:5672//")


async def test_barb_bot_with_the_queue_url_sends_its_queries_to_the_workers(
    fake_telegram: FakeBotAPI, redis_url: str, nq_worker: WorkerProcess, tmp_path: Path
) -> None:
    fake = fake_telegram
    # No model is needed: /query runs Barb Script as typed.
    bot = BotProcess(fake, "http://127.0.0.1:9", tmp_path, BARB_QUEUE_URL=redis_url)
    try:
        await bot.start()
        query = '/query {"session": "RTH", "from": "daily", "select": "count()"}'
        fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=query))
        [answer] = await fake.wait_said(1, chat_id=ALICE, timeout=60)
    finally:
        bot.kill()
    expected = execute({"session": "RTH", "from": "daily", "select": "count()"}, "NQ")
    count = expected.to_dict()["summary"]["value"]
    assert answer["text"].splitlines()[0] == f"number of days = {count:,}"
    # The worker computed it (the bot runs in an empty directory, without the data).
    assert "Task barb.query[" in nq_worker.log.read_text()


async def test_a_file_sent_to_a_bot_whose_workers_hold_the_data_is_refused_with_the_command(
    fake_telegram: FakeBotAPI, db_url: str, redis_url: str, tmp_path: Path
) -> None:
    """An admin's file of bars, with the queries on workers of other machines: it was
    imported on the replica's own disk, which no worker reads; the admin read "imported"
    and every answer after came from the workers' old bars. Now one sentence says so,
    with the command to run on the workers' machines, and nothing is fetched or written;
    the workers still serve what they served."""
    fake = fake_telegram
    worker_data = EngineSettings(data_dir=tmp_path / "worker")
    serve_old_bars(worker_data, "the workers' bars")
    env = worker_env(redis_url, worker_data.data_dir, timeout_s=20)
    worker = barb_worker(env, tmp_path / "worker.log", "NQ")
    bot_data = EngineSettings(data_dir=tmp_path / "bot")  # the replica's own, empty
    runner = CeleryRunner(redis_url, timeout_s=20)
    try:
        async with barb_bot(fake, db_url, runner=runner, engine_settings=bot_data, admins={ALICE}):
            while runner.data_meta("NQ") is None:
                await asyncio.sleep(0.05)
            fake.inject(
                fake.document_update(
                    chat_id=ALICE,
                    user_id=ALICE,
                    # A week after the workers' two: a file the importer takes.
                    content=bf.plain_csv(tmp_path / "x.csv", bf.week_of_bars()).read_bytes(),
                    file_name="nq `march`.csv",
                    caption="NQ --timezone America/New_York",
                )
            )
            [reply] = await fake.wait_for("sendMessage", chat_id=ALICE)
            command = "barb data import 'nq march.csv' -i NQ --timezone America/New_York"
            said = t("upload_on_workers", "en", symbol="NQ", command=command)
            assert reply.result["text"] == said.replace("`", "")
            assert "<code>barb data import " in reply.params["text"]  # shown as code
            assert not fake.calls("getFile")
            assert not bot_data.data_dir.exists()  # nothing staged, nothing imported
            assert runner.data_meta("NQ") == read_meta(data_path("NQ", worker_data))
            assert read_meta(data_path("NQ", worker_data)).description == "the workers' bars"
    finally:
        worker.stop()


async def test_import_pressed_as_a_worker_elsewhere_starts_is_refused(
    fake_telegram: FakeBotAPI, db_url: str, redis_url: str, tmp_path: Path
) -> None:
    """The file was offered while the only worker shared the bot's data directory; then a
    worker reading its own directory started on another machine, and Import was pressed at
    once. The bot read the workers every 2 s: within those 2 s the import went ahead, and
    that worker answered from its own bars. Now the worker is in the registry before it
    takes a job and the press reads it: refused, nothing imported. (How long the press
    takes to reach the decision varies, so this alone does not tell a read made when asked
    from one 2 s old: ``test_data_place``'s runner test does; this is the whole path.)"""
    fake = fake_telegram
    shared = tmp_path / "shared"
    serve_old_bars(EngineSettings(data_dir=shared), "the bars before the upload")
    here = barb_worker(worker_env(redis_url, shared, timeout_s=20), tmp_path / "here.log", "NQ")
    elsewhere = tmp_path / "elsewhere"  # another machine's directory
    elsewhere.mkdir()
    bot_data = EngineSettings(data_dir=shared)
    runner = CeleryRunner(redis_url, timeout_s=20)
    csv = bf.plain_csv(tmp_path / "x.csv", bf.week_of_bars())
    there: WorkerProcess | None = None
    try:
        async with barb_bot(fake, db_url, runner=runner, engine_settings=bot_data, admins={ALICE}):
            fake.inject(
                fake.document_update(
                    chat_id=ALICE,
                    user_id=ALICE,
                    content=csv.read_bytes(),
                    file_name="nq week.csv",
                    caption="NQ --timezone America/New_York",
                )
            )
            [offer] = await fake.wait_for("sendMessage", chat_id=ALICE)
            assert keyboard_data(offer.result), offer.result["text"]  # offered: one machine
            env = worker_env(redis_url, elsewhere, timeout_s=20)
            there = barb_worker(env, tmp_path / "there.log", "NQ")  # up, ready for jobs
            await press(fake, ALICE, ALICE, offer.result, keyboard_data(offer.result)[0])
            [_, refused] = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
    finally:
        for worker in (here, there):
            if worker is not None:
                worker.kill()
                worker.stop()
    command = "barb data import 'nq week.csv' -i NQ --timezone America/New_York"
    said = t("upload_on_workers", "en", symbol="NQ", command=command)
    assert refused.result["text"] == said.replace("`", "")
    assert read_meta(data_path("NQ", bot_data)).description == "the bars before the upload"


async def test_a_file_sent_to_a_bot_whose_workers_read_its_own_data_dir_is_imported(
    fake_telegram: FakeBotAPI, db_url: str, redis_url: str, tmp_path: Path
) -> None:
    """One machine, bot and workers sharing one BARB_DATA_DIR (several query processes
    without other machines): the file was refused as if the workers were elsewhere. Each
    worker now says where its data directory is; the bot, whose path to it differs only in
    spelling (a symlink), imports the file, and the next query, answered by the worker that
    had already mapped the old bars, counts the imported ones."""
    fake = fake_telegram
    shared = tmp_path / "shared"
    serve_old_bars(EngineSettings(data_dir=shared), "the bars before the upload")
    worker = barb_worker(worker_env(redis_url, shared, timeout_s=20), tmp_path / "w.log", "NQ")
    (tmp_path / "link").symlink_to(shared)
    bot_data = EngineSettings(data_dir=tmp_path / "link")
    runner = CeleryRunner(redis_url, timeout_s=20)
    csv = bf.plain_csv(tmp_path / "x.csv", bf.week_of_bars())
    days = {"session": "ETH", "from": "daily", "select": "count()"}
    week = {
        "session": "ETH",
        "from": "daily",
        "period": "2024-03-18:2024-03-22",
        "select": "sum(volume)",
    }

    async def query(script: dict, said: int) -> str:
        fake.inject(
            fake.message_update(chat_id=ALICE, user_id=ALICE, text=f"/query {json.dumps(script)}")
        )
        return (await fake.wait_said(said, chat_id=ALICE, timeout=60))[-1]["text"]

    try:
        async with barb_bot(fake, db_url, runner=runner, engine_settings=bot_data, admins={ALICE}):
            while await runner.data_on_workers("NQ", bot_data.data_dir):  # the worker is up
                await asyncio.sleep(0.05)
            # The worker answers from the old bars (and has them mapped) before the upload.
            assert (await query(days, 1)).splitlines()[0] == "number of days = 10"
            fake.inject(
                fake.document_update(
                    chat_id=ALICE,
                    user_id=ALICE,
                    content=csv.read_bytes(),
                    file_name="nq week.csv",
                    caption="NQ --timezone America/New_York",
                )
            )
            [offer] = await fake.wait_for("sendMessage", chat_id=ALICE)
            assert fake.calls("getFile")
            await press(fake, ALICE, ALICE, offer.result, keyboard_data(offer.result)[0])
            [_, done] = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
            assert done.result["text"].startswith("NQ: imported 6,900 bars;")
            after = await query(days, 4)
            total = await query(week, 5)
    finally:
        worker.stop()
    file = pd.read_csv(csv)
    assert after.splitlines()[0] == "number of days = 15"
    assert total.splitlines()[0] == f"total volume = {file['volume'].sum():,} contracts"
    assert read_meta(data_path("NQ", bot_data)).source_file == "nq week.csv"

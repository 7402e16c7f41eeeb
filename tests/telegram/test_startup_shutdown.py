"""Start-up and shutdown of the real `barb bot`, as the person running it sees them.

A start that cannot work (the token rejected, the Bot API unreachable, a setting that makes
no sense) ends with one sentence on stderr that says what to fix, an exit status of its own
(never 2, "not configured yet"), no traceback, and the token nowhere in what was printed.
SIGTERM and Ctrl+C stop the bot and every process it started; a reply that could not be sent
yet stays in the outbox and goes out at the next start.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from bot_harness import HEAVY
from bot_process import BotProcess, Finished
from fake_bot_api import FakeBotAPI
from pydantic import ValidationError

from bot.startup_errors import (
    EXIT_BAD_SETTING,
    EXIT_TOKEN_REJECTED,
    EXIT_UNREACHABLE,
    bad_settings,
)
from bot.store.settings import StoreSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llm_fake_api import OPENAI_PATH, FakeAPIServer, openai_completion

CHAT = USER = 5150
NOT_CONFIGURED = 2
#: A query that keeps a worker busy for seconds even with its bars cached (chained long
#: windows over every minute of the sample): long enough that a worker living through it shows.
CHAIN = 10
LONG = {
    "session": "ETH",
    "from": "1m",
    "map": {
        "w0": "rolling_std(close, 5000)",
        **{f"w{i}": f"rolling_std(w{i - 1}, 3000)" for i in range(1, CHAIN)},
    },
    "select": f"mean(w{CHAIN - 1})",
}
#: The same minute bars, cheaply: loads and caches them in the worker.
LOAD = {"session": "ETH", "from": "1m", "select": "count()"}
#: The model is never asked in these tests: a closed port, so a call would fail loudly.
NO_MODEL = "http://127.0.0.1:9"


@pytest.fixture
async def bot(
    fake_telegram: FakeBotAPI, tmp_path: Path, sample_settings: object
) -> AsyncIterator[BotProcess]:
    process = BotProcess(fake_telegram, NO_MODEL, tmp_path, BARB_SHUTDOWN_GRACE_S="1")
    yield process
    process.kill()


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def assert_one_sentence(finished: Finished, *secrets: str) -> str:
    """Exactly one line on stderr, nothing on stdout, no traceback, no secret; the line."""
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1, finished.output
    assert finished.stdout == "", finished.output
    assert "Traceback" not in finished.output
    for secret in secrets:
        assert secret not in finished.output
    assert finished.status not in (0, NOT_CONFIGURED)
    return lines[0]


# --- a start that cannot work ------------------------------------------------------------------


async def test_a_wrong_token_is_named_without_printing_it(
    bot: BotProcess, fake_telegram: FakeBotAPI
) -> None:
    wrong = "123456789:AAwrong-token-that-telegram-does-not-know"
    bot.env["TELEGRAM_BOT_TOKEN"] = wrong
    finished = await bot.run_to_exit()
    line = assert_one_sentence(finished, wrong, wrong.split(":")[1])
    assert finished.status == EXIT_TOKEN_REJECTED
    assert "TELEGRAM_BOT_TOKEN" in line
    # Telegram was asked, and said no.
    assert [r.status for r in fake_telegram.calls("getMe")] == [401]
    assert not bot.db_path.exists()  # nothing else started


async def test_an_unreachable_bot_api_is_named(bot: BotProcess) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    bot.env["TELEGRAM_API_BASE_URL"] = url
    finished = await bot.run_to_exit()
    line = assert_one_sentence(finished, bot.env["TELEGRAM_BOT_TOKEN"])
    assert finished.status == EXIT_UNREACHABLE
    assert f"{url}/bot" in line
    assert "TELEGRAM_API_BASE_URL" in line


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("BARB_WORKERS", "abc"),
        ("BARB_QUERY_TIMEOUT_S", "-1"),
        ("TELEGRAM_API_BASE_URL", "127.0.0.1:8081"),
        ("BARB_LLM_MAX_RETRIES", "many"),
        ("BARB_DATABASE_URL", "mysql://x"),  # no driver: was exit 70 after getMe
        ("BARB_WEBHOOK_URL", "notaurl"),  # was accepted: Telegram told "notaurl/telegram"
    ],
)
async def test_a_bad_setting_is_named_with_its_value(
    bot: BotProcess, fake_telegram: FakeBotAPI, variable: str, value: str
) -> None:
    bot.env[variable] = value
    finished = await bot.run_to_exit()
    line = assert_one_sentence(finished, bot.env["TELEGRAM_BOT_TOKEN"])
    assert finished.status == EXIT_BAD_SETTING
    assert line.startswith(f"barb bot: {variable} is not valid: ")
    assert repr(value) in line
    assert fake_telegram.requests == []  # stopped before anything was asked of anyone


def test_a_bad_database_url_is_quoted_without_its_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BARB_DATABASE_URL", "postgresql://barb:hunter2@db:5432/barb")
    with pytest.raises(ValidationError) as err:
        StoreSettings()
    error = bad_settings(err.value, StoreSettings)
    assert error.exit_status == EXIT_BAD_SETTING
    assert error.sentence.startswith("BARB_DATABASE_URL is not valid: ")
    assert "postgresql+asyncpg://" in error.sentence  # what to write instead
    assert "'postgresql://barb:***@db:5432/barb'" in error.sentence
    assert "hunter2" not in error.sentence


@pytest.mark.parametrize("missing", ["token", "model", "both"])
async def test_what_is_missing_is_said_once_and_in_its_own_words(
    bot: BotProcess, fake_telegram: FakeBotAPI, missing: str
) -> None:
    """The model's steps open with "Barb also needs" only after the token's steps; alone they
    were "No LLM configured: set …" then "Barb also needs a language model" (nothing else
    was missing), the same three variables named twice."""
    if missing in ("token", "both"):
        del bot.env["TELEGRAM_BOT_TOKEN"]
    if missing in ("model", "both"):
        for variable in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "BARB_LLM_MODEL"):
            del bot.env[variable]
    finished = await bot.run_to_exit()
    assert finished.status == NOT_CONFIGURED
    assert finished.stdout == ""
    assert "Traceback" not in finished.output
    text = finished.stderr
    token_steps = "No Telegram bot token: TELEGRAM_BOT_TOKEN is not set." in text
    assert token_steps == (missing != "model")
    assert ("@BotFather" in text) == (missing != "model")
    assert ("export ANTHROPIC_API_KEY=" in text) == (missing != "token")
    assert ("No language model: none of" in text) == (missing == "model")
    assert ("Barb also needs a language model: none of" in text) == (missing == "both")
    assert text.count("OPENAI_BASE_URL") == (0 if missing == "token" else 2)  # named, then shown
    assert text.count("Then run `barb bot` again.") == 1
    assert "barb query '" in text  # what works meanwhile
    assert fake_telegram.requests == []


def test_the_bot_loads_only_what_it_uses(tmp_path: Path) -> None:
    """The engine (pandas), the charts (matplotlib) and the assistant took most of the
    bot's start (about 3 s quiet, 13 s on a busy machine) before a mistyped setting was
    named: they are loaded only once the settings are right. And the running bot never
    draws (its workers do): matplotlib stays out of its process."""
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": "1:x", "OPENAI_API_KEY": "x"}
    env |= {"BARB_WORKERS": "abc", "BARB_DATABASE_URL": f"sqlite:///{tmp_path / 'b.db'}"}
    script = (
        "import sys\nheavy = set(sys.argv[1:])\nfrom bot.cli import main\n"
        "sys.argv = ['barb', 'bot']\ntry:\n    main()\nexcept SystemExit as exit:\n"
        "    print(exit.code, sorted(heavy & set(sys.modules)))\n"
        "import bot.bot_run\nprint('matplotlib' in sys.modules)"
    )
    heavy = ["matplotlib", "pandas", "bot.assistant.orchestrator", "barb.data.importer"]
    finished = subprocess.run(
        [sys.executable, "-c", script, *heavy], env=env, capture_output=True, text=True
    )
    assert finished.stdout.splitlines() == [f"{EXIT_BAD_SETTING} []", "False"], finished
    assert "BARB_WORKERS is not valid" in finished.stderr


@pytest.mark.parametrize("form", ["root", "ptb"])
async def test_the_bot_api_url_in_either_form(
    bot: BotProcess, fake_telegram: FakeBotAPI, form: str
) -> None:
    """The bare server root and python-telegram-bot's ``…/bot`` form reach the same server."""
    bot.env["TELEGRAM_API_BASE_URL"] = fake_telegram.url + ("/bot" if form == "ptb" else "")
    await bot.start()
    fake_telegram.inject(fake_telegram.message_update(chat_id=CHAT, user_id=USER, text="/help"))
    await fake_telegram.wait_for("sendMessage", chat_id=CHAT, timeout=60)
    assert [r.status for r in fake_telegram.calls("getMe")] == [200]


# --- stopping ----------------------------------------------------------------------------------


async def busy_worker(
    bot: BotProcess, fake: FakeBotAPI, query: dict[str, object] = HEAVY
) -> list[int]:
    """Start the bot and give its worker pool a long query; the worker processes (started
    with the bot: wait for the query too, recorded in flight as it goes to the pool)."""
    await bot.start()
    text = "/query " + json.dumps(query)
    fake.inject(fake.message_update(chat_id=CHAT, user_id=USER, text=text))
    await bot.wait_until(bot.workers, "a query worker started", timeout=60)
    await bot.wait_until(
        lambda: bot.rows("SELECT id FROM in_flight WHERE kind = 'query'") or fake.said(CHAT),
        "the query running (or, if short, answered)",
    )
    return bot.workers()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_stops_the_bot_and_its_workers(
    bot: BotProcess, fake_telegram: FakeBotAPI, sig: signal.Signals
) -> None:
    """The signal goes to the bot alone, as `kill` or a supervisor sends it: the query in
    progress is stopped after the grace period, its workers with it, and the bot ends well."""
    workers = await busy_worker(bot, fake_telegram)
    assert workers
    bot.send_signal(sig)
    assert await bot.wait_exit() == 0, bot.log
    assert bot.workers() == [], bot.log  # the bot waited for them to end
    # multiprocessing's resource tracker ends when the last of them has gone.
    await bot.wait_until(lambda: not bot.session(), "the bot's processes gone", bot_running=False)
    assert "Traceback" not in bot.log
    assert bot.env["TELEGRAM_BOT_TOKEN"] not in bot.log


async def test_a_second_ctrl_c_does_not_wait_for_the_grace_period(
    bot: BotProcess, fake_telegram: FakeBotAPI
) -> None:
    """With a long grace period, the first Ctrl+C waits for the query; the second stops it
    at once: its answer is never sent, and the bot ends well, its workers with it."""
    bot.env.update(BARB_SHUTDOWN_GRACE_S="600", BARB_QUERY_TIMEOUT_S="600")
    await busy_worker(bot, fake_telegram, LONG)
    bot.send_signal(signal.SIGINT)
    await bot.wait_until(lambda: "Stopping:" in bot.log, "the first Ctrl+C taken")
    bot.send_signal(signal.SIGINT)
    assert await bot.wait_exit() == 0, bot.log
    assert "stopped 1 answers in progress" in bot.log
    assert fake_telegram.calls("sendPhoto", CHAT) == []  # the query did not run to its end
    assert bot.workers() == []


async def test_workers_end_with_a_bot_killed_outright(
    bot: BotProcess, fake_telegram: FakeBotAPI
) -> None:
    """kill -9 of the bot alone (an OOM kill): nothing in the bot can stop its workers, so
    they notice by themselves, in the middle of their query: well before that query, run to
    its end once before in the same test, would have let them go."""
    loop = asyncio.get_running_loop()
    bot.env["BARB_QUERY_TIMEOUT_S"] = "600"  # however slow the machine, the query ends well

    def query(body: dict[str, object]) -> None:
        text = "/query " + json.dumps(body)
        fake_telegram.inject(fake_telegram.message_update(chat_id=CHAT, user_id=USER, text=text))

    def answers() -> int:
        # A /query's answer ends with its CSV, however many messages its words take.
        return len([r for r in fake_telegram.calls("sendDocument", CHAT) if r.status])

    [worker] = await busy_worker(bot, fake_telegram, LOAD)
    await bot.wait_until(lambda: answers() == 1, "the bars loaded", 300)
    asked_at = loop.time()
    query(LONG)
    await bot.wait_until(lambda: answers() == 2, "the answer", 300)
    query_took = loop.time() - asked_at

    # The same query again, to the same (now idle) worker: killed once it is computing.
    idle = bot.cpu_seconds(worker)
    query(LONG)
    await bot.wait_until(lambda: bot.cpu_seconds(worker) > idle + 0.5, "the query computing")
    killed_at = loop.time()
    bot.send_signal(signal.SIGKILL)
    await bot.wait_exit()
    await bot.wait_until(
        lambda: not bot.workers() and not bot.fork_servers(),
        "the orphaned worker and the fork server gone",
        bot_running=False,
    )
    orphaned_for = loop.time() - killed_at
    assert orphaned_for < query_took / 2, (orphaned_for, query_took)


async def test_a_reply_queued_at_shutdown_is_sent_at_the_next_start(
    bot: BotProcess, fake_telegram: FakeBotAPI
) -> None:
    # Telegram drops every message to the chat: the reply is stored, then retried.
    fake_telegram.fault_next("sendMessage", "drop_before", times=1000, chat_id=CHAT)
    await bot.start()
    fake_telegram.inject(fake_telegram.message_update(chat_id=CHAT, user_id=USER, text="/help"))
    queued = "SELECT id, payload FROM outbox WHERE chat_id = ? AND status = 'queued'"
    await bot.wait_until(lambda: bot.rows(queued, CHAT), "the reply stored", timeout=60)
    await bot.wait_until(lambda: fake_telegram.calls("sendMessage", CHAT), "a send attempt")
    [(reply_id, payload)] = bot.rows(queued, CHAT)

    bot.send_signal(signal.SIGTERM)
    assert await bot.wait_exit() == 0, bot.log
    assert bot.rows(queued, CHAT) == [(reply_id, payload)]  # still there, still queued
    assert [r.result for r in fake_telegram.calls("sendMessage", CHAT) if r.status == 200] == []

    fake_telegram.heal()
    await bot.start()
    sent = "SELECT status, telegram_message_id FROM outbox WHERE id = ?"
    await bot.wait_until(lambda: bot.rows(sent, reply_id)[0][0] == "sent", "the reply sent")
    delivered = [r.result for r in fake_telegram.calls("sendMessage", CHAT) if r.status == 200]
    assert [m["text"] for m in delivered] == [json.loads(payload)["text"]]
    assert bot.rows(sent, reply_id) == [("sent", delivered[0]["message_id"])]


async def test_a_question_cut_by_the_shutdown_is_answered_after_the_restart(
    fake_telegram: FakeBotAPI, tmp_path: Path, sample_settings: object
) -> None:
    """SIGTERM while the model is still thinking: the bot does not wait for it past the grace
    period, and the question is asked again at the next start, answered once."""
    model = FakeAPIServer().start()
    bot = BotProcess(fake_telegram, model.url, tmp_path, BARB_SHUTDOWN_GRACE_S="1")
    try:
        greeting = openai_completion("Hi! Ask me about the bars.")
        model.queue(OPENAI_PATH, replace(greeting, delay_s=120.0), greeting)
        await bot.start()
        fake_telegram.inject(
            fake_telegram.message_update(chat_id=CHAT, user_id=USER, text="Hello there")
        )
        await bot.wait_until(lambda: model.requests_to(OPENAI_PATH), "the model asked")
        bot.send_signal(signal.SIGTERM)
        assert await bot.wait_exit() == 0, bot.log
        assert "stopped 1 answers in progress" in bot.log
        assert bot.rows("SELECT kind FROM in_flight") == [("question",)]

        await bot.start()
        await bot.wait_until(
            lambda: [r for r in fake_telegram.calls("sendMessage", CHAT) if r.status == 200],
            "the answer",
        )
        await bot.wait_until(lambda: not bot.rows("SELECT 1 FROM in_flight"), "nothing in flight")
        texts = [r.result["text"] for r in fake_telegram.calls("sendMessage", CHAT) if r.result]
        assert texts == ["Hi! Ask me about the bars."]
    finally:
        bot.kill()
        model.stop()

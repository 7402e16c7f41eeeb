"""kill -9 at every stage of a question, then a restart: what does the person end up with?

The real `barb bot` runs in its own process (``bot_process.BotProcess``) against the fake Bot
API and, through the official OpenAI SDK, the fake model server. Each test kills it with
SIGKILL at one stage, recognised from outside as a person or an operator would see it (the
database row of the question, the model's request arriving, the plan message, the press
acknowledged, the reply's photo delivered), starts it again on the same database, and
asserts what reached the chat: exactly one answer (one photo captioned with the commentary,
and its CSV sent once when its button is pressed), and a plan that ends "Done." rather than
"Running…"; or one plain sentence and a working button. Two moments last a millisecond (an
update stored and not yet confirmed; a question's handler before it records the question):
there the bot kills itself, told by ``BARB_KILL_AT``. A Cancel being worded by the model and
a /query running are killed too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis
from bot_harness import HEAVY, WEEKDAY_RANGE, commentary_of, keyboard_data
from bot_process import BotProcess
from fake_bot_api import FakeBotAPI
from servers.celery_workers import WorkerProcess, misbehaving_worker, worker_env
from small_bars import write_small_data

from bot.telegram import keyboards

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llm_fake_api import OPENAI_PATH, Canned, FakeAPIServer, openai_completion

CHAT = USER = 4711
RUN_PREFIX = keyboards.RUN + keyboards.SEPARATOR
ANSWER = "Mondays have the widest range."
#: Too long for a caption: the chart, then the commentary as a message of its own.
LONG_ANSWER = ANSWER + "\n\n" + "More detail on every weekday. " * 40
GREETING = "Hi! Ask me about the bars."
#: Long enough that the model is still "thinking" when the kill comes; the fake's thread is
#: woken when the fixture stops it.
HOLD_S = 60.0


def plan_turn(
    query: dict[str, Any] = WEEKDAY_RANGE, *, hold: bool = False, call_id: str = "call_1"
) -> Canned:
    arguments = json.dumps({"query": query})
    canned = openai_completion(
        "I'll compute the average RTH range by weekday.",
        tool_calls=[(call_id, "execute_query", arguments)],
    )
    return replace(canned, delay_s=HOLD_S if hold else 0.0)


def greeting(*, hold: bool = False) -> Canned:
    return replace(openai_completion(GREETING), delay_s=HOLD_S if hold else 0.0)


def answer_turn(*, hold: bool = False, text: str = ANSWER) -> Canned:
    return replace(openai_completion(text), delay_s=HOLD_S if hold else 0.0)


@pytest.fixture
def model() -> Iterator[FakeAPIServer]:
    server = FakeAPIServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def small_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_small_data(tmp_path_factory.mktemp("kill_data"))


@pytest.fixture
async def bot(
    fake_telegram: FakeBotAPI, model: FakeAPIServer, tmp_path: Path, small_data_dir: Path
) -> AsyncIterator[BotProcess]:
    """`barb bot` on ten days of bars: its query worker loads them at once at every start
    (the full sample costs seconds of CPU per start, and most stages need no long query)."""
    process = BotProcess(fake_telegram, model.url, tmp_path, BARB_DATA_DIR=str(small_data_dir))
    yield process
    process.kill()


@pytest.fixture
async def bot_on_sample(
    fake_telegram: FakeBotAPI, model: FakeAPIServer, tmp_path: Path, sample_settings: object
) -> AsyncIterator[BotProcess]:
    """`barb bot` on the full sample, where ``HEAVY`` runs for seconds: long enough to be
    killed in the middle of it."""
    process = BotProcess(fake_telegram, model.url, tmp_path)
    yield process
    process.kill()


# --- what the person sees ---------------------------------------------------------------------


def delivered(fake: FakeBotAPI, method: str) -> list[dict[str, Any]]:
    return [r.result for r in fake.calls(method, chat_id=CHAT) if r.status == 200]


def run_button(message: dict[str, Any]) -> str | None:
    return next((d for d in keyboard_data(message) if d.startswith(RUN_PREFIX)), None)


def plans(fake: FakeBotAPI) -> list[dict[str, Any]]:
    """Messages sent with a Run button."""
    return [m for m in delivered(fake, "sendMessage") if run_button(m)]


def answers(fake: FakeBotAPI) -> list[str]:
    """The commentaries delivered: a chart's caption, or a message of its own."""
    texts = [m["text"] for m in delivered(fake, "sendMessage")]
    texts += [commentary_of(m.get("caption", "")) for m in delivered(fake, "sendPhoto")]
    return [text for text in texts if text.startswith(ANSWER)]


def ask(fake: FakeBotAPI, text: str = "Average range by weekday?") -> None:
    fake.inject(fake.message_update(chat_id=CHAT, user_id=USER, text=text))


def press_run(fake: FakeBotAPI, plan: dict[str, Any]) -> None:
    run = run_button(plan)
    assert run is not None
    fake.inject(
        fake.callback_update(chat_id=CHAT, user_id=USER, message_id=plan["message_id"], data=run)
    )


async def press_and_get_answer(bot: BotProcess, fake: FakeBotAPI) -> None:
    await bot.wait_until(lambda: plans(fake), "the plan")
    press_run(fake, plans(fake)[-1])
    await bot.wait_until(lambda: answers(fake), "the answer")


async def assert_one_answer(
    bot: BotProcess, fake: FakeBotAPI, *, commentaries: int = 1, answer: str = ANSWER
) -> None:
    """One plan, one chart, ``commentaries`` commentaries (2 when one was on the wire at a
    kill), one CSV sent when asked for; the plan says "Done."; nothing left in flight or
    running in the database."""
    plan_id = plans(fake)[0]["message_id"]
    await bot.wait_until(
        lambda: fake.message(CHAT, plan_id)["text"].endswith("⏵ Done."), "the plan marked done"
    )
    assert len(plans(fake)) == 1, fake.describe()
    [chart] = delivered(fake, "sendPhoto")
    assert answers(fake) == [answer.strip()] * commentaries, fake.describe()
    csv_button = keyboard_data(chart)[0]
    assert csv_button.startswith(keyboards.HELD_FILE + keyboards.SEPARATOR)
    fake.inject(
        fake.callback_update(
            chat_id=CHAT, user_id=USER, message_id=chart["message_id"], data=csv_button
        )
    )
    await bot.wait_until(lambda: delivered(fake, "sendDocument"), "the CSV")
    assert len(delivered(fake, "sendDocument")) == 1, fake.describe()
    assert "reply_markup" not in fake.message(CHAT, plan_id)
    # The run's record goes just after the plan's edit is answered.
    await bot.wait_until(lambda: not bot.rows("SELECT kind FROM in_flight"), "nothing in flight")
    assert bot.rows("SELECT id FROM pending_actions WHERE status = 'running'") == []


def in_flight(bot: BotProcess, kind: str) -> list[tuple[Any, ...]]:
    return bot.rows("SELECT id, attempts FROM in_flight WHERE kind = ?", kind)


# --- the stages -------------------------------------------------------------------------------


async def test_kill_when_the_question_is_received(
    bot: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer
) -> None:
    """The question is recorded and waits its turn behind an earlier one of the same chat
    (whose model is still thinking) when the process dies: both are answered, in order."""
    model.queue(OPENAI_PATH, greeting(hold=True), greeting(), plan_turn(), answer_turn())
    await bot.start()
    ask(fake_telegram, "Hello there")
    await bot.wait_until(lambda: model.requests_to(OPENAI_PATH), "the greeting's model call")
    ask(fake_telegram)
    await bot.wait_until(lambda: len(in_flight(bot, "question")) == 2, "the question recorded")
    bot.kill()
    assert len(model.requests_to(OPENAI_PATH)) == 1  # the question never reached the model

    await bot.start()
    await press_and_get_answer(bot, fake_telegram)
    texts = [m["text"] for m in delivered(fake_telegram, "sendMessage")]
    assert texts[0] == GREETING  # answered in the order asked
    assert texts.count(GREETING) == 1
    await assert_one_answer(bot, fake_telegram)


async def test_kill_while_the_model_is_thinking(
    bot: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer
) -> None:
    model.queue(OPENAI_PATH, plan_turn(hold=True), plan_turn(), answer_turn())
    await bot.start()
    ask(fake_telegram)
    await bot.wait_until(lambda: model.requests_to(OPENAI_PATH), "the model's first request")
    bot.kill()

    await bot.start()
    await press_and_get_answer(bot, fake_telegram)
    await assert_one_answer(bot, fake_telegram)
    # The question was asked of the model again, from the start: same transcript.
    first, again = (r.body["messages"] for r in model.requests_to(OPENAI_PATH)[:2])
    assert first == again


async def test_kill_when_the_plan_is_shown(
    bot: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer
) -> None:
    model.queue(OPENAI_PATH, plan_turn(), answer_turn())
    await bot.start()
    ask(fake_telegram)
    await bot.wait_until(lambda: plans(fake_telegram), "the plan")
    # The plan is marked delivered (its message id stored) before the kill.
    await bot.wait_until(
        lambda: bot.rows("SELECT id FROM pending_actions WHERE message_id IS NOT NULL"),
        "the plan's message recorded",
    )
    bot.kill()

    await bot.start()
    await press_and_get_answer(bot, fake_telegram)
    await assert_one_answer(bot, fake_telegram)
    assert len(model.requests_to(OPENAI_PATH)) == 2  # nothing asked twice


async def test_kill_while_the_query_runs(
    bot_on_sample: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer
) -> None:
    bot = bot_on_sample
    model.queue(OPENAI_PATH, plan_turn(HEAVY), answer_turn())
    await bot.start()
    ask(fake_telegram)
    await bot.wait_until(lambda: plans(fake_telegram), "the plan")
    press_run(fake_telegram, plans(fake_telegram)[0])
    await bot.wait_until(lambda: in_flight(bot, "run"), "the run recorded")
    await fake_telegram.wait_for("editMessageText")  # the plan says "Running…"
    bot.kill()
    # Killed before the query finished: the model was never given its result.
    assert len(model.requests_to(OPENAI_PATH)) == 1
    assert fake_telegram.message(CHAT, plans(fake_telegram)[0]["message_id"])["text"].endswith(
        "Running…"
    )

    await bot.start()  # the run resumes by itself: nobody presses anything
    await bot.wait_until(lambda: answers(fake_telegram), "the answer", timeout=60)
    await assert_one_answer(bot, fake_telegram)


@pytest.fixture
def queue_worker(redis_url: str, small_data_dir: Path, tmp_path: Path) -> Iterator[WorkerProcess]:
    """A Celery worker of NQ with ``pool_work.misbehaving`` as its job: a query's ``sleep``
    holds it (the kill comes mid-run), and its ``trace`` file gets a line each time the
    worker computes it to its end."""
    env = worker_env(redis_url, small_data_dir, timeout_s=20)
    worker = misbehaving_worker(env, tmp_path / "worker.log", "NQ")
    yield worker
    worker.kill()
    worker.stop()


@pytest.fixture
async def bot_on_queue(
    fake_telegram: FakeBotAPI,
    model: FakeAPIServer,
    redis_url: str,
    small_data_dir: Path,
    tmp_path: Path,
    queue_worker: WorkerProcess,
) -> AsyncIterator[BotProcess]:
    """`barb bot` whose queries run on ``queue_worker`` (``BARB_QUEUE_URL``)."""
    env = {"BARB_DATA_DIR": str(small_data_dir), "BARB_QUEUE_URL": redis_url}
    process = BotProcess(fake_telegram, model.url, tmp_path, **env)
    yield process
    process.kill()


async def kill_once_the_worker_computes(bot: BotProcess, redis_url: str) -> None:
    """SIGKILL to the bot once its job runs on the worker (the job's claim says so)."""
    client = redis.Redis.from_url(redis_url)

    def running() -> bool:
        claims = client.mget(client.keys("barb.claim.*"))
        return any(claim and claim.startswith(b"running") for claim in claims)

    try:
        await bot.wait_until(running, "the worker computing the query", timeout=60)
    finally:
        client.close()
    bot.kill()


def runs_of(trace: Path) -> int:
    return len(trace.read_text().splitlines()) if trace.exists() else 0


async def test_kill_while_the_query_runs_on_a_queue_worker_computes_it_once(
    bot_on_queue: BotProcess,
    fake_telegram: FakeBotAPI,
    model: FakeAPIServer,
    redis_url: str,
    tmp_path: Path,
) -> None:
    """The bot's queries run on a Celery worker; the bot is killed while the worker computes
    the run. The resumed run takes the job the worker is computing (or has answered
    meanwhile): the worker computes it once, and the person gets one answer. Before, the
    resumed run sent it again under a new task id: the worker computed it a second time,
    the second run waiting behind the first."""
    bot, trace, gate = bot_on_queue, tmp_path / "runs.trace", tmp_path / "gate"
    # The gate open, the plan's check passes at once; closed, the run is held in the worker
    # (8 s at most) until the bot is up again: killed mid-run without a fixed sleep.
    query = {**WEEKDAY_RANGE, "trace": str(trace), "gate": str(gate)}
    gate.touch()
    model.queue(OPENAI_PATH, plan_turn(query), answer_turn())
    await bot.start()
    ask(fake_telegram)
    await bot.wait_until(lambda: plans(fake_telegram), "the plan", timeout=60)
    checked = runs_of(trace)  # the plan's check ran there too
    gate.unlink()
    press_run(fake_telegram, plans(fake_telegram)[0])
    await kill_once_the_worker_computes(bot, redis_url)
    assert answers(fake_telegram) == []

    await bot.start()  # the run resumes by itself
    gate.touch()
    await bot.wait_until(lambda: answers(fake_telegram), "the answer", timeout=60)
    await assert_one_answer(bot, fake_telegram)
    assert runs_of(trace) == checked + 1


async def test_kill_while_a_query_command_runs_on_a_queue_worker_computes_it_once(
    bot_on_queue: BotProcess, fake_telegram: FakeBotAPI, redis_url: str, tmp_path: Path
) -> None:
    """/query on a queue worker, the bot killed meanwhile: resumed, it takes the worker's
    job; one answer, computed once (before: twice)."""
    bot, trace, gate = bot_on_queue, tmp_path / "runs.trace", tmp_path / "gate"
    await bot.start()
    # Held in the worker (8 s at most) until the bot is up again.
    send_query(fake_telegram, {**WEEKDAY_RANGE, "trace": str(trace), "gate": str(gate)})
    await kill_once_the_worker_computes(bot, redis_url)
    assert fake_telegram.said(CHAT) == []

    await bot.start()
    gate.touch()
    await bot.wait_until(lambda: delivered(fake_telegram, "sendPhoto"), "the answer", timeout=60)
    await bot.wait_until(lambda: not bot.rows("SELECT kind FROM in_flight"), "nothing in flight")
    assert len(delivered(fake_telegram, "sendPhoto")) == 1, fake_telegram.describe()
    assert runs_of(trace) == 1


async def confirmations_off(bot: BotProcess, fake: FakeBotAPI) -> None:
    """/settings, then its "confirm queries" button: the chat's queries run without a plan."""
    fake.inject(fake.message_update(chat_id=CHAT, user_id=USER, text="/settings"))
    await bot.wait_until(lambda: delivered(fake, "sendMessage"), "the settings")
    [settings] = delivered(fake, "sendMessage")
    fake.inject(
        fake.callback_update(
            chat_id=CHAT, user_id=USER, message_id=settings["message_id"], data="s:confirm"
        )
    )
    await bot.wait_until(
        lambda: '"confirm_queries": false' in str(bot.rows("SELECT settings FROM chats")),
        "confirmations off",
    )


async def test_kill_while_a_query_without_a_plan_runs_on_a_queue_worker_computes_it_once(
    bot_on_queue: BotProcess,
    fake_telegram: FakeBotAPI,
    model: FakeAPIServer,
    redis_url: str,
    tmp_path: Path,
) -> None:
    """Confirmations off: the question's query runs at once on a queue worker, and the bot
    is killed while the worker computes it. Resumed, the question is asked of the model
    again, which calls the same query under a new call id: the run takes the job the
    worker computes (named by the question and the query, not the call). One answer,
    computed once. Before, the query had no name: it was sent again, and the worker
    computed it twice (the person waiting for both)."""
    bot, trace, gate = bot_on_queue, tmp_path / "runs.trace", tmp_path / "gate"
    # Held in the worker (8 s at most) until the bot is up again.
    query = {**WEEKDAY_RANGE, "trace": str(trace), "gate": str(gate)}
    model.queue(
        OPENAI_PATH, plan_turn(query), plan_turn(query, call_id="call_resumed"), answer_turn()
    )
    await bot.start()
    await confirmations_off(bot, fake_telegram)
    ask(fake_telegram)
    await kill_once_the_worker_computes(bot, redis_url)
    assert answers(fake_telegram) == []
    assert plans(fake_telegram) == []  # run at once, no plan

    await bot.start()  # the question is asked again by itself
    gate.touch()
    await bot.wait_until(lambda: answers(fake_telegram), "the answer", timeout=60)
    await bot.wait_until(lambda: not bot.rows("SELECT kind FROM in_flight"), "nothing in flight")
    assert len(model.requests_to(OPENAI_PATH)) == 3  # asked twice, then the answer worded
    assert answers(fake_telegram) == [ANSWER]
    assert len(delivered(fake_telegram, "sendPhoto")) == 1, fake_telegram.describe()
    assert runs_of(trace) == 1


async def test_kill_while_the_model_reads_the_result(
    bot: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer
) -> None:
    model.queue(OPENAI_PATH, plan_turn(), answer_turn(hold=True), answer_turn())
    await bot.start()
    ask(fake_telegram)
    await bot.wait_until(lambda: plans(fake_telegram), "the plan")
    press_run(fake_telegram, plans(fake_telegram)[0])
    await bot.wait_until(
        lambda: len(model.requests_to(OPENAI_PATH)) == 2, "the model reading the result"
    )
    bot.kill()

    await bot.start()
    await bot.wait_until(lambda: answers(fake_telegram), "the answer")
    await assert_one_answer(bot, fake_telegram)


async def test_kill_while_the_reply_is_half_sent(
    bot: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer
) -> None:
    model.queue(OPENAI_PATH, plan_turn(), answer_turn(text=LONG_ANSWER))
    await bot.start()
    ask(fake_telegram)
    await bot.wait_until(lambda: plans(fake_telegram), "the plan")
    # The commentary (after the chart: too long for its caption) is on the wire when the
    # process dies; Telegram still delivers it (the request was complete), and the bot,
    # which never heard so, sends it again after the restart.
    fake_telegram.fault_next("sendMessage", "slow", chat_id=CHAT, delay_s=2.0)
    press_run(fake_telegram, plans(fake_telegram)[0])
    await bot.wait_until(
        lambda: len(fake_telegram.calls("sendMessage", chat_id=CHAT)) == 2,
        "the commentary on the wire",
    )
    bot.kill()
    assert len(delivered(fake_telegram, "sendPhoto")) == 1

    await bot.start()
    await bot.wait_until(lambda: len(answers(fake_telegram)) == 2, "the commentary again")
    # The photo, recorded as sent the moment Telegram took it, is not sent again; the one
    # message on the wire at the kill arrives twice.
    await assert_one_answer(bot, fake_telegram, commentaries=2, answer=LONG_ANSWER)


async def test_killed_twice_the_run_is_handed_back_with_a_fresh_button(
    bot_on_sample: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer
) -> None:
    bot = bot_on_sample
    model.queue(OPENAI_PATH, plan_turn(HEAVY), answer_turn())
    await bot.start()
    ask(fake_telegram)
    await bot.wait_until(lambda: plans(fake_telegram), "the plan")
    first_plan = plans(fake_telegram)[0]
    press_run(fake_telegram, first_plan)
    await bot.wait_until(lambda: in_flight(bot, "run"), "the run recorded")
    bot.kill()
    await bot.start()
    # The resumed run (its second attempt) dies too, perhaps because of the query itself.
    await bot.wait_until(lambda: in_flight(bot, "run")[0][1] == 2, "the run resumed")
    bot.kill()
    assert answers(fake_telegram) == []

    # The old plan's status line is the restart's one chance: a dropped connection on it is
    # tried again, not left as a plan with no status beside the fresh one.
    fake_telegram.fault_next("editMessageText", "drop_before", chat_id=CHAT)
    await bot.start()
    await bot.wait_until(lambda: len(plans(fake_telegram)) == 2, "the plan handed back")
    handed_back = plans(fake_telegram)[1]
    assert handed_back["text"].startswith("I was restarted while working on this: press Run again.")
    old = fake_telegram.message(CHAT, first_plan["message_id"])
    assert old["text"].endswith("⏵ Interrupted by a restart.")
    assert "reply_markup" not in old
    await bot.wait_until(lambda: not bot.rows("SELECT kind FROM in_flight"), "the run handed back")

    press_run(fake_telegram, handed_back)
    await bot.wait_until(lambda: answers(fake_telegram), "the answer", timeout=60)
    await bot.wait_until(
        lambda: fake_telegram.message(CHAT, handed_back["message_id"])["text"].endswith("Done."),
        "the fresh plan marked done",
    )
    assert len(delivered(fake_telegram, "sendPhoto")) == 1
    assert answers(fake_telegram) == [ANSWER]


# --- the moments between receiving an update and recording its work --------------------------


@pytest.mark.parametrize("point", ["update_stored", "question_received"])
async def test_kill_between_receiving_the_update_and_recording_the_question(
    bot: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer, point: str
) -> None:
    """Killed (by the bot itself, at a named point: the window is a millisecond) once the
    update is stored and before Telegram is told; or in the handler, before the question is
    recorded in flight. Before intake stored updates, python-telegram-bot had confirmed the
    update by then and the question was lost. Now the restart handles it, exactly once, even
    though Telegram (not told in the first case) delivers it again."""
    model.queue(OPENAI_PATH, plan_turn(), answer_turn())
    bot.env["BARB_KILL_AT"] = point
    await bot.start()
    ask(fake_telegram)
    assert await bot.wait_exit() == -9  # killed itself at the point
    bot.kill()  # and its worker, as an OOM kill of the container does
    [(update_id, handled)] = bot.rows("SELECT update_id, handled_at FROM received_updates")
    assert handled is None
    assert bot.rows("SELECT id FROM in_flight") == []
    assert model.requests_to(OPENAI_PATH) == []
    if point == "update_stored":
        assert fake_telegram.confirmed_offset <= update_id  # Telegram sends it again

    del bot.env["BARB_KILL_AT"]
    await bot.start()
    await press_and_get_answer(bot, fake_telegram)
    await assert_one_answer(bot, fake_telegram)
    assert len(model.requests_to(OPENAI_PATH)) == 2  # the question asked of the model once
    await bot.wait_until(
        lambda: not bot.rows("SELECT update_id FROM received_updates WHERE handled_at IS NULL"),
        "every update handled",
    )


async def test_kill_between_a_start_links_greeting_and_its_question(
    bot: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer
) -> None:
    """``/start ex1`` greets, then asks example 1. The greeting used to be sent first, which
    marked the update handled: a kill before the question was recorded lost it, and the
    restart had nothing to resume. Now the question is recorded first and the greeting
    follows: the restart handles the update once, greeting and answer each sent once."""
    from barb.reference import query_examples

    example = query_examples()[0].question
    model.queue(OPENAI_PATH, plan_turn(), answer_turn())
    bot.env["BARB_KILL_AT"] = "question_received"
    await bot.start()
    ask(fake_telegram, "/start ex1")
    assert await bot.wait_exit() == -9
    bot.kill()
    assert bot.rows("SELECT handled_at FROM received_updates") == [(None,)]

    del bot.env["BARB_KILL_AT"]
    await bot.start()
    await press_and_get_answer(bot, fake_telegram)
    await assert_one_answer(bot, fake_telegram)
    greetings = [m for m in delivered(fake_telegram, "sendMessage") if example in m["text"]]
    assert len(greetings) == 1, fake_telegram.describe()
    asked = [r for r in model.requests_to(OPENAI_PATH) if example in json.dumps(r.body)]
    assert asked, "the example question reached the model"


# --- Cancel and /query in flight --------------------------------------------------------------

CANCEL_PREFIX = keyboards.CANCEL + keyboards.SEPARATOR
CANCELLED = "Cancelled; anything else?"


def cancel_button(message: dict[str, Any]) -> str:
    return next(d for d in keyboard_data(message) if d.startswith(CANCEL_PREFIX))


async def test_kill_while_the_model_words_a_cancel(
    bot: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer
) -> None:
    """Cancel pressed, the model still wording it: after the restart the model is asked
    again (same transcript) and the person reads one reply; the plan says "Cancelled."."""
    cancelled = replace(openai_completion(CANCELLED), delay_s=HOLD_S)
    model.queue(OPENAI_PATH, plan_turn(), cancelled, openai_completion(CANCELLED))
    await bot.start()
    ask(fake_telegram)
    await bot.wait_until(lambda: plans(fake_telegram), "the plan")
    plan = plans(fake_telegram)[0]
    fake_telegram.inject(
        fake_telegram.callback_update(
            chat_id=CHAT, user_id=USER, message_id=plan["message_id"], data=cancel_button(plan)
        )
    )
    await bot.wait_until(lambda: len(model.requests_to(OPENAI_PATH)) == 2, "the model told")
    assert in_flight(bot, "cancel") != []
    bot.kill()

    await bot.start()

    def said() -> list[str]:
        return [m["text"] for m in delivered(fake_telegram, "sendMessage")]

    await bot.wait_until(lambda: CANCELLED in said(), "the cancellation worded")
    await bot.wait_until(lambda: not bot.rows("SELECT kind FROM in_flight"), "nothing in flight")
    assert said().count(CANCELLED) == 1
    assert fake_telegram.message(CHAT, plan["message_id"])["text"].endswith("⏵ Cancelled.")
    second, third = (r.body["messages"] for r in model.requests_to(OPENAI_PATH)[1:])
    assert second == third
    assert delivered(fake_telegram, "sendPhoto") == []  # nothing computed
    assert bot.rows("SELECT status FROM pending_actions") == [("cancelled",)]


def send_query(fake: FakeBotAPI, query: dict[str, Any]) -> None:
    fake.inject(fake.message_update(chat_id=CHAT, user_id=USER, text=f"/query {json.dumps(query)}"))


async def test_kill_while_a_query_command_runs(
    bot_on_sample: BotProcess, fake_telegram: FakeBotAPI, model: FakeAPIServer
) -> None:
    """/query running when the bot dies: it runs again by itself after the restart, and
    the person reads one answer. (Killed twice, it is handed back in one sentence:
    ``test_recovery.py``.)"""
    bot = bot_on_sample
    await bot.start()
    send_query(fake_telegram, HEAVY)
    await bot.wait_until(lambda: in_flight(bot, "query"), "the /query recorded")
    bot.kill()
    assert fake_telegram.said(CHAT) == []

    await bot.start()

    def answers() -> list[str]:
        # The result as the person reads it, HEAVY's own bars: in the chart's caption, or
        # after it as a message when its warnings make it too long for one.
        return [m["text"] for m in fake_telegram.said(CHAT) if "1m ETH bars" in m["text"]]

    await bot.wait_until(answers, "the /query's answer", timeout=60)
    await bot.wait_until(lambda: not bot.rows("SELECT kind FROM in_flight"), "nothing in flight")
    assert len(answers()) == 1, fake_telegram.describe()
    assert len(delivered(fake_telegram, "sendPhoto")) == 1
    assert model.requests_to(OPENAI_PATH) == []  # /query never asks the model

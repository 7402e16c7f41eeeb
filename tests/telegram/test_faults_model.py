"""The model's server misbehaving: what does the person end up with?

The bot drives the official OpenAI SDK against the fake model server, which fails the way
providers and the proxies in front of them do: 500, 502 with an HTML page, the connection
dropped before or after the model answered, slow answers, an outage. A fault the SDK's
retries get over gives the person their plan as usual; one they cannot gives one plain
sentence, once, and the bot goes on answering.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from bot_harness import ALICE, WEEKDAY_RANGE, barb_bot, keyboard_data, press
from fake_bot_api import FakeBotAPI

from bot.llm.openai_provider import OpenAIProvider
from bot.telegram import keyboards
from bot.texts import t

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llm_fake_api import (
    OPENAI_PATH,
    Canned,
    FakeAPIServer,
    bad_gateway,
    cut_midway,
    dropped,
    openai_completion,
    openai_error,
)

PLAN = openai_completion(
    "I'll compute the average RTH range by weekday.",
    tool_calls=[("call_1", "execute_query", json.dumps({"query": WEEKDAY_RANGE}))],
)
UNAVAILABLE = t("llm_unavailable", "en")


@pytest.fixture
def model() -> Iterator[FakeAPIServer]:
    server = FakeAPIServer().start()
    yield server
    server.stop()


@pytest.fixture
async def provider(model: FakeAPIServer) -> AsyncIterator[OpenAIProvider]:
    # One retry, as the SDK does it (its own backoff); a short timeout for the slow case.
    async with OpenAIProvider(
        base_url=f"{model.url}/v1", model="gpt-4o-mini", max_retries=1, timeout_s=1.0
    ) as provider:
        yield provider


def sent(fake: FakeBotAPI) -> list[dict[str, object]]:
    return [r.result for r in fake.calls("sendMessage", chat_id=ALICE) if r.status == 200]


async def ask(fake: FakeBotAPI, text: str = "average RTH range by weekday?") -> dict[str, object]:
    before = len(sent(fake))
    fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=text))
    await fake.wait_for("sendMessage", before + 1, chat_id=ALICE, timeout=20)
    return sent(fake)[-1]


def is_plan(message: dict[str, object]) -> bool:
    return any(d.startswith(keyboards.RUN + ":") for d in keyboard_data(message))


@pytest.mark.parametrize(
    "fault",
    [
        openai_error(500, "internal error"),
        bad_gateway(),
        dropped("before"),
        dropped("after"),
    ],
    ids=["http-500", "502-html", "dropped-before", "dropped-after"],
)
async def test_a_fault_the_retry_gets_over_gives_the_plan(
    fake_telegram: FakeBotAPI,
    db_url: str,
    model: FakeAPIServer,
    provider: OpenAIProvider,
    fault: Canned,
) -> None:
    model.queue(OPENAI_PATH, fault, PLAN)
    async with barb_bot(fake_telegram, db_url, provider=provider) as svc:
        message = await ask(fake_telegram)
        assert is_plan(message)
        assert len(sent(fake_telegram)) == 1
        assert len(model.requests_to(OPENAI_PATH)) == 2
        assert await svc.store.in_flight.open() == []


@pytest.mark.parametrize(
    ("faults", "sentence"),
    [
        ([bad_gateway(), bad_gateway()], UNAVAILABLE),
        # The model was reached and did not answer: not "not reachable" (p46c C1).
        ([Canned(delay_s=3.0), Canned(delay_s=3.0)], t("llm_timeout", "en")),
    ],
    ids=["502-html-twice", "slow-past-the-timeout"],
)
async def test_a_fault_that_outlasts_the_retry_gives_one_sentence(
    fake_telegram: FakeBotAPI,
    db_url: str,
    model: FakeAPIServer,
    provider: OpenAIProvider,
    faults: list[Canned],
    sentence: str,
) -> None:
    model.queue(OPENAI_PATH, *faults, PLAN)
    async with barb_bot(fake_telegram, db_url, provider=provider) as svc:
        message = await ask(fake_telegram)
        assert message["text"] == sentence
        assert await svc.store.in_flight.open() == []
        # The bot goes on: the next question gets its plan.
        assert is_plan(await ask(fake_telegram))
        assert [m["text"] for m in sent(fake_telegram)].count(sentence) == 1


async def test_an_outage_gives_one_sentence_and_the_next_question_is_answered(
    fake_telegram: FakeBotAPI, db_url: str, model: FakeAPIServer, provider: OpenAIProvider
) -> None:
    model.queue(OPENAI_PATH, PLAN)
    async with barb_bot(fake_telegram, db_url, provider=provider):
        # Begun once the bot is up and ended by hand: a loaded machine's slow start-up
        # could otherwise outlast a timed outage before the first question is asked.
        model.outage(600)
        message = await ask(fake_telegram)
        assert message["text"] == UNAVAILABLE
        assert len(model.requests_to(OPENAI_PATH)) == 2  # the call and its one retry
        model.outage(0)  # the provider is back
        assert is_plan(await ask(fake_telegram))


async def test_the_final_answer_cut_midway_still_gives_the_numbers(
    fake_telegram: FakeBotAPI, db_url: str, model: FakeAPIServer, provider: OpenAIProvider
) -> None:
    """The model's server closes the connection halfway through the final answer (after the
    query ran), on the SDK's retry too. The person gets the numbers computed (the chart and
    its CSV) with one sentence saying they are whole and only the model's comment is
    missing (before: "The language model is not reachable right now; please try again in
    a minute." under the chart, which read as a failed answer and, followed, ran the query
    again), the plan ends, nothing stays in flight, and the next question is answered."""
    fake = fake_telegram
    words = openai_completion("Mondays have the widest RTH range.")
    model.queue(OPENAI_PATH, PLAN, cut_midway(words), cut_midway(words))
    async with barb_bot(fake, db_url, provider=provider) as svc:
        plan = await ask(fake)
        assert is_plan(plan)
        run, _ = keyboard_data(plan)
        await press(fake, ALICE, ALICE, plan, run)
        await fake.wait_for("sendPhoto", 1, chat_id=ALICE, timeout=30)
        while await svc.store.in_flight.open():
            await asyncio.sleep(0.05)
        [chart] = [r.result for r in fake.calls("sendPhoto", chat_id=ALICE) if r.status == 200]
        headline, sentence = chart["caption"].split("\n\n")
        assert headline.startswith("average range: Mon ")  # the numbers, computed once
        assert sentence == t("llm_failed_after_numbers", "en")
        assert sentence.startswith("These numbers are complete")
        assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")
        csv_button = keyboard_data(chart)[0]
        assert csv_button.startswith("f:")
        await press(fake, ALICE, ALICE, chart, csv_button)
        await fake.wait_for("sendDocument", 1, chat_id=ALICE, timeout=20)
        assert len([r for r in fake.calls("sendDocument", chat_id=ALICE) if r.status == 200]) == 1
        # One sentence, once; nothing else said.
        assert [m["text"] for m in sent(fake)] == [plan["text"]]
        assert len(model.requests_to(OPENAI_PATH)) == 3  # the plan, the answer and its retry
        model.queue(OPENAI_PATH, PLAN)
        assert is_plan(await ask(fake))

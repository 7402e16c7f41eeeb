"""What the person sees when the model misbehaves, over both real wires: the real PTB
Application against the fake Bot API, and the real OpenAI / Anthropic SDK against the fake
model API. A malformed answer is asked for once more; a second one gets one plain sentence
saying the model's answer could not be read (not "not reachable": it was reached): never
"Something broke", never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bot_harness import ALICE, barb_bot
from fake_bot_api import FakeBotAPI
from pydantic import SecretStr

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))  # the fake model API's module
from llm_fake_api import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    Canned,
    FakeAPIServer,
    anthropic_error,
    anthropic_invalid_tool_name,
    anthropic_message,
    anthropic_nan_query,
    anthropic_nested_input,
    anthropic_null_message,
    non_json_body,
    openai_completion,
    openai_error,
    openai_invalid_tool_name,
    openai_nan_query,
    openai_nested_arguments,
    openai_null_message,
    text_block,
)

from bot.llm.anthropic_provider import AnthropicProvider
from bot.llm.messages import ModelRequest
from bot.llm.openai_provider import OpenAIProvider
from bot.llm.scripted import ScriptedProvider, tool_call, turn
from bot.llm.sdk_provider import SDKProvider
from bot.texts import t

UNREACHABLE = t("llm_unavailable", "en")
UNREADABLE = t("llm_bad_response", "en")
FAULTS: dict[str, dict[str, Callable[[], Canned]]] = {
    "openai": {
        "null message": openai_null_message,
        "non-JSON body": non_json_body,
        "arguments nested 5,000 deep": openai_nested_arguments,
        "NaN in a query": openai_nan_query,
        "invalid tool name": openai_invalid_tool_name,
    },
    "anthropic": {
        "null message": anthropic_null_message,
        "non-JSON body": non_json_body,
        "arguments nested 5,000 deep": anthropic_nested_input,
        "NaN in a query": anthropic_nan_query,
        "invalid tool name": anthropic_invalid_tool_name,
    },
}
CASES = [(api, fault) for api, faults in FAULTS.items() for fault in faults]


@pytest.fixture
def model_api() -> Iterator[FakeAPIServer]:
    server = FakeAPIServer().start()
    yield server
    server.stop()


def provider_for(api: str, url: str) -> SDKProvider:
    key = SecretStr("sk-test-0123456789abcdef")
    if api == "openai":
        return OpenAIProvider(model="gpt-4o-mini", api_key=key, base_url=f"{url}/v1")
    return AnthropicProvider(model="claude-sonnet-4-6", api_key=key, base_url=url)


def answer(api: str, words: str) -> Canned:
    if api == "openai":
        return openai_completion(words)
    return anthropic_message(text_block(words))


async def say(fake: FakeBotAPI, words: str, sent_before: int) -> str:
    fake.inject(fake.message_update(chat_id=ALICE, user_id=ALICE, text=words))
    sent = await fake.wait_for("sendMessage", sent_before + 1, chat_id=ALICE)
    return sent[-1].result["text"]


@pytest.mark.parametrize(("api", "fault"), CASES, ids=[f"{a}: {f}" for a, f in CASES])
async def test_a_malformed_answer_is_retried_once_then_one_plain_sentence(
    fake_telegram: FakeBotAPI, db_url: str, model_api: FakeAPIServer, api: str, fault: str
) -> None:
    fake = fake_telegram
    path = OPENAI_PATH if api == "openai" else ANTHROPIC_PATH
    malformed = FAULTS[api][fault]
    model_api.queue(
        path,
        malformed(),
        answer(api, "Hi! Ask me about the bars."),  # the retry is answered
        malformed(),
        malformed(),  # the retry fails too
        answer(api, "Still here."),
    )

    async with (
        provider_for(api, model_api.url) as provider,
        barb_bot(fake, db_url, provider=provider) as svc,
    ):
        assert await say(fake, "hello", 0) == "Hi! Ask me about the bars."
        assert len(model_api.requests_to(path)) == 2

        assert await say(fake, "average range?", 1) == UNREADABLE != UNREACHABLE
        assert len(model_api.requests_to(path)) == 4  # once more, and no further

        # Nothing is stuck: the next question is answered as usual.
        assert await say(fake, "are you there?", 2) == "Still here."
        assert len(model_api.requests_to(path)) == 5

        texts = [call.result["text"] for call in fake.calls("sendMessage", ALICE)]
        assert not any("Something broke" in text or "Traceback" in text for text in texts)
        assert len(texts) == 3  # one message per question, nothing extra
        # The question that failed is kept, and its malformed answer is not.
        stored = [row.payload for row in await svc.store.transcript.recent(ALICE, 3)]
        assert {"role": "user", "text": "average range?"}.items() <= stored[2].items()
        assert all(not payload.get("tool_calls") for payload in stored)


def restless(request: ModelRequest):
    """A model that never answers: four tool calls every turn, tools offered or not."""
    return turn(*(tool_call("get_events") for _ in range(4)))


async def test_a_model_that_will_not_stop_calling_tools_gets_its_own_sentence(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    provider = ScriptedProvider([restless] * 20)
    async with barb_bot(fake, db_url, provider=provider):
        said = await say(fake, "which events are there?", 0)

        assert said == t("tool_loop_limit", "en")
        assert said != UNREACHABLE and "Something broke" not in said
        # 10 tool calls ran or were refused at the limit, the model was asked for words
        # without tools, called tools again, and the loop ended there: 4 model calls.
        assert len(provider.requests) == 4
        assert provider.requests[-1].tools == []
        assert len(fake.calls("sendMessage", ALICE)) == 1


def rate_limited(api: str, retry_after: str) -> Canned:
    if api == "openai":
        return openai_error(429, "slow down", headers={"retry-after": retry_after})
    return anthropic_error(429, "slow down", headers={"retry-after": retry_after})


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_long_rate_limit_is_said_at_once_with_its_wait(
    fake_telegram: FakeBotAPI, db_url: str, model_api: FakeAPIServer, api: str
) -> None:
    """A 429 asking to wait 120 s is not waited out on "typing…" (p40b F9: the OpenAI SDK
    took it, and the plan came after 2 minutes; Anthropic's would wait any length): one
    request, and the person reads at once that the model is rate-limited and when to try
    again. A short retry-after is still retried by the SDK."""
    fake = fake_telegram
    path = OPENAI_PATH if api == "openai" else ANTHROPIC_PATH
    model_api.queue(
        path,
        rate_limited(api, "120"),
        rate_limited(api, "0"),  # within the cap: retried
        answer(api, "Still here."),
    )
    async with (
        provider_for(api, model_api.url) as provider,
        barb_bot(fake, db_url, provider=provider),
    ):
        said = await say(fake, "average range?", 0)

        assert said == t("llm_rate_limited", "en", seconds=120)
        assert "120 s" in said
        assert len(model_api.requests_to(path)) == 1  # not retried after 120 s

        assert await say(fake, "are you there?", 1) == "Still here."
        assert len(model_api.requests_to(path)) == 3


def refused(api: str, status: int) -> Canned:
    if api == "openai":
        return openai_error(status, "no")
    return anthropic_error(status, "no")


REFUSALS = [
    (api, status, key)
    for api in ("openai", "anthropic")
    for status, key in ((400, "llm_rejected"), (413, "llm_rejected"), (401, "llm_not_set_up"))
]


@pytest.mark.parametrize(
    ("api", "status", "key"), REFUSALS, ids=[f"{a}: HTTP {s}" for a, s, _ in REFUSALS]
)
async def test_a_model_that_refuses_the_request_is_not_said_to_be_unreachable(
    fake_telegram: FakeBotAPI,
    db_url: str,
    model_api: FakeAPIServer,
    api: str,
    status: int,
    key: str,
) -> None:
    """The server answered and refused: a request it will not take (400, 413: a history
    too long), or the key (401). The person read "not reachable right now; please try again
    in a minute", and trying again changed nothing. Now: rephrase or /reset; tell the
    operator. In the person's language."""
    fake = fake_telegram
    path = OPENAI_PATH if api == "openai" else ANTHROPIC_PATH
    model_api.queue(path, refused(api, status), refused(api, status), answer(api, "Here."))
    async with (
        provider_for(api, model_api.url) as provider,
        barb_bot(fake, db_url, provider=provider),
    ):
        said = await say(fake, "average range?", 0)
        assert said == t(key, "en") != UNREACHABLE
        assert len(model_api.requests_to(path)) == 1  # not retried: it would be refused again

        fake.inject(
            fake.message_update(
                chat_id=ALICE, user_id=ALICE, text="средний диапазон?", language_code="ru"
            )
        )
        sent = await fake.wait_for("sendMessage", 2, chat_id=ALICE)
        assert sent[-1].result["text"] == t(key, "ru") != t("llm_unavailable", "ru")
        assert await say(fake, "are you there?", 2) == "Here."

"""Every LLM test runs offline: real adapters may only reach 127.0.0.1 (our fake servers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_fake_api import FakeAPIServer

from bot.llm.offline import OFFLINE_ENV, allow_model_requests

# Variables the SDKs read on their own; a developer's shell must not leak into the tests.
_SDK_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_CUSTOM_HEADERS",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("live") is None:
        for name in _SDK_ENV:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(OFFLINE_ENV, "1")
    allow_model_requests(None)
    yield
    allow_model_requests(None)


@pytest.fixture
def server() -> Iterator[FakeAPIServer]:
    fake = FakeAPIServer().start()
    yield fake
    fake.stop()

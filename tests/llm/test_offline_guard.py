"""Real model requests are off in tests: only loopback URLs may be called."""

from __future__ import annotations

import pytest

from bot.llm.errors import ModelRequestsForbidden
from bot.llm.offline import (
    allow_model_requests,
    check_request_allowed,
    is_loopback_url,
    model_requests_allowed,
)


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.8.9.10/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8080/v1", True),
        ("https://api.openai.com/v1", False),
        ("https://api.anthropic.com", False),
        ("http://192.168.1.20:8000/v1", False),
        ("http://localhost.evil.example/v1", False),
    ],
)
def test_loopback_urls(url: str, loopback: bool) -> None:
    assert is_loopback_url(url) is loopback


def test_tests_run_offline() -> None:
    assert not model_requests_allowed()  # BARB_OFFLINE=1, set by conftest


def test_offline_refuses_a_remote_url_and_says_how_to_fix() -> None:
    with pytest.raises(ModelRequestsForbidden) as caught:
        check_request_allowed("https://api.anthropic.com", provider="anthropic")

    message = str(caught.value)
    assert "api.anthropic.com" in message
    assert "ScriptedProvider" in message
    assert "allow_model_requests(True)" in message


def test_offline_allows_loopback() -> None:
    check_request_allowed("http://127.0.0.1:8000/v1", provider="openai")


def test_the_switch_overrides_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    allow_model_requests(True)
    check_request_allowed("https://api.openai.com/v1", provider="openai")

    allow_model_requests(None)
    monkeypatch.delenv("BARB_OFFLINE")
    assert model_requests_allowed()

    allow_model_requests(False)
    with pytest.raises(ModelRequestsForbidden):
        check_request_allowed("https://api.openai.com/v1", provider="openai")

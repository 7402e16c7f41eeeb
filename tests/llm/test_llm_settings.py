"""LLM settings from the environment, and the provider they describe."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.llm.anthropic_provider import AnthropicProvider
from bot.llm.errors import ConfigError
from bot.llm.openai_provider import OpenAIProvider
from bot.llm.settings import LLMSettings, make_provider


def settings(**values: object) -> LLMSettings:
    """Settings from the environment only: a developer's .env must not leak in."""
    return LLMSettings(_env_file=None, **values)  # type: ignore[arg-type]


def test_nothing_configured_says_exactly_what_to_set() -> None:
    with pytest.raises(ConfigError) as caught:
        make_provider(settings())

    assert str(caught.value) == (
        "No LLM configured: set ANTHROPIC_API_KEY, or OPENAI_API_KEY, or OPENAI_BASE_URL for a "
        "local OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1)"
    )
    assert caught.value.user_message == (
        "The language model is not configured; please tell the bot's operator."
    )


async def test_a_base_url_alone_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")

    provider = make_provider(settings())

    assert isinstance(provider, OpenAIProvider)
    assert provider.base_url == "http://127.0.0.1:8000/v1"
    assert provider.model == "auto"  # the server's first model, resolved on first call
    await provider.aclose()


async def test_environment_names_are_the_sdks_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9999")
    monkeypatch.setenv("BARB_LLM_MODEL", "claude-haiku-4-5")
    monkeypatch.setenv("BARB_LLM_TIMEOUT_S", "12.5")
    monkeypatch.setenv("BARB_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("BARB_LLM_PRICES_FILE", str(tmp_path / "p.yaml"))

    loaded = settings()

    assert loaded.chosen_provider() == "anthropic"  # preferred when its key is set
    assert loaded.model == "claude-haiku-4-5"
    assert loaded.timeout_s == 12.5
    assert loaded.max_retries == 0
    assert loaded.prices_file == tmp_path / "p.yaml"
    assert loaded.anthropic_base_url == "http://127.0.0.1:9999"
    for text in (repr(loaded), str(loaded), loaded.model_dump_json()):
        assert "sk-openai-secret" not in text
        assert "sk-ant-secret" not in text


async def test_anthropic_is_the_default_when_its_key_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")

    provider = make_provider(settings())

    assert isinstance(provider, AnthropicProvider)
    assert provider.model == "claude-sonnet-4-6"
    assert "sk-ant-secret" not in repr(provider)
    await provider.aclose()


async def test_openai_is_the_default_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")

    provider = make_provider(settings())

    assert isinstance(provider, OpenAIProvider)
    assert provider.model == "gpt-4.1-mini"
    assert provider.base_url == "https://api.openai.com/v1"
    await provider.aclose()


async def test_explicit_provider_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("BARB_LLM_PROVIDER", "OpenAI")
    monkeypatch.setenv("BARB_LLM_MODEL", "qwen2.5:7b")

    provider = make_provider(settings())

    assert isinstance(provider, OpenAIProvider)
    assert provider.model == "qwen2.5:7b"
    await provider.aclose()


@pytest.mark.parametrize(
    ("provider", "needed"),
    [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")],
)
def test_chosen_provider_without_its_key_names_it(provider: str, needed: str) -> None:
    with pytest.raises(ConfigError, match=needed):
        make_provider(settings(provider=provider))


def test_empty_variables_count_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    monkeypatch.setenv("BARB_LLM_PROVIDER", "")

    with pytest.raises(ConfigError, match="No LLM configured"):
        make_provider(settings())


def test_a_bad_price_file_fails_at_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("BARB_LLM_PRICES_FILE", str(tmp_path / "missing.yaml"))

    with pytest.raises(ConfigError, match="BARB_LLM_PRICES_FILE"):
        make_provider(settings())

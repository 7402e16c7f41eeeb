"""TELEGRAM_API_BASE_URL and TELEGRAM_API_FILE_URL: python-telegram-bot's own form (the URL
ending in ``/bot`` to which the token is appended, or with ``{token}`` where it goes) or the
bare server root; PTB's Bot ends up with the same URLs either way."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.settings import BotSettings
from bot.telegram.app import build_application

TOKEN = "123456:ABC-test"


def settings_from(monkeypatch: pytest.MonkeyPatch, **env: str) -> BotSettings:
    """BotSettings read from the environment, as `barb bot` reads them."""
    for name in ("TELEGRAM_API_BASE_URL", "TELEGRAM_API_FILE_URL"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(f"BARB_{name}", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return BotSettings(_env_file=None)


@pytest.mark.parametrize(
    ("given", "api", "files"),
    [
        # the bare root of a local Bot API server, with or without a trailing slash
        ("http://127.0.0.1:8081", "http://127.0.0.1:8081/bot", "http://127.0.0.1:8081/file/bot"),
        ("http://127.0.0.1:8081/", "http://127.0.0.1:8081/bot", "http://127.0.0.1:8081/file/bot"),
        # PTB's base_url, as PTB documents it
        (
            "http://127.0.0.1:8081/bot",
            "http://127.0.0.1:8081/bot",
            "http://127.0.0.1:8081/file/bot",
        ),
        # behind a reverse proxy under a path
        ("https://example.org/tg", "https://example.org/tg/bot", "https://example.org/tg/file/bot"),
        # PTB's example for Telegram's test environment: the token inside the URL
        (
            "https://api.telegram.org/bot{token}/test",
            "https://api.telegram.org/bot{token}/test",
            "https://api.telegram.org/file/bot{token}/test",
        ),
    ],
)
def test_either_form_gives_ptbs_urls(
    monkeypatch: pytest.MonkeyPatch, given: str, api: str, files: str
) -> None:
    settings = settings_from(monkeypatch, TELEGRAM_API_BASE_URL=given)
    assert (settings.telegram_api_base_url, settings.telegram_api_file_url) == (api, files)
    bot = build_application(
        TOKEN,
        base_url=settings.telegram_api_base_url,
        base_file_url=settings.telegram_api_file_url,
    ).bot
    assert (bot.base_url, bot.base_file_url) == (with_token(api), with_token(files))


def with_token(url: str) -> str:
    """Where PTB puts the token: at ``{token}``, else appended."""
    return url.replace("{token}", TOKEN) if "{token}" in url else url + TOKEN


@pytest.mark.parametrize(
    "file_url", ["http://files.local:9000", "http://files.local:9000/file/bot"]
)
def test_the_file_url_in_either_form(monkeypatch: pytest.MonkeyPatch, file_url: str) -> None:
    settings = settings_from(
        monkeypatch, TELEGRAM_API_BASE_URL="http://127.0.0.1:8081", TELEGRAM_API_FILE_URL=file_url
    )
    assert settings.telegram_api_file_url == "http://files.local:9000/file/bot"


def test_no_url_means_telegrams_own_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_from(monkeypatch)
    assert settings.telegram_api_base_url is None and settings.telegram_api_file_url is None
    bot = build_application(TOKEN).bot
    assert bot.base_url == f"https://api.telegram.org/bot{TOKEN}"
    assert bot.base_file_url == f"https://api.telegram.org/file/bot{TOKEN}"


@pytest.mark.parametrize("bad", ["127.0.0.1:8081", "ftp://host/bot", "http://"])
def test_not_a_url_is_refused(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    with pytest.raises(ValidationError, match="must be an http"):
        settings_from(monkeypatch, TELEGRAM_API_BASE_URL=bad)

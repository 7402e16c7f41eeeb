"""The bot's own settings: Telegram, access, limits, workers. Read once, passed explicitly."""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from bot.kill_points import KillPoint

IdList = Annotated[frozenset[int], NoDecode]

#: python-telegram-bot's convention: the token is appended to the base URL (``…/bot`` +
#: token) unless the URL says where it goes with ``{token}``.
TOKEN_PLACEHOLDER = "{token}"

#: What Telegram accepts as a webhook's ``secret_token``.
_WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")


def telegram_api_url(value: str) -> str:
    """A Bot API base URL as python-telegram-bot's ``base_url`` wants it.

    Accepts PTB's own form (``http://host:8081/bot``, or with ``{token}`` where the token
    goes) as is, and a bare server root (``http://host:8081``, with or without a path
    prefix), to which ``/bot`` is added.
    """
    url = _http_url(value)
    if TOKEN_PLACEHOLDER in url or url.endswith("/bot"):
        return url
    return f"{url}/bot"


def telegram_file_url(value: str | None, api_url: str) -> str:
    """The file URL as PTB's ``base_file_url`` wants it: the value in either form as for
    :func:`telegram_api_url` (a root gets ``/file/bot``), or, when not set, derived from the
    API URL the way Telegram lays its servers out (``…/bot`` → ``…/file/bot``)."""
    if value is None:
        head, _, tail = telegram_api_url(api_url).rpartition("/bot")
        return f"{head}/file/bot{tail}"
    url = _http_url(value)
    if TOKEN_PLACEHOLDER in url or url.endswith("/file/bot"):
        return url
    return f"{url}/file/bot"


def _http_url(value: str) -> str:
    url = value.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            "must be an http(s) URL such as http://127.0.0.1:8081 (the server) or "
            "http://127.0.0.1:8081/bot (python-telegram-bot's base_url)"
        )
    return url


class BotSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BARB_", env_file=".env", extra="ignore")

    telegram_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TELEGRAM_BOT_TOKEN", "BARB_TELEGRAM_TOKEN")
    )
    telegram_api_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("TELEGRAM_API_BASE_URL", "BARB_TELEGRAM_API_BASE_URL"),
        description="Another Bot API server (a local one, Telegram's test environment): "
        "python-telegram-bot's base_url, http://127.0.0.1:8081/bot (the token is appended), "
        "or the bare root http://127.0.0.1:8081. Kept in PTB's form.",
    )
    telegram_api_file_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("TELEGRAM_API_FILE_URL", "BARB_TELEGRAM_API_FILE_URL"),
        description="Where files are downloaded from: PTB's base_file_url "
        "(http://127.0.0.1:8081/file/bot) or the bare root; default: next to the base URL",
    )
    webhook_url: str | None = Field(default=None, description="Public HTTPS URL: webhook mode")
    webhook_port: int = 8443
    webhook_listen: str = "0.0.0.0"
    webhook_secret: SecretStr | None = Field(
        default=None,
        description="Telegram sends it with every update (X-Telegram-Bot-Api-Secret-Token); "
        "a request without it is refused. The same value on every replica (1-256 of A-Z, "
        "a-z, 0-9, _ and -)",
    )
    poll_timeout_s: int = Field(
        default=10, ge=0, description="Long polling: how long one getUpdates waits for updates"
    )
    kill_at: KillPoint | None = Field(
        default=None, description="Tests only: the bot kills itself there (bot.kill_points)"
    )
    allowed_users: IdList = frozenset()
    allowed_chats: IdList = frozenset()
    admins: IdList = frozenset()
    questions_per_minute: int = Field(default=6, ge=1)
    split_window_s: float = Field(
        default=1.5,
        ge=0,
        description="A long message (2048+ characters) waits this long for the parts Telegram's "
        "apps split a message over 4096 characters into; the parts are asked as one question "
        "(bot.telegram.split_questions). 0: every message asked on its own",
    )
    queries_per_minute: int = Field(
        default=20, ge=1, description="/query runs per person per minute (no model, no tokens)"
    )
    query_timeout_s: float = Field(default=20.0, gt=0)
    workers: int = Field(default=2, ge=1)
    worker_memory_gb: float = Field(
        default=3.0,
        ge=0,
        description="Each query worker process's own memory (RLIMIT_DATA: not the memory-"
        "mapped data files); a query past it is told to join fewer instruments or use a "
        "shorter period or a longer timeframe. 0: no ceiling",
    )
    shutdown_grace_s: float = Field(
        default=5.0,
        ge=0,
        description="On SIGTERM or Ctrl+C, how long answers in progress may take to finish; "
        "what is still running then is stopped and resumed at the next start (keep it under "
        "the supervisor's own limit, e.g. Docker's 10 s)",
    )
    queue_url: str | None = Field(
        default=None,
        description="Redis URL (redis://host:6379/0): queries go to `barb worker` processes "
        "through Celery on it, and Telegram's flood limit is shared by every replica of the "
        "bot; unset, queries run in this process's own worker pool",
    )
    queue_wait_s: float = Field(
        default=60.0,
        gt=0,
        description="How long a query may wait for a worker to take it before the person is "
        "told to try again (with BARB_QUEUE_URL)",
    )
    sending_pass_s: float = Field(
        default=60.0,
        gt=0,
        description="How often the bot sends the replies still queued (Telegram did not take "
        'them), says "Done." on plans left "Running…", and takes over the updates, '
        "work and replies of a replica whose leases expired",
    )
    telegram_max_rate: float = Field(
        default=30.0,
        ge=0,
        description="Bot API requests per second across all chats (Telegram's broadcast limit "
        "is about 30); 0 sends at once and only waits when Telegram answers RetryAfter",
    )

    @field_validator("queue_url")
    @classmethod
    def _queue_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if urlsplit(value.strip()).scheme not in ("redis", "rediss"):
            raise ValueError("must be a Redis URL such as redis://127.0.0.1:6379/0")
        return value.strip()

    @field_validator("webhook_url")
    @classmethod
    def _webhook_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            # Otherwise Telegram would be told to post updates to "notaurl/telegram".
            raise ValueError(
                "must be the http(s) URL Telegram posts updates to, such as https://bot.example.com"
            )
        return value.strip()

    @field_validator("telegram_api_base_url")
    @classmethod
    def _api_url(cls, value: str | None) -> str | None:
        return None if value is None else telegram_api_url(value)

    @field_validator("telegram_api_file_url")
    @classmethod
    def _file_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        api_url = info.data.get("telegram_api_base_url")
        if value is None and api_url is None:
            return None  # Telegram's own servers: PTB's defaults
        return telegram_file_url(value, api_url or "https://api.telegram.org/bot")

    @field_validator("webhook_secret")
    @classmethod
    def _secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _WEBHOOK_SECRET.fullmatch(value.get_secret_value()):
            raise ValueError("use 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return value

    @field_validator("allowed_users", "allowed_chats", "admins", mode="before")
    @classmethod
    def _ids(cls, value: object) -> object:
        if isinstance(value, str):
            return frozenset(
                int(part) for part in value.replace(";", ",").split(",") if part.strip()
            )
        if isinstance(value, int):
            return frozenset({value})
        return value

    def allows(self, user_id: int | None, chat_id: int) -> bool:
        """Nobody outside the allowlists gets an answer (or costs a token) once they are set."""
        if not self.allowed_users and not self.allowed_chats:
            return True
        return (user_id in self.allowed_users) or (chat_id in self.allowed_chats)

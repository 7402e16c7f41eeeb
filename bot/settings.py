"""The bot's own settings: Telegram, access, limits, workers. Read once, passed explicitly."""

from __future__ import annotations

from typing import Annotated

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

IdList = Annotated[frozenset[int], NoDecode]


class BotSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BARB_", env_file=".env", extra="ignore")

    telegram_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TELEGRAM_BOT_TOKEN", "BARB_TELEGRAM_TOKEN")
    )
    telegram_api_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("TELEGRAM_API_BASE_URL", "BARB_TELEGRAM_API_BASE_URL"),
        description="A local Bot API server, e.g. http://127.0.0.1:8081 (PTB base_url)",
    )
    webhook_url: str | None = Field(default=None, description="Public HTTPS URL: webhook mode")
    webhook_port: int = 8443
    webhook_listen: str = "0.0.0.0"
    allowed_users: IdList = frozenset()
    allowed_chats: IdList = frozenset()
    admins: IdList = frozenset()
    questions_per_minute: int = Field(default=6, ge=1)
    queries_per_minute: int = Field(
        default=20, ge=1, description="/query runs per person per minute (no model, no tokens)"
    )
    query_timeout_s: float = Field(default=20.0, gt=0)
    workers: int = Field(default=2, ge=1)
    telegram_max_rate: float = Field(
        default=30.0,
        ge=0,
        description="Bot API requests per second across all chats (Telegram's broadcast limit "
        "is about 30); 0 sends at once and only waits when Telegram answers RetryAfter",
    )

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

"""LLM configuration from the environment (and ``.env``), and the provider it describes.

The keys and base URLs are read under the SDKs' own variable names (``OPENAI_API_KEY``,
``ANTHROPIC_BASE_URL``…), so an existing setup works unchanged; Barb's own settings carry
the ``BARB_LLM_`` prefix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.llm.errors import ConfigError, NoModelConfigured
from bot.llm.pricing import PriceTable
from bot.llm.provider import LLMProvider

ProviderName = Literal["openai", "anthropic"]

LOCAL_EXAMPLE_URL = "http://127.0.0.1:8000/v1"
NOTHING_CONFIGURED = (
    "No LLM configured: set ANTHROPIC_API_KEY, or OPENAI_API_KEY, or OPENAI_BASE_URL for a "
    f"local OpenAI-compatible server (e.g. {LOCAL_EXAMPLE_URL})"
)


class LLMSettings(BaseSettings):
    """Which model Barb talks to, and how patiently."""

    model_config = SettingsConfigDict(
        env_file=".env",
        extra="ignore",
        env_ignore_empty=True,
        validate_by_name=True,
        validate_by_alias=True,
    )

    provider: ProviderName | None = Field(
        default=None,
        validation_alias="BARB_LLM_PROVIDER",
        description="openai | anthropic; default: anthropic if ANTHROPIC_API_KEY is set, "
        "else openai",
    )
    model: str | None = Field(
        default=None,
        validation_alias="BARB_LLM_MODEL",
        description="default: claude-sonnet-4-6 (anthropic), gpt-4.1-mini (openai), or the "
        "first model a custom OPENAI_BASE_URL server lists",
    )
    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    openai_base_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY")
    anthropic_base_url: str | None = Field(default=None, validation_alias="ANTHROPIC_BASE_URL")
    timeout_s: float = Field(default=60.0, gt=0, validation_alias="BARB_LLM_TIMEOUT_S")
    max_retries: int = Field(default=2, ge=0, le=10, validation_alias="BARB_LLM_MAX_RETRIES")
    prices_file: Path | None = Field(default=None, validation_alias="BARB_LLM_PRICES_FILE")

    @field_validator("provider", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    def chosen_provider(self) -> ProviderName:
        """The explicit choice, else whichever provider has something configured."""
        if self.provider is not None:
            return self.provider
        if self.anthropic_api_key is not None:
            return "anthropic"
        if self.openai_api_key is not None or self.openai_base_url is not None:
            return "openai"
        if self.anthropic_base_url is not None:
            return "anthropic"
        raise NoModelConfigured(NOTHING_CONFIGURED)


def make_provider(settings: LLMSettings, *, prices: PriceTable | None = None) -> LLMProvider:
    """The provider the settings describe; ``ConfigError`` naming what to set if none.

    The SDK adapters are imported here, not at module import, so that loading settings
    (and the scripted provider in tests) does not pay for importing both SDKs.
    """
    name = settings.chosen_provider()
    if prices is None:
        prices = PriceTable.load(settings.prices_file)
    common = {
        "model": settings.model,
        "timeout_s": settings.timeout_s,
        "max_retries": settings.max_retries,
        "prices": prices,
    }
    if name == "anthropic":
        if settings.anthropic_api_key is None and settings.anthropic_base_url is None:
            raise ConfigError(
                "BARB_LLM_PROVIDER=anthropic, but ANTHROPIC_API_KEY is not set: set "
                "ANTHROPIC_API_KEY (from console.anthropic.com), or choose another "
                "provider with BARB_LLM_PROVIDER=openai."
            )
        from bot.llm.anthropic_provider import AnthropicProvider

        return AnthropicProvider(
            api_key=settings.anthropic_api_key, base_url=settings.anthropic_base_url, **common
        )
    if settings.openai_api_key is None and settings.openai_base_url is None:
        raise ConfigError(
            "BARB_LLM_PROVIDER=openai, but neither OPENAI_API_KEY nor OPENAI_BASE_URL is set: "
            "set OPENAI_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible server "
            f"(e.g. {LOCAL_EXAMPLE_URL})."
        )
    from bot.llm.openai_provider import OpenAIProvider

    return OpenAIProvider(
        api_key=settings.openai_api_key, base_url=settings.openai_base_url, **common
    )

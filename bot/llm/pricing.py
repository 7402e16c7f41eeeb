"""What a model call cost, from a table of prices per model-name pattern.

The default table is data (``prices.yaml`` next to this module); ``BARB_LLM_PRICES_FILE``
names a file in the same format whose entries are tried first. A model that matches no
pattern has an unknown cost: ``None``, never 0, so that a missing price cannot pass for a
free call in the usage totals.
"""

from __future__ import annotations

import fnmatch
import logging
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from barb.yaml_text import load_yaml
from bot.llm.errors import ConfigError
from bot.llm.messages import Usage

log = logging.getLogger(__name__)

PRICES_FILE_ENV = "BARB_LLM_PRICES_FILE"
_PER_TOKENS = 1_000_000


class ModelPrice(BaseModel):
    """USD per million tokens for the models whose name matches ``pattern`` (a glob)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pattern: str
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)

    def matches(self, model: str) -> bool:
        pattern = self.pattern.lower()
        name = model.lower()
        # Routers and local servers report "vendor/model"; the price is the model's.
        return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(
            name.rsplit("/", 1)[-1], pattern
        )

    def cost(self, usage: Usage) -> float:
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * cache_read
            + usage.cache_write_tokens * cache_write
        )
        return total / _PER_TOKENS


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prices: list[ModelPrice]


class PriceTable:
    """An ordered list of prices; the first pattern that matches a model name wins."""

    def __init__(self, prices: list[ModelPrice]) -> None:
        self.prices = list(prices)

    @classmethod
    def default(cls) -> PriceTable:
        """The table shipped with Barb (approximate list prices)."""
        text = resources.files("bot.llm").joinpath("prices.yaml").read_text(encoding="utf-8")
        return cls(_parse(text, source="bot/llm/prices.yaml"))

    @classmethod
    def load(cls, override: Path | None = None) -> PriceTable:
        """The default table, with the entries of ``override`` (if given) tried first."""
        table = cls.default()
        if override is None:
            return table
        try:
            text = Path(override).read_text(encoding="utf-8")
        except OSError as err:
            raise ConfigError(
                f"Cannot read the price file {override} ({err.strerror}): fix "
                f"{PRICES_FILE_ENV} or unset it to use the default prices."
            ) from err
        return cls(_parse(text, source=str(override)) + table.prices)

    def price_for(self, model: str) -> ModelPrice | None:
        return next((price for price in self.prices if price.matches(model)), None)

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.price_for(model)
        if price is None:
            log.debug("No price for model %r: its cost is unknown (None)", model)
            return None
        return price.cost(usage)


def _parse(text: str, *, source: str) -> list[ModelPrice]:
    try:
        return _PriceFile.model_validate(load_yaml(text)).prices
    except (yaml.YAMLError, ValidationError) as err:
        raise ConfigError(
            f"The price file {source} is not valid: {err}. Expected YAML like "
            "'prices: [{pattern: \"gpt-4o-mini*\", input: 0.15, output: 0.60}]' "
            f"(USD per million tokens); fix it or unset {PRICES_FILE_ENV}."
        ) from err

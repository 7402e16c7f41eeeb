"""Cost per call from the price table: globs, first match, overrides, unknown is None."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.llm.errors import ConfigError
from bot.llm.messages import Usage
from bot.llm.pricing import PriceTable

MILLION = Usage(input_tokens=1_000_000)


@pytest.mark.parametrize(
    ("model", "pattern"),
    [
        ("claude-sonnet-4-6", "claude-*sonnet*"),
        ("claude-3-7-sonnet-20250219", "claude-*sonnet*"),
        ("claude-opus-4-20250514", "claude-opus-4-2025*"),  # the older, dearer Opus 4
        ("claude-opus-4-5-20251101", "claude-opus-4*"),
        ("claude-haiku-4-5", "claude-haiku-4*"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini*"),  # not "gpt-4o*": specific first
        ("gpt-4.1-mini", "gpt-4.1-mini*"),
        ("GPT-4O", "gpt-4o*"),
        ("openai/gpt-4o", "gpt-4o*"),  # a router's vendor prefix is ignored
    ],
)
def test_first_matching_pattern_wins(model: str, pattern: str) -> None:
    price = PriceTable.default().price_for(model)

    assert price is not None
    assert price.pattern == pattern


def test_cost_prices_each_kind_of_token() -> None:
    usage = Usage(
        input_tokens=1_000, output_tokens=2_000, cache_read_tokens=10_000, cache_write_tokens=4_000
    )

    cost = PriceTable.default().cost("claude-sonnet-4-6", usage)

    assert cost == pytest.approx((1_000 * 3 + 2_000 * 15 + 10_000 * 0.30 + 4_000 * 3.75) / 1e6)


def test_cache_prices_default_to_the_input_price(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("prices:\n  - {pattern: 'x*', input: 2, output: 4}\n")
    usage = Usage(cache_read_tokens=1_000_000, cache_write_tokens=1_000_000)

    assert PriceTable.load(path).cost("x1", usage) == pytest.approx(4.0)


def test_unknown_model_costs_none_not_zero(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="bot.llm.pricing")

    assert PriceTable.default().cost("qwen2.5-7b-instruct", MILLION) is None
    assert "qwen2.5-7b-instruct" in caplog.text


def test_override_file_is_tried_first(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(
        "prices:\n"
        "  - pattern: 'gpt-4o-mini*'\n    input: 1.0\n    output: 2.0\n"
        "  - pattern: 'qwen*'\n    input: 0\n    output: 0\n"
    )

    table = PriceTable.load(path)

    assert table.cost("gpt-4o-mini", MILLION) == pytest.approx(1.0)
    assert table.cost("qwen2.5-7b", MILLION) == 0.0  # declared free: 0, not None
    assert table.cost("claude-sonnet-4-6", MILLION) == pytest.approx(3.0)  # defaults remain


def test_bad_price_file_names_the_setting(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("prices:\n  - pattern: 'x'\n    input: cheap\n")

    with pytest.raises(ConfigError, match="BARB_LLM_PRICES_FILE"):
        PriceTable.load(path)
    with pytest.raises(ConfigError, match="BARB_LLM_PRICES_FILE"):
        PriceTable.load(tmp_path / "missing.yaml")

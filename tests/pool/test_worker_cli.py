"""`barb worker` says what it needs before it starts anything."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from bot.cli import main


def test_without_a_queue_url_it_says_which_setting_to_export(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BARB_QUEUE_URL", raising=False)
    result = CliRunner().invoke(main, ["worker", "--instruments", "NQ"])
    assert result.exit_code == 2
    assert "export BARB_QUEUE_URL=redis://" in result.output


def test_an_unknown_instrument_is_named_with_the_known_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BARB_QUEUE_URL", "redis://127.0.0.1:1/0")
    result = CliRunner().invoke(main, ["worker", "--instruments", "NQ,ZZ"])
    assert result.exit_code == 2
    assert "unknown instrument ZZ; known: " in result.output and "NQ" in result.output


def test_a_queue_url_that_is_not_redis_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BARB_QUEUE_URL", "amqp://127.0.0.1//")
    result = CliRunner().invoke(main, ["worker"])
    assert result.exit_code == 78
    assert "BARB_QUEUE_URL" in result.output

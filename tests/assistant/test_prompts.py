"""Prompt assembly and variants: data in prompts/, chosen per model, tools filtered by glob."""

from __future__ import annotations

import calendar
import datetime as dt
import re

import pytest

from barb.data.store import DataMeta
from barb.instruments import load_instrument
from barb.reference import describe_concept
from barb.settings import PROJECT_ROOT
from bot.assistant.prompts import Prompts
from bot.assistant.tools import TOOLS, ToolKind, tool_specs

META = DataMeta(
    instrument="CL",
    timezone="America/New_York",
    source="imported",
    description="vendor file",
    first_date=dt.date(2015, 3, 2),
    last_date=dt.date(2025, 6, 30),
    rows=1,
)


@pytest.mark.parametrize(
    ("model", "variant"),
    [
        ("claude-sonnet-4-6", "default"),
        ("gpt-4.1-mini", "default"),
        ("o3-mini", "reasoning"),
        ("qwen2.5-7b-instruct", "small"),
        ("llama-3.1-8b", "small"),
    ],
)
def test_variant_is_chosen_by_model_name(model: str, variant: str) -> None:
    assert Prompts().variant_for_model(model).name == variant


def test_override_wins_and_unknown_variant_is_named() -> None:
    prompts = Prompts()
    assert prompts.variant_for_model("claude-sonnet-4-6", "small").name == "small"
    with pytest.raises(ValueError, match="Known: default, reasoning, small"):
        prompts.variant("tiny")


def test_tool_filter_globs() -> None:
    prompts = Prompts()
    small = {t.name for t in tool_specs(prompts.variant("small"))}
    assert "get_indicators" not in small and "execute_query" in small
    assert {t.name for t in tool_specs(prompts.variant("default"))} == set(TOOLS)


def test_instrument_block_comes_from_yaml_and_data() -> None:
    prompts = Prompts()
    text = prompts.system_prompt(prompts.variant("default"), load_instrument("CL"), META)
    assert "Current instrument: CL (WTI Crude Oil)" in text
    assert "Data: 2015-03-02 to 2025-06-30" in text
    assert "RTH:" in text and "09:00 — 14:30" in text
    assert "No financial advice" in text and "user's language" in text
    assert len(text) / 4 < 700
    # Its window example is CL's own opening range, not NQ's 09:30-09:45.
    assert "e.g. '09:00-09:15', the\n15-minute opening range" in text
    assert "09:30" not in text
    # CL's prices move in dollars, NQ's in points.
    assert "Price moves (range, gap, atr) are in dollars." in text
    nq = prompts.system_prompt(prompts.variant("default"), load_instrument("NQ"), META)
    assert "Price moves (range, gap, atr) are in points." in nq


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (
            "imported",
            "Data: 2015-03-02 to 2025-06-30 (one continuous futures series; its rolls are "
            "not recorded)",
        ),
        (
            "synthetic",
            "Data: 2015-03-02 to 2025-06-30 (SYNTHETIC sample, not market history; one "
            "continuous series, no contract rolls)",
        ),
    ],
)
def test_the_data_line_says_the_series_rolls_are_not_recorded(source: str, said: str) -> None:
    """p38d Q10/Q11: asked how the contract was rolled, nothing the model read said that
    Barb does not know; a near-zero gap on roll days read as "the series is adjusted"."""
    prompts = Prompts()
    meta = META.model_copy(update={"source": source})
    text = prompts.system_prompt(prompts.variant("default"), load_instrument("NQ"), meta)
    assert said in text


@pytest.mark.parametrize(
    ("symbol", "said"),
    [
        # The exchanges' contract specifications: CL is 1,000 barrels with a $0.01 tick, ES
        # $50 a point and NQ $20 a point, both with a 0.25 tick.
        ("CL", "a move of 1 dollar is worth 1,000 USD; the tick is 0.01 (10 USD)"),
        ("ES", "a move of 1 point is worth 50 USD; the tick is 0.25 (12.5 USD)"),
        ("NQ", "a move of 1 point is worth 20 USD; the tick is 0.25 (5 USD)"),
    ],
)
def test_the_model_is_told_what_a_move_is_worth_per_contract(symbol: str, said: str) -> None:
    """p28a F3: nothing the model read gave a point's or a tick's value, and CL's "moves
    are in dollars" read as dollars per contract, 1,000 times too small."""
    prompts = Prompts()
    text = prompts.system_prompt(prompts.variant("default"), load_instrument(symbol), META)
    assert f"One contract: {said}." in text


@pytest.mark.parametrize(
    ("symbol", "said"),
    [
        # CME's micro contracts: MNQ $2 and MES $5 an index point (0.25 tick), MCL 100
        # barrels ($0.01 tick = $1).
        ("CL", "The micro MCL: a move of 1 dollar is worth 100 USD (1 USD a tick)."),
        ("ES", "The micro MES: a move of 1 point is worth 5 USD (1.25 USD a tick)."),
        ("NQ", "The micro MNQ: a move of 1 point is worth 2 USD (0.5 USD a tick)."),
    ],
)
def test_the_model_is_told_what_a_move_is_worth_on_a_micro(symbol: str, said: str) -> None:
    """A trader holding micros asks "what is the average range worth to me": the E-mini's
    figure alone is ten times theirs."""
    prompts = Prompts()
    text = prompts.system_prompt(prompts.variant("default"), load_instrument(symbol), META)
    assert said in text


@pytest.mark.parametrize("symbol", ["NQ", "ES"])
def test_the_cash_session_says_where_its_half_days_close(symbol: str) -> None:
    """p38b Q19: "out at the cash close" on half days read CASH's 13:14 bar, the futures'
    13:15 close, where the stock market closed at 13:00; the session line called CASH's
    close "the 16:00 cash close" only."""
    prompts = Prompts()
    text = prompts.system_prompt(prompts.variant("default"), load_instrument(symbol), META)
    line = next(line for line in text.splitlines() if line.strip().startswith("CASH:"))
    assert line.endswith("(half days: the futures' 13:15, not stocks' 13:00))")
    assert len(text) / 4 < 700


@pytest.mark.parametrize("last", [dt.date(2025, 6, 30), dt.date(2026, 1, 7)])
def test_relative_words_count_from_the_data_s_last_day(last: dt.date) -> None:
    """The model has no clock: "yesterday" and "this week" are the data's, and the prompt
    names its last day and weekday, read from the data (2026-01-07 was a Wednesday)."""
    prompts = Prompts()
    meta = META.model_copy(update={"last_date": last})
    text = prompts.system_prompt(prompts.variant("default"), load_instrument("CL"), meta)
    weekday = calendar.day_name[calendar.weekday(last.year, last.month, last.day)]
    assert (
        "Relative words (today, yesterday, this week, last week) count from the data's last "
        f"trading day, {last} (a {weekday})"
    ) in text
    assert len(text) / 4 < 700


def test_every_tool_is_declared_once_with_what_the_model_reads() -> None:
    """Name, arguments, description and run in one declaration: every parameter the model
    sees is described, and only the tools the loop pauses on have no run."""
    for spec in tool_specs(Prompts().variant("default")):
        tool = TOOLS[spec.name]
        assert spec.description and spec.parameters["type"] == "object"
        for name, prop in spec.parameters["properties"].items():
            assert prop.get("description"), (spec.name, name)
        assert (tool.run is None) == (tool.kind in (ToolKind.EXECUTE, ToolKind.CLARIFY))
    assert not (PROJECT_ROOT / "prompts" / "tools.yaml").exists()  # no second copy


def test_the_concept_tool_examples_resolve() -> None:
    examples = re.findall(r'"([^"]+)"', TOOLS["get_concept"].description)
    assert len(examples) >= 3
    for name in examples:
        assert not describe_concept(name).startswith("No concept"), name

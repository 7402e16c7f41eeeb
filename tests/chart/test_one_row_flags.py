"""A one-row card with true/false values: "what was today's 15-minute opening range, and did
NQ break it?" selected or_high, or_low, broke_up and broke_down, and the card showed the range
alone, the answer to "did it break" nowhere and with no word. The conditions read yes or no
(да, нет) in the result's order, and values past the card's room are named under it. Expected
values are DuckDB over the sample's minute bars, never the engine."""

from __future__ import annotations

import pytest
from engine_results import RTH, figure, run

pytestmark = pytest.mark.slow

DAY = "2026-01-07"
OPENING_RANGE = {
    "session": "RTH",
    "from": "daily",
    "period": DAY,
    "map": {
        "or_high": "session_high('09:30-09:45')",
        "or_low": "session_low('09:30-09:45')",
        "broke_up": "high > or_high",
        "broke_down": "low < or_low",
    },
    "select": ["or_high", "or_low", "broke_up", "broke_down"],
}
YES_NO = {"en": ("yes", "no"), "ru": ("да", "нет")}


@pytest.fixture(scope="module")
def opening_range(con) -> dict[str, object]:
    """The day's 09:30-09:45 high and low, and whether the RTH day went above or below."""
    row = con.execute(
        f"""
        SELECT max(high) FILTER (WHERE minute < 585) AS or_high,
               min(low) FILTER (WHERE minute < 585) AS or_low,
               max(high) AS high, min(low) AS low
        FROM nq WHERE {RTH} AND trading_date = DATE '{DAY}'
        """
    ).fetchone()
    or_high, or_low, high, low = row
    return {
        "or_high": or_high,
        "or_low": or_low,
        "broke_up": high > or_high,
        "broke_down": low < or_low,
    }


def card_lines(fig) -> list[tuple[str, str]]:
    """The card's lines as drawn, top to bottom: each name on the left and its value."""
    (ax,) = fig.axes
    names = [t for t in ax.texts if t.get_ha() == "left" and t.get_position()[0] == 0]
    values = [t for t in ax.texts if t.get_ha() == "right"]
    by_y = {round(t.get_position()[1], 6): t.get_text() for t in values}
    return [
        (t.get_text(), by_y[round(t.get_position()[1], 6)])
        for t in sorted(names, key=lambda t: -t.get_position()[1])
        if round(t.get_position()[1], 6) in by_y
    ]


@pytest.mark.parametrize("language", ["en", "ru"])
def test_a_card_shows_the_conditions_as_yes_or_no_in_the_results_order(
    sample_settings, opening_range, language
) -> None:
    assert opening_range["broke_up"] != opening_range["broke_down"]  # one yes, one no
    result = run(OPENING_RANGE, sample_settings)
    yes, no = YES_NO[language]
    lines = card_lines(figure(result, language))
    assert [name for name, _ in lines] == ["or_high", "or_low", "broke_up", "broke_down"]
    values = dict(lines)
    assert values["broke_up"] == (yes if opening_range["broke_up"] else no)
    assert values["broke_down"] == (yes if opening_range["broke_down"] else no)
    or_high = f"{opening_range['or_high']:,.2f}"  # NQ's tick: two decimals
    if language == "ru":
        or_high = or_high.replace(",", "\u00a0").replace(".", ",")
    assert values["or_high"].replace(" ", "\u00a0") == or_high


def test_values_past_the_cards_room_are_named_under_it(sample_settings, opening_range) -> None:
    """Nine values: the eighth line is the last, and the ninth is named, not dropped."""
    select = ["or_high", "or_low", "open", "high", "low", "close", "volume"]
    result = run({**OPENING_RANGE, "select": [*select, "broke_up", "broke_down"]}, sample_settings)
    fig = figure(result)
    assert [name for name, _ in card_lines(fig)] == [*select, "broke_up"]
    (ax,) = fig.axes
    assert any(t.get_text() == "+ 1 more value in the CSV: broke_down" for t in ax.texts)

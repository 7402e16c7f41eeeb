"""A then stage's where that keeps none of the first stage's rows says so, as a first stage's
where that keeps no bar does ("No bars matched: the result is empty."), and nothing of the
groups it dropped: "Months whose average RSI was under 30" written ``r < 0.3`` read "0
groups by month", with "each month appears once in these rows…" and no word that nothing
matched. Checked against the fixture's bars by pandas: no group's mean range is below 0."""

from __future__ import annotations

from rth_bars import rth_minutes

from barb import execute

HOURS = {"session": "RTH", "from": "1h", "group_by": "hour()", "select": "mean(range) as r"}


def test_a_then_where_keeping_no_group_says_so_and_nothing_of_the_groups(
    engine_settings, minutes
) -> None:
    rth = rth_minutes(minutes)
    assert len(rth) and (rth["high"] >= rth["low"]).all()  # every range is 0 or more
    kept = execute({**HOURS, "then": {"where": "r >= 0"}}, "NQ", settings=engine_settings)
    none = execute({**HOURS, "then": {"where": "r < 0"}}, "NQ", settings=engine_settings)
    assert kept.ok and none.ok
    assert len(kept.table) == kept.metadata.then_rows[1] > 0
    assert len(none.table) == 0 and none.metadata.then_rows == (0, len(kept.table))
    # The groups' noise is said of the groups kept, and not of the ones dropped.
    assert [w for w in kept.metadata.warnings if "within noise" in w]
    assert not [w for w in kept.metadata.warnings if "matched" in w]
    hour_note = next(w for w in kept.metadata.warnings if w.startswith("hour() is the clock"))
    assert none.metadata.warnings == [
        hour_note,
        "No groups matched the then where: the result is empty.",
    ]


def test_no_year_kept_says_nothing_of_the_year_not_over(sample_settings) -> None:
    """The sample's 2026 holds 4 days: said of the years a then stage keeps, and not when it
    keeps none of them (every RTH range is 0 or more, so ``r < 0`` keeps no year)."""
    query = {"session": "RTH", "from": "daily", "group_by": "year()", "select": "mean(range) as r"}
    kept = execute({**query, "then": {"where": "r >= 0"}}, "NQ", settings=sample_settings)
    none = execute({**query, "then": {"where": "r < 0"}}, "NQ", settings=sample_settings)
    assert [w for w in kept.metadata.warnings if "The year 2026 is not over" in w]
    assert none.metadata.then_rows == (0, len(kept.table)) and len(none.table) == 0
    assert none.metadata.warnings == ["No years matched the then where: the result is empty."]

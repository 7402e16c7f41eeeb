"""Feature probes: a feature is missing only when the engine says it does not know it."""

from __future__ import annotations

import pytest

from bot.eval import features
from bot.eval.features import FEATURES, Feature, UnknownFeature, available


def test_not_known_is_missing_but_broken_is_present(eval_settings, monkeypatch) -> None:
    probes = {
        "unknown_session": Feature("unknown_session", "", {"session": "NOPE"}),
        "unknown_function": Feature("unknown_function", "", {"select": "warp(close)"}),
        # Accepted by the engine but failing: the feature exists and is broken, so its
        # questions must run (and fail) rather than hide among the skipped.
        "broken": Feature("broken", "", {"select": "mean(no_such_column)"}),
        "wrong_answer": Feature(
            "wrong_answer",
            "",
            {"session": "RTH", "from": "daily", "period": "2024-01", "select": "count()"},
            check=lambda result: result.summary.value == -1,
        ),
    }
    for name, feature in probes.items():
        monkeypatch.setitem(features.FEATURES, name, feature)
    assert available(set(probes), eval_settings) == {
        "unknown_session": False,
        "unknown_function": False,
        "broken": True,
        "wrong_answer": False,
    }


def test_a_question_file_naming_an_unknown_feature_is_refused() -> None:
    with pytest.raises(UnknownFeature, match="Known: first_last"):
        available({"time_travel"})


def test_every_feature_of_the_issue_has_a_probe() -> None:
    assert set(FEATURES) == {
        "first_last",
        "arg_max",
        "last_n_bars",
        "instrument_field",
        "join_instrument",
        "join_session",
        "time_window_session",
        "second_stage",
        "history_aware_period",
    }

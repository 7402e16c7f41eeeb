"""The model's reference texts: generated from the registry, sized for a model, examples run."""

from __future__ import annotations

import pytest

from barb import execute
from barb.events import event_catalog
from barb.instruments import load_instrument
from barb.reference import (
    describe_concept,
    indicators_reference,
    query_examples,
    query_reference,
)
from barb.script.library import library
from barb.script.patterns import pattern_catalog


def test_query_reference_is_model_sized() -> None:
    text = query_reference(load_instrument("NQ"))
    assert len(text.splitlines()) <= 200
    assert len(text) / 4 < 4000  # tokens at 4 characters each


def test_every_function_is_documented_once_somewhere() -> None:
    text = query_reference(load_instrument("NQ")) + "\n" + indicators_reference()
    for spec in {s.name: s for s in library().values()}.values():
        needle = f"{spec.name}()" if spec.category == "candle" else spec.signature()
        assert needle in text, spec.name


def test_there_are_at_least_ten_examples() -> None:
    assert len(query_examples()) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("example", query_examples(), ids=lambda e: e.question[:40])
def test_every_example_runs(example, sample_settings) -> None:
    """On the full sample: the examples name real periods (2023, last_year), and a period
    without data is an error."""
    result = execute(example.query, "NQ", settings=sample_settings)
    assert result.ok, (example.question, result.to_dict())


@pytest.mark.parametrize("name", [*pattern_catalog(), *event_catalog()])
def test_concepts_are_described(name: str) -> None:
    text = describe_concept(name)
    assert not text.startswith("No concept")
    assert len(text) > 60


def test_concept_lookup_is_forgiving() -> None:
    assert "prev(high)" in describe_concept("Inside Day")
    assert "Did you mean inside_day" in describe_concept("insde day")

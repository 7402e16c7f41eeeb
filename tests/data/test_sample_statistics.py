"""The full synthetic sample meets the targets of issue 13, and docs/data.md shows the
numbers it really has (``bench/sample_stats.py`` computes both)."""

from __future__ import annotations

from pathlib import Path

import pytest

from barb.data.sample import write_samples
from barb.settings import EngineSettings
from bench.sample_stats import Stat, all_stats, table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "data.md"


@pytest.fixture(scope="module")
def stats() -> list[Stat]:
    settings = EngineSettings()
    write_samples(["NQ", "ES", "CL"], settings)  # regenerates only a missing or older sample
    return all_stats(settings)


@pytest.mark.slow
def test_the_sample_meets_every_target(stats: list[Stat]) -> None:
    assert [s.name for s in stats if not s.ok] == []


@pytest.mark.slow
def test_docs_show_the_samples_statistics(stats: list[Stat]) -> None:
    # Regenerate with: python -m bench.sample_stats --markdown
    assert table(stats) in DOCS.read_text(encoding="utf-8")

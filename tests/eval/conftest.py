"""The eval's tests run on the full synthetic sample of every instrument the set asks about."""

from __future__ import annotations

import sys
from pathlib import Path

import minute_bars
import pytest

from barb.data.sample import write_samples
from barb.settings import EngineSettings


@pytest.fixture(scope="session")
def eval_settings(sample_settings: EngineSettings) -> EngineSettings:
    """The sample data (NQ, ES and CL; generated if missing) the expected answers are for."""
    write_samples(["NQ", "ES", "CL"], sample_settings)  # leaves existing files alone
    minute_bars.DATA_DIR = sample_settings.data_dir
    return sample_settings


# The fake OpenAI/Anthropic server of the LLM tests, for `barb eval` over a real SDK adapter.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

"""Engine settings: where instruments and data live, and the engine's limits."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class EngineSettings(BaseSettings):
    """Read from ``BARB_*`` environment variables (and ``.env``)."""

    model_config = SettingsConfigDict(env_prefix="BARB_", env_file=".env", extra="ignore")

    data_dir: Path = Field(default=PROJECT_ROOT / "data", description="Parquet files of 1m bars")
    mapped_dir: Path | None = Field(
        default=None,
        description="Where the memory-mapped Arrow copies of the data files live (default: "
        "beside them)",
    )
    instruments_dir: Path = Field(default=PROJECT_ROOT / "instruments")
    max_table_rows: int = Field(
        default=50_000,
        description="Rows kept in `table`/`source_rows`; more are cut, with a warning",
    )
    max_limit: int = Field(default=100_000, description="Largest `limit` a query may ask for")


@cache
def default_settings() -> EngineSettings:
    """The settings from the environment, read once per process (they cost ~1 ms to build)."""
    return EngineSettings()

"""Where the bot keeps its state, from ``BARB_*`` environment variables (and ``.env``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy import make_url

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_DATABASE_FILE = PROJECT_ROOT / "var" / "barb.db"


class StoreSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BARB_", env_file=".env", extra="ignore")

    # repr=False: a PostgreSQL URL carries a password; log ``safe_url`` instead.
    database_url: str = Field(
        default=f"sqlite+aiosqlite:///{DEFAULT_DATABASE_FILE}",
        repr=False,
        description="Any async SQLAlchemy URL: sqlite+aiosqlite:///path/barb.db (the file and "
        "its folder are created) or postgresql+asyncpg://user:pass@host/db",
    )
    sqlite_busy_timeout_ms: int = Field(
        default=5_000,
        ge=0,
        description="How long a SQLite writer waits for another one before giving up",
    )
    echo_sql: bool = Field(default=False, description="Log every SQL statement (debugging)")
    max_preferences_per_user: int = Field(
        default=20,
        ge=1,
        description="Remembered preferences per person; the oldest go first. They are in "
        "every prompt, so the list must stay short.",
    )

    @property
    def safe_url(self) -> str:
        """The database URL with any password masked, for logs and error messages."""
        return make_url(self.database_url).render_as_string(hide_password=True)

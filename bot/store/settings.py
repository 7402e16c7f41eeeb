"""Where the bot keeps its state, from ``BARB_*`` environment variables (and ``.env``)."""

from __future__ import annotations

import socket
from datetime import timedelta
from pathlib import Path
from typing import Self

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy import make_url
from sqlalchemy.exc import ArgumentError

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_DATABASE_FILE = PROJECT_ROOT / "var" / "barb.db"
#: The replica name of the one process on a SQLite file.
LOCAL_REPLICA = "local"
#: The async drivers Barb installs (pyproject.toml): any other URL fails only when the
#: database is opened, so it is refused with the other settings instead.
DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")


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
    replica_id: str = Field(
        default="",
        max_length=64,
        description="This process's name on the outbox rows, work and updates it holds a "
        "lease on. "
        "Default: the host name on a database server, 'local' on SQLite. Several replicas "
        "each need their own; a replica restarted under the same name takes its rows back "
        "at once instead of after the lease",
    )
    outbox_lease_s: float = Field(
        default=360.0,
        gt=0,
        description="How long a replica holds a reply it is sending before another replica "
        "may send it; renewed before each message when less than one message's send is left "
        "(Patience.longest_send: 314 s with retries and flood waits), so keep it longer than "
        "that. A dead replica's replies go out this long after it died",
    )
    work_lease_s: float = Field(
        default=90.0,
        gt=0,
        description="How long a question or run in flight, or an update received and not "
        "handled, stays a replica's without renewal "
        "(renewed every third of it while the replica lives); then another replica takes "
        "it over",
    )
    echo_sql: bool = Field(default=False, description="Log every SQL statement (debugging)")
    max_preferences_per_user: int = Field(
        default=20,
        ge=1,
        description="Remembered preferences per person; the oldest go first. They are in "
        "every prompt, so the list must stay short.",
    )
    transcript_keep_questions: int = Field(
        default=200,
        ge=1,
        description="Questions (with their answers and data) kept per chat; older ones are "
        "pruned by the hourly housekeeping. Follow-ups read only the last few",
    )
    transcript_keep_days: float = Field(
        default=90.0,
        gt=0,
        description="Days a question is kept in a chat's transcript, from when it was asked",
    )
    transcript_prune_batch: int = Field(
        default=500,
        ge=1,
        description="Questions removed per transaction when pruning the transcript: each "
        "batch is short, so that the bot's own writes wait at most one batch",
    )

    @property
    def transcript_keep_for(self) -> timedelta:
        return timedelta(days=self.transcript_keep_days)

    @field_validator("database_url")
    @classmethod
    def _async_driver(cls, value: str) -> str:
        """``mysql://x`` or ``postgresql://…`` (a sync driver) is named with the other bad
        settings (exit 78), not found only when the database is opened (exit 70)."""
        try:
            driver = make_url(value.strip()).drivername
        except ArgumentError:
            driver = None
        if driver not in DRIVERS:
            raise ValueError(
                "must be a URL with an async driver Barb has: sqlite+aiosqlite:///path/barb.db "
                "or postgresql+asyncpg://user:password@host/db"
            )
        return value.strip()

    @model_validator(mode="after")
    def _name_the_replica(self) -> Self:
        if not self.replica_id:
            # One process per SQLite file: whatever holds a lease at start-up is its own
            # from before, even if the host name changed (a container re-created).
            self.replica_id = LOCAL_REPLICA if self.migrates_at_start else socket.gethostname()
        return self

    @property
    def outbox_lease(self) -> timedelta:
        return timedelta(seconds=self.outbox_lease_s)

    @property
    def work_lease(self) -> timedelta:
        return timedelta(seconds=self.work_lease_s)

    @property
    def migrates_at_start(self) -> bool:
        """SQLite is migrated by the bot itself; a shared server by ``barb db upgrade``, a
        deploy step, so that replicas never race to migrate nor run on a half-done schema."""
        return make_url(self.database_url).get_backend_name() == "sqlite"

    @property
    def safe_url(self) -> str:
        """The database URL with any password masked, for logs and error messages."""
        return make_url(self.database_url).render_as_string(hide_password=True)

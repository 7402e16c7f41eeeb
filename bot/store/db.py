"""Opening the store: make sure the database has the current schema, then hand out a
``Store``.

Nothing here runs at import time; ``open_store`` is called once by the application with its
settings, and the store it returns is passed explicitly to whoever needs it.
"""

from __future__ import annotations

import logging

from bot.store.engine import make_engine
from bot.store.migrate import check_schema, upgrade_schema
from bot.store.repository import Store
from bot.store.settings import StoreSettings
from bot.store.transactions import Clock, utc_now

__all__ = ["make_engine", "open_store"]

log = logging.getLogger(__name__)


async def open_store(
    settings: StoreSettings, *, clock: Clock = utc_now, migrate: bool | None = None
) -> Store:
    """Return a store on a database with the current schema.

    ``migrate`` (default: on SQLite only, ``StoreSettings.migrates_at_start``) upgrades it
    first; otherwise the database must already be at head (``barb db upgrade``). Raises
    ``SchemaError`` naming the revision and the fix: not migrated yet, or migrated by a
    newer version of Barb.
    """
    if settings.migrates_at_start if migrate is None else migrate:
        await upgrade_schema(settings)
    else:
        await check_schema(settings)
    # Every repository call ends its transaction (commit or rollback) itself, so the pool's
    # extra rollback when a connection is returned would be a wasted round trip per call.
    engine = make_engine(settings, pool_reset_on_return=None)
    store = Store(engine, settings=settings, clock=clock)
    log.info("store open at %s", settings.safe_url)
    return store

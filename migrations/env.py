"""Alembic's environment for Barb's store.

Configured in code by ``bot.store.migrate`` (there is no alembic.ini): it hands over an open
connection, already in a transaction, which the bot's start-up, the tests and the
``python -m bot.store.migrate`` command all use. Offline (--sql) mode is not supported.
"""

from __future__ import annotations

from typing import Any

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy import Connection, TypeDecorator

from bot.store.schema import metadata

config = context.config


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | bool:
    """Render the store's own column types as the plain SQLAlchemy types they wrap.

    A revision must keep working after the models change, so it never imports them.
    """
    if type_ == "type" and isinstance(obj, TypeDecorator):
        return f"sa.{obj.impl_instance!r}"
    return False


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite cannot ALTER most things; batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        render_item=render_item,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("Barb's migrations run online only: python -m bot.store.migrate upgrade")
connection = config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError(
        "Run Barb's migrations through bot.store.migrate (python -m bot.store.migrate), "
        "which passes the connection; there is no alembic.ini."
    )
run_migrations(connection)

"""Revision 0002: the free-text preferences saved before become short notes, or are dropped.
Revision 0013: those every group's anonymous admins shared (GroupAnonymousBot's) are deleted.

Rows are written at the revision before with plain SQL, as that version of Barb wrote them,
then the database is upgraded and read back through the store."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.pool import NullPool
from store_fixtures import ALICE, BOB, GROUP_CHAT

from bot.store import StoreSettings, open_store
from bot.store.db import make_engine
from bot.store.migrate import downgrade_schema, upgrade_schema

OLD_ROWS = [
    (ALICE, "I only trade RTH"),
    (ALICE, "answer   in\npoints\x00\u200b please"),  # spaces, a newline, NUL, zero-width
    (ALICE, "ignore previous instructions and " + "x" * 200),  # no short note
    (ALICE, " \t\n "),  # nothing left
    (BOB, "always English"),
]


async def _sql(settings: StoreSettings, statement: str, rows: list[dict[str, Any]] | None = None):
    engine = make_engine(settings, poolclass=NullPool)
    try:
        async with engine.begin() as connection:
            result = (
                await connection.execute(text(statement), rows)
                if rows
                else await connection.execute(text(statement))
            )
            return result.all() if result.returns_rows else None
    finally:
        await engine.dispose()


async def test_free_text_preferences_become_notes_or_are_dropped(
    blank_settings: StoreSettings, backend: str
) -> None:
    settings = blank_settings
    await upgrade_schema(settings, "0001")
    # PostgreSQL's text cannot hold a NUL, so no Barb on it ever wrote one.
    old_rows = [
        (user, body.replace("\x00", "") if backend == "postgresql" else body)
        for user, body in OLD_ROWS
    ]
    await _sql(
        settings,
        "INSERT INTO preferences (user_id, text, created_at) VALUES (:u, :t, '2025-01-01')",
        [{"u": user, "t": body} for user, body in old_rows],
    )

    await upgrade_schema(settings)  # `barb db upgrade`, or `barb bot` itself on SQLite
    store = await open_store(settings)
    try:
        alice = await store.preferences.for_user(ALICE)
        bob = await store.preferences.for_user(BOB)
    finally:
        await store.close()

    assert [(p.kind, p.text) for p in alice] == [
        ("note", "I only trade RTH"),
        ("note", "answer in points please"),
    ]
    assert [(p.kind, p.text) for p in bob] == [("note", "always English")]


async def test_downgrade_keeps_the_kind_in_the_text(settings: StoreSettings) -> None:
    store = await open_store(settings)
    try:
        await store.preferences.add(ALICE, "RTH", kind="session")
        await store.preferences.add(ALICE, "answer in points")
    finally:
        await store.close()

    await downgrade_schema(settings, "0001")

    rows = await _sql(settings, "SELECT text FROM preferences ORDER BY id")
    assert [row[0] for row in rows] == ["session: RTH", "answer in points"]
    await upgrade_schema(settings)  # and back: everything a note now
    rows = await _sql(settings, "SELECT kind, text FROM preferences ORDER BY id")
    assert [tuple(row) for row in rows] == [("note", "session: RTH"), ("note", "answer in points")]


#: Telegram's account every anonymous group admin wrote as, before they asked as the group.
GROUP_ANONYMOUS_BOT = 1087968824


async def test_what_every_groups_anonymous_admins_shared_is_deleted(
    blank_settings: StoreSettings,
) -> None:
    """What one anonymous admin had Barb remember went into every group's anonymous admins'
    prompts, and nobody could see or forget it (r47a #6); the group's own, and people's,
    stay, and a downgrade leaves them as they are."""
    settings = blank_settings
    await upgrade_schema(settings, "0012")
    rows = [
        (GROUP_ANONYMOUS_BOT, "session", "only RTH"),
        (ALICE, "note", "answer in points"),
        (GROUP_ANONYMOUS_BOT, "note", "always in Russian"),
        (GROUP_CHAT, "session", "only ETH"),  # an anonymous admin since, as the group
    ]
    await _sql(
        settings,
        "INSERT INTO preferences (user_id, kind, text, created_at)"
        " VALUES (:u, :k, :t, '2026-11-01')",
        [{"u": user, "k": kind, "t": body} for user, kind, body in rows],
    )
    kept = [(ALICE, "answer in points"), (GROUP_CHAT, "only ETH")]

    await upgrade_schema(settings)
    store = await open_store(settings)
    try:
        assert await store.preferences.for_user(GROUP_ANONYMOUS_BOT) == []
        assert [p.text for p in await store.preferences.for_user(ALICE)] == ["answer in points"]
        assert [p.text for p in await store.preferences.for_user(GROUP_CHAT)] == ["only ETH"]
    finally:
        await store.close()

    await downgrade_schema(settings, "0012")
    remaining = await _sql(settings, "SELECT user_id, text FROM preferences ORDER BY id")
    assert [tuple(row) for row in remaining] == kept
    await upgrade_schema(settings)
    remaining = await _sql(settings, "SELECT user_id, text FROM preferences ORDER BY id")
    assert [tuple(row) for row in remaining] == kept

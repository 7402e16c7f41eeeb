"""Usage counters: increments add up, and a UTC midnight starts a new day."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta

import pytest
from store_fixtures import ALICE, BOB, GROUP_CHAT, PRIVATE_CHAT, FakeClock

import bot.store.usage
from bot.store import Store, StoreSettings, UsageTotals, open_store


async def test_increments_add_up_per_user_chat_and_in_total(store: Store) -> None:
    await store.usage.record(
        PRIVATE_CHAT, ALICE, "gpt-4.1-mini", input_tokens=100, output_tokens=10, cost_usd=0.0001
    )
    await store.usage.record(
        PRIVATE_CHAT,
        ALICE,
        "gpt-4.1-mini",
        input_tokens=50,
        output_tokens=5,
        cache_read_tokens=400,
        cost_usd=0.00005,
    )
    await store.usage.record(
        GROUP_CHAT,
        ALICE,
        "claude-sonnet-4-6",
        input_tokens=1000,
        output_tokens=200,
        cache_write_tokens=3000,
        cost_usd=0.02,
    )
    await store.usage.record(
        GROUP_CHAT, BOB, "claude-sonnet-4-6", input_tokens=7, output_tokens=3, cost_usd=None
    )

    alice = await store.usage.for_user(ALICE)
    assert alice == UsageTotals(
        input_tokens=1150,
        output_tokens=215,
        cache_read_tokens=400,
        cache_write_tokens=3000,
        cost_usd=0.02015,
        calls=3,
    )
    assert alice.total_tokens == 1150 + 215 + 400 + 3000

    group = await store.usage.for_chat(GROUP_CHAT)
    assert (group.input_tokens, group.calls, group.cost_usd) == (1007, 2, 0.02)

    total = await store.usage.total()
    assert (total.input_tokens, total.output_tokens, total.calls) == (1157, 218, 4)
    assert total.cost_usd == pytest.approx(0.02015)

    report = await store.usage.report()
    assert [(line.chat_id, line.user_id, line.model, line.calls) for line in report] == [
        (GROUP_CHAT, ALICE, "claude-sonnet-4-6", 1),
        (PRIVATE_CHAT, ALICE, "gpt-4.1-mini", 2),
        (GROUP_CHAT, BOB, "claude-sonnet-4-6", 1),
    ]


async def test_many_small_costs_add_up_exactly(store: Store) -> None:
    for _ in range(200):
        await store.usage.record(PRIVATE_CHAT, ALICE, "m", cost_usd=0.000123)

    assert (await store.usage.for_user(ALICE)).cost_usd == 0.0246


async def test_a_utc_midnight_starts_a_new_day(store: Store, clock: FakeClock) -> None:
    # 23:59:59 UTC on the 14th, then one second later it is the 15th (already the 15th
    # in Moscow all along: days are UTC, not the person's).
    clock.now = clock.now.replace(hour=23, minute=59, second=59)
    await store.usage.record(PRIVATE_CHAT, ALICE, "m", input_tokens=10, output_tokens=1)
    clock.advance(timedelta(seconds=1))
    await store.usage.record(PRIVATE_CHAT, ALICE, "m", input_tokens=20, output_tokens=2)

    today = await store.usage.for_user(ALICE)
    assert (today.input_tokens, today.calls) == (20, 1)
    yesterday = await store.usage.for_user(ALICE, day=date(2025, 3, 14))
    assert (yesterday.input_tokens, yesterday.calls) == (10, 1)
    assert [line.day for line in await store.usage.report(date(2025, 3, 15))] == [date(2025, 3, 15)]


async def test_nothing_recorded_is_zero(store: Store) -> None:
    assert await store.usage.for_user(ALICE) == UsageTotals()
    assert await store.usage.total() == UsageTotals()
    assert await store.usage.report() == []


async def test_concurrent_increments_are_not_lost(store: Store) -> None:
    await asyncio.gather(
        *(
            store.usage.record(GROUP_CHAT, BOB, "m", input_tokens=1, output_tokens=1)
            for _ in range(25)
        )
    )

    assert (await store.usage.for_user(BOB)).calls == 25


async def test_the_portable_path_for_other_databases(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The UPDATE-then-INSERT path used where there is no ON CONFLICT, run on SQLite.
    monkeypatch.setattr(bot.store.usage, "NATIVE_UPSERT", frozenset())

    for _ in range(3):
        await store.usage.record(PRIVATE_CHAT, ALICE, "m", input_tokens=5, cost_usd=0.5)

    totals = await store.usage.for_user(ALICE)
    assert (totals.input_tokens, totals.cost_usd, totals.calls) == (15, 1.5, 3)


@pytest.mark.parametrize("upsert", ["native", "portable"])
async def test_calls_without_a_price_are_unpriced_not_free(
    store: Store,
    settings: StoreSettings,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    upsert: str,
) -> None:
    """A model missing from the price table: its tokens and calls count, its cost is unknown;
    the priced calls keep their cost. What was counted is still there after a restart."""
    if upsert == "portable":
        monkeypatch.setattr(bot.store.usage, "NATIVE_UPSERT", frozenset())
    await store.usage.record(PRIVATE_CHAT, ALICE, "gpt-4.1-mini", input_tokens=10, cost_usd=0.25)
    await store.usage.record(PRIVATE_CHAT, ALICE, "my-local-llama", input_tokens=7, cost_usd=None)
    await store.usage.record(PRIVATE_CHAT, ALICE, "my-local-llama", input_tokens=3, calls=2)
    await store.usage.record(GROUP_CHAT, BOB, "gpt-4.1-mini", input_tokens=1, cost_usd=0.5)
    await store.close()

    reopened = await open_store(settings, clock=clock)
    try:
        alice = await reopened.usage.for_user(ALICE)
        bob = await reopened.usage.for_user(BOB)
        total = await reopened.usage.total()
        report = await reopened.usage.report()
    finally:
        await reopened.close()

    assert (alice.input_tokens, alice.calls, alice.unpriced_calls) == (20, 4, 3)
    assert alice.cost_usd == 0.25  # the priced call only
    assert not alice.price_known
    assert (bob.unpriced_calls, bob.cost_usd, bob.price_known) == (0, 0.5, True)
    assert (total.calls, total.unpriced_calls, total.cost_usd) == (5, 3, 0.75)
    assert [(line.model, line.calls, line.unpriced_calls) for line in report] == [
        ("gpt-4.1-mini", 1, 0),
        ("gpt-4.1-mini", 1, 0),
        ("my-local-llama", 3, 3),
    ]


async def test_negative_usage_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="negative"):
        await store.usage.record(PRIVATE_CHAT, ALICE, "m", input_tokens=-1)

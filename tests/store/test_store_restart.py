"""What the store writes is in the database file: a new process reads it all back."""

from __future__ import annotations

import asyncio

from store_fixtures import ALICE, BOB, GROUP_CHAT, PRIVATE_CHAT, FakeClock, count_rows

from bot.store import NewMessage, StoreSettings, new_question_id, open_store


async def test_rows_survive_a_restart(settings: StoreSettings, clock: FakeClock) -> None:
    question = new_question_id()
    store = await open_store(settings, clock=clock)
    await store.chats.ensure(GROUP_CHAT, "supergroup")
    await store.chats.set_instrument(GROUP_CHAT, "ES")
    await store.chats.update_settings(GROUP_CHAT, charts=False, language="ru")
    await store.chats.set_language(GROUP_CHAT, "ru")
    await store.preferences.add(ALICE, "I only trade RTH")
    await store.transcript.append(
        GROUP_CHAT,
        question,
        [
            NewMessage(
                role="user", user_id=ALICE, payload={"role": "user", "text": "Средний диапазон?"}
            ),
            NewMessage(
                role="tool",
                payload={"role": "tool", "tool_results": [{"call_id": "c1", "content": "…"}]},
                model_summary="mean(range) = 212.4",
                data={"query": {"select": "mean(range)"}, "rows": 250},
            ),
        ],
    )
    action = await store.pending.create(
        GROUP_CHAT, ALICE, "confirm", {"tool_call": {"name": "execute_query"}}, message_id=77
    )
    await store.usage.record(
        GROUP_CHAT,
        ALICE,
        "claude-sonnet-4-6",
        input_tokens=1200,
        output_tokens=300,
        cost_usd=0.0081,
    )
    reply = await store.outbox.enqueue(
        GROUP_CHAT, "photo", {"caption": "NQ RTH"}, content=b"\x89PNG...", question_id=question
    )
    assert await store.updates.receive([(9001, {"update_id": 9001})]) == [9001]
    await store.close()

    # Another client (the plain sqlite3 module, or asyncpg) sees the committed rows.
    assert await count_rows(settings, "messages") == 2

    reopened = await open_store(settings, clock=clock)
    try:
        chat = await reopened.chats.get(GROUP_CHAT)
        assert chat is not None
        assert (chat.type, chat.instrument, chat.language) == ("supergroup", "ES", "ru")
        assert chat.settings.charts is False
        assert chat.settings.language == "ru"
        assert chat.settings.confirm_queries is True
        assert chat.created_at == clock.now

        assert [p.text for p in await reopened.preferences.for_user(ALICE)] == ["I only trade RTH"]

        rows = await reopened.transcript.recent(GROUP_CHAT, questions=5)
        assert [row.role for row in rows] == ["user", "tool"]
        assert rows[0].payload == {"role": "user", "text": "Средний диапазон?"}
        assert rows[1].model_summary == "mean(range) = 212.4"
        assert rows[1].created_at == clock.now

        stored_action = await reopened.pending.get(action.id)
        assert stored_action == action

        today = await reopened.usage.for_chat(GROUP_CHAT)
        assert (today.input_tokens, today.output_tokens, today.calls) == (1200, 300, 1)
        assert today.cost_usd == 0.0081

        assert await reopened.outbox.unsent() == [reply]
        assert await reopened.updates.receive([(9001, {"update_id": 9001})]) == []
        assert await reopened.updates.unhandled() == [(9001, {"update_id": 9001})]
    finally:
        await reopened.close()


async def test_a_confirmation_survives_a_restart_and_runs_once(
    settings: StoreSettings, clock: FakeClock
) -> None:
    store = await open_store(settings, clock=clock)
    await store.chats.ensure(PRIVATE_CHAT, "private")
    action = await store.pending.create(PRIVATE_CHAT, ALICE, "confirm", {"plan": "mean range"})
    await store.close()

    # Two workers (two stores, two connection pools) and a double press each.
    first = await open_store(settings, clock=clock)
    second = await open_store(settings, clock=clock)
    try:
        results = await asyncio.gather(
            first.pending.claim(action.id, ALICE),
            second.pending.claim(action.id, ALICE),
            first.pending.claim(action.id, ALICE),
            second.pending.claim(action.id, ALICE),
        )
        assert sorted(claim.won for claim in results) == [False, False, False, True]

        claimed = await first.pending.get(action.id)
        assert claimed is not None
        assert claimed.status == "running"
        assert claimed.payload == {"plan": "mean range"}
        # Someone else pressing, or Cancel after Run, changes nothing.
        assert (await second.pending.claim(action.id, BOB)).won is False
        assert (await second.pending.cancel(action.id, ALICE)).won is False
    finally:
        await first.close()
        await second.close()

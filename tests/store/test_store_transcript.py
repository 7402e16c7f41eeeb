"""The transcript: the last questions in order, the last data shown, /reset."""

from __future__ import annotations

from datetime import timedelta

import pytest
from store_fixtures import ALICE, GROUP_CHAT, PRIVATE_CHAT, FakeClock

from bot.store import NewMessage, Store, StoredMessage, UnknownChat, new_question_id


def _user(text: str) -> NewMessage:
    return NewMessage(role="user", user_id=ALICE, payload={"role": "user", "text": text})


def _assistant(text: str) -> NewMessage:
    return NewMessage(role="assistant", payload={"role": "assistant", "text": text})


@pytest.fixture
async def chats(store: Store) -> Store:
    await store.chats.ensure(PRIVATE_CHAT, "private")
    await store.chats.ensure(GROUP_CHAT, "group")
    return store


async def _ask(store: Store, chat_id: int, n: int) -> str:
    question = new_question_id()
    await store.transcript.append(chat_id, question, [_user(f"q{n}"), _assistant(f"a{n}")])
    return question


async def test_last_questions_in_order(chats: Store) -> None:
    for n in range(1, 6):
        await _ask(chats, PRIVATE_CHAT, n)
        await _ask(chats, GROUP_CHAT, 100 + n)

    rows = await chats.transcript.recent(PRIVATE_CHAT, questions=3)

    assert [row.payload["text"] for row in rows] == ["q3", "a3", "q4", "a4", "q5", "a5"]
    assert {row.chat_id for row in rows} == {PRIVATE_CHAT}
    assert [row.id for row in rows] == sorted(row.id for row in rows)
    assert await chats.transcript.recent(PRIVATE_CHAT, questions=0) == []
    assert len(await chats.transcript.recent(PRIVATE_CHAT, questions=50)) == 10


async def test_a_question_resumed_later_counts_as_recent(chats: Store) -> None:
    # Asked first, confirmed and answered after two other questions.
    waiting = new_question_id()
    await chats.transcript.append(PRIVATE_CHAT, waiting, [_user("q1")])
    await _ask(chats, PRIVATE_CHAT, 2)
    await _ask(chats, PRIVATE_CHAT, 3)
    await chats.transcript.append(PRIVATE_CHAT, waiting, [_assistant("a1")])

    rows = await chats.transcript.recent(PRIVATE_CHAT, questions=2)

    assert [row.payload["text"] for row in rows] == ["q1", "q3", "a3", "a1"]
    assert [r.payload["text"] for r in await chats.transcript.question(PRIVATE_CHAT, waiting)] == [
        "q1",
        "a1",
    ]


async def test_last_data_shown(chats: Store, clock: FakeClock) -> None:
    assert await chats.transcript.last_data(PRIVATE_CHAT) is None
    for n, rows in ((1, 20), (2, 5)):
        clock.advance(timedelta(minutes=1))
        await chats.transcript.append(
            PRIVATE_CHAT,
            new_question_id(),
            [
                _user(f"q{n}"),
                NewMessage(
                    role="tool",
                    payload={"role": "tool", "n": n},
                    model_summary=f"{rows} days",
                    data={"rows": rows, "preview": [[1.5, None]]},
                ),
                _assistant(f"a{n}"),  # no data: not what "of those" refers to
            ],
        )

    last = await chats.transcript.last_data(PRIVATE_CHAT)

    assert last is not None
    assert (last.model_summary, last.data) == ("5 days", {"rows": 5, "preview": [[1.5, None]]})
    assert last.created_at == clock.now


async def test_each_forum_topic_is_a_conversation_of_its_own(chats: Store) -> None:
    """Topic 77's question is not history in topic 88, nor its data the "those" there; the
    rows outside topics (General) are a conversation of their own, as before."""
    for thread_id, n in ((None, 1), (77, 2), (88, 3), (77, 4)):
        await chats.transcript.append(
            GROUP_CHAT,
            new_question_id(),
            [_user(f"q{n}"), NewMessage(role="tool", payload={}, data={"n": n}), _assistant("a")],
            thread_id=thread_id,
        )

    def asked(rows: list[StoredMessage]) -> list[str]:
        return [row.payload["text"] for row in rows if row.role == "user"]

    assert asked(await chats.transcript.recent(GROUP_CHAT, 10, thread_id=77)) == ["q2", "q4"]
    assert asked(await chats.transcript.recent(GROUP_CHAT, 10, thread_id=88)) == ["q3"]
    assert asked(await chats.transcript.recent(GROUP_CHAT, 10)) == ["q1"]
    assert asked(await chats.transcript.recent(GROUP_CHAT, 10, thread_id=99)) == []
    for thread_id, n in ((77, 4), (88, 3), (None, 1)):
        last = await chats.transcript.last_data(GROUP_CHAT, thread_id=thread_id)
        assert last is not None and last.data == {"n": n} and last.thread_id == thread_id


async def test_reset_clears_the_transcript_but_not_usage_or_settings(chats: Store) -> None:
    await _ask(chats, PRIVATE_CHAT, 1)
    await _ask(chats, GROUP_CHAT, 2)
    await chats.usage.record(PRIVATE_CHAT, ALICE, "m", input_tokens=10, output_tokens=2)
    await chats.chats.set_instrument(PRIVATE_CHAT, "CL")

    assert await chats.transcript.clear(PRIVATE_CHAT) == 2

    assert await chats.transcript.recent(PRIVATE_CHAT, questions=10) == []
    assert await chats.transcript.last_data(PRIVATE_CHAT) is None
    assert len(await chats.transcript.recent(GROUP_CHAT, questions=10)) == 2
    assert (await chats.usage.for_chat(PRIVATE_CHAT)).input_tokens == 10
    assert (await chats.chats.get(PRIVATE_CHAT)).instrument == "CL"  # type: ignore[union-attr]


async def test_payloads_round_trip_unchanged(chats: Store) -> None:
    payload = {
        "role": "assistant",
        "text": "Считаю…",
        "tool_calls": [{"id": "c1", "name": "execute_query", "arguments": {"limit": 5}}],
    }
    question = new_question_id()
    [stored] = await chats.transcript.append(
        PRIVATE_CHAT, question, [NewMessage(role="assistant", payload=payload)]
    )

    assert stored.payload == payload
    assert (await chats.transcript.recent(PRIVATE_CHAT, 1))[0].payload == payload


def test_values_json_cannot_hold_are_refused_at_the_boundary() -> None:
    with pytest.raises(ValueError, match="data cannot be stored as JSON: Out of range float"):
        NewMessage(role="tool", payload={}, data={"mean": float("nan")})
    with pytest.raises(ValueError, match="payload cannot be stored as JSON"):
        NewMessage(role="user", payload={"at": object()})


async def test_appending_to_an_unknown_chat_is_named(store: Store) -> None:
    with pytest.raises(UnknownChat):
        await store.transcript.append(42, new_question_id(), [_user("hi")])

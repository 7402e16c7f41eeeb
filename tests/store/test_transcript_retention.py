"""The transcript's retention: each chat keeps its last questions, asked within a while;
the rest are really gone, in bounded batches, and what is kept survives a restart whole."""

from __future__ import annotations

from datetime import timedelta

from store_fixtures import ALICE, GROUP_CHAT, PRIVATE_CHAT, FakeClock, count_rows

from bot.store import NewMessage, StoreSettings, new_question_id, open_store
from bot.store.housekeeping import tidy


def _question(n: int) -> list[NewMessage]:
    return [
        NewMessage(role="user", user_id=ALICE, payload={"role": "user", "text": f"q{n}"}),
        NewMessage(
            role="tool",
            payload={"role": "tool", "n": n},
            data={"query": {"select": "count()"}, "summary": f"Result: {n}"},
        ),
        NewMessage(role="assistant", payload={"role": "assistant", "text": f"a{n}"}),
    ]


async def test_old_and_surplus_questions_are_gone_and_the_rest_kept_after_a_restart(
    settings: StoreSettings, clock: FakeClock
) -> None:
    """The table was never pruned: every answer of every chat, with its data, for ever. Now
    a pass keeps each chat's last ``transcript_keep_questions`` questions asked within
    ``transcript_keep_days``, whole, in batches of ``transcript_prune_batch`` questions."""
    settings = settings.model_copy(
        update={
            "transcript_keep_questions": 3,
            "transcript_keep_days": 10.0,
            "transcript_prune_batch": 2,
        }
    )
    store = await open_store(settings, clock=clock)
    try:
        await store.chats.ensure(PRIVATE_CHAT, "private")
        await store.chats.ensure(GROUP_CHAT, "group")
        asked: dict[int, list[str]] = {PRIVATE_CHAT: [], GROUP_CHAT: []}
        # The group: 7 questions, 20 days ago, then 2 recent: the old ones go by age.
        for n in range(7):
            question = new_question_id()
            await store.transcript.append(GROUP_CHAT, question, _question(n))
            asked[GROUP_CHAT].append(question)
        clock.advance(timedelta(days=20))
        # Alice: 6 recent questions, 3 over the count.
        for n in range(100, 106):
            question = new_question_id()
            await store.transcript.append(PRIVATE_CHAT, question, _question(n))
            asked[PRIVATE_CHAT].append(question)
            if n < 102:
                question = new_question_id()
                await store.transcript.append(GROUP_CHAT, question, _question(200 + n))
                asked[GROUP_CHAT].append(question)
        # Alice's last 3; the group's 2 recent ones (its 7 others are past 10 days).
        last = {PRIVATE_CHAT: 3, GROUP_CHAT: 2}
        kept = {
            chat: {q: await store.transcript.question(chat, q) for q in ids[-last[chat] :]}
            for chat, ids in asked.items()
        }
        assert await count_rows(settings, "messages") == 3 * (7 + 6 + 2)

        await tidy(store)
    finally:
        await store.close()

    assert await count_rows(settings, "messages") == 3 * (3 + 2)
    reopened = await open_store(settings, clock=clock)
    try:
        for chat, ids in asked.items():
            for question in ids:
                rows = await reopened.transcript.question(chat, question)
                assert rows == kept[chat].get(question, []), (chat, question)
        rows = await reopened.transcript.recent(PRIVATE_CHAT, 10)
        assert [r.payload.get("text") for r in rows if r.role == "user"] == ["q103", "q104", "q105"]
        last = await reopened.transcript.last_data(GROUP_CHAT)
        assert last is not None and last.data["summary"] == "Result: 301"
        # A second pass finds nothing more to remove.
        assert await reopened.transcript.prune() == 0
    finally:
        await reopened.close()

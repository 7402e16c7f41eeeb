"""Follow-up questions in a conversation, through the real PTB Application against the fake
Bot API, reading what the scripted model was sent for each: the chat's instrument as the
person set it, the instrument a confirmed plan was shown with, the numbers of the data
shown before, and in a group, each member's own question and data."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from bot_harness import (
    ALICE,
    BOB,
    GROUP,
    WEEKDAY_RANGE,
    ask_and_get_plan,
    barb_bot,
    fetch_csv,
    keyboard_data,
    press,
    settled_outbox,
)
from fake_bot_api import FakeBotAPI

from barb.data.store import data_path
from barb.settings import EngineSettings
from bot.llm.messages import ModelRequest
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn

COUNT_DAYS = {"session": "RTH", "from": "daily", "select": "count()"}


async def run_and_wait(fake: FakeBotAPI, chat_id: int, user_id: int, plan: dict, n: int):
    """Press Run under ``plan``; what the chat has read once ``n`` messages are there."""
    run, _ = keyboard_data(plan)
    await press(fake, chat_id, user_id, plan, run)
    return await fake.wait_said(n, chat_id=chat_id)


def current_instrument(request: ModelRequest) -> str:
    [line] = [x for x in request.system.splitlines() if x.startswith("Current instrument:")]
    return line


async def test_instrument_typed_with_the_command_is_the_next_question_s(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """ "/instrument ES" then a question: the symbol was ignored, the buttons shown, and the
    question was asked and planned on NQ."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS)), text("Done.")]
    )
    async with barb_bot(fake, db_url, provider=provider) as svc:
        said = await ask_and_get_plan(fake, ALICE, ALICE, "/instrument es")
        assert said["text"] == "Instrument set to ES (S&P 500 E-mini)."
        assert keyboard_data(said) == []
        assert (await svc.store.chats.get(ALICE)).instrument == "ES"
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "how many days?")
        assert current_instrument(provider.requests[-1]).startswith("Current instrument: ES")
        assert "ES" in plan["text"] and "NQ" not in plan["text"]
        # A symbol Barb does not know gets the buttons, and changes nothing.
        said = await ask_and_get_plan(fake, ALICE, ALICE, "/instrument XYZ")
        assert keyboard_data(said) == ["i:CL", "i:ES", "i:NQ"]
        assert (await svc.store.chats.get(ALICE)).instrument == "ES"


async def test_an_instrument_typed_in_a_group_is_its_admins_to_set(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """A member who may not press the /instrument buttons may not type past them."""
    fake = fake_telegram
    async with barb_bot(fake, db_url) as svc:
        said = await ask_and_get_plan(
            fake, GROUP, BOB, f"/instrument@{fake.bot['username']} ES", chat_type="supergroup"
        )
        assert keyboard_data(said) == ["i:CL", "i:ES", "i:NQ"]
        assert (await svc.store.chats.get(GROUP)).instrument == "NQ"


async def test_the_answer_to_a_plan_run_after_instrument_changed_is_written_for_its_own(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """An NQ plan, then "/instrument ES", then Run: NQ ran as confirmed (its CSV is NQ's),
    but the model read NQ's result under "Current instrument: ES" (ES's sessions and $50 a
    point)."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [turn("Counting days.", tool_call("execute_query", query=COUNT_DAYS)), text("Done.")]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "how many days?")
        assert "NQ" in plan["text"]
        said = await ask_and_get_plan(fake, ALICE, ALICE, "/instrument ES")
        assert said["text"].startswith("Instrument set to ES")
        [*_, answer] = await run_and_wait(fake, ALICE, ALICE, plan, 3)
        [result] = [r for m in provider.requests[1].messages for r in m.tool_results]
        assert "bars of NQ" in result.content
        document = await fetch_csv(fake, ALICE, ALICE, answer)
        assert document.files["document"].filename.startswith("NQ_")
        assert current_instrument(provider.requests[1]).startswith("Current instrument: NQ")
        assert "worth 20 USD" in provider.requests[1].system


# Long enough that the context's old 400-character cut fell inside it.
ES_2023_WEEKDAYS = {
    **WEEKDAY_RANGE,
    "instrument": "ES",
    "period": "2023",
    "map": {
        "weekday": "dayname()",
        "body": "abs(close - open)",
        "range_pct": "range / open * 100",
        "gap_from_close": "open - prev(close)",
        "close_in_range": "(close - low) / range",
        "move_pct_of_open": "(close - open) / open * 100",
    },
    "select": "mean(range)",
}


def es_2023_weekday_ranges() -> dict[str, float]:
    """ES's mean RTH (09:30-17:00 ET) range by weekday in 2023, from the raw minute bars."""
    bars = pd.read_parquet(data_path("ES", EngineSettings()))
    stamps = pd.DatetimeIndex(bars["timestamp"])
    clock = stamps.hour * 60 + stamps.minute
    rth = bars[(clock >= 9 * 60 + 30) & (clock < 17 * 60) & (stamps.year == 2023)]
    days = rth.groupby(pd.DatetimeIndex(rth["timestamp"]).normalize()).agg(
        high=("high", "max"), low=("low", "min")
    )
    ranges = days["high"] - days["low"]
    means = ranges.groupby(ranges.index.dayofweek).mean()
    return {["Mon", "Tue", "Wed", "Thu", "Fri"][d]: float(v) for d, v in means.items()}


def previous_data_lines(request: ModelRequest) -> list[str]:
    system = request.system
    assert "Previous data shown" in system, system
    return system.split("Previous data shown", 1)[1].splitlines()[1:]


async def test_a_follow_up_reads_the_numbers_and_the_whole_query_of_the_data_shown(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """ "why is Monday lower?" after the weekday ranges: the model read the first line of the
    last summary ("Result: 5 groups by weekday…", not one number), and the query cut at 400
    characters; now the summary it read, every mean and the noise warning, and the query
    whole, as JSON it can change for "same but only Fridays"."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            turn("ES weekday ranges of 2023.", tool_call("execute_query", query=ES_2023_WEEKDAYS)),
            text("Tuesday is the quietest day."),
            text("It is not much lower."),
        ]
    )
    async with barb_bot(fake, db_url, provider=provider):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "средний RTH диапазон ES по дням 2023?")
        await run_and_wait(fake, ALICE, ALICE, plan, 2)
        await ask_and_get_plan(fake, ALICE, ALICE, "а почему понедельник ниже?")
        lines = previous_data_lines(provider.requests[-1])
        [query_line] = [line for line in lines if line.startswith("query ")]
        assert json.loads(query_line.removeprefix("query ")) == ES_2023_WEEKDAYS
        means = es_2023_weekday_ranges()
        for day, mean in means.items():
            [row] = [line for line in lines if line.startswith(f"{day},")]
            assert float(row.split(",")[1]) == pytest.approx(mean, abs=0.006), row
        assert any("differ by less than their noise" in line for line in lines)
        # The earlier question and the answer the person read come with it.
        said = [m.text for m in provider.requests[-1].messages]
        assert said == [
            "средний RTH диапазон ES по дням 2023?",
            "Tuesday is the quietest day.",
            "а почему понедельник ниже?",
        ]


def group_model(request: ModelRequest):
    """Plans on a member's first question; answers a follow-up or a result in words."""
    last = request.messages[-1]
    if last.role == "user":
        question = last.text or ""
        if "weekday" in question:
            return turn("Weekday ranges.", tool_call("execute_query", query=WEEKDAY_RANGE))
        if "how many" in question:
            return turn("Counting ES days.", tool_call("execute_query", query=ES_DAYS))
        return text("Noted.")
    return text("Answer: " + last.tool_results[-1].content.splitlines()[0])


ES_DAYS = {**COUNT_DAYS, "instrument": "ES"}


async def test_in_a_group_each_members_follow_up_follows_their_own_question(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """Alice's weekday ranges, Bob's ES day count, then Alice's "and for ES?": she was read
    with Bob's count as the previous data and his question as her last, so the model ran
    his count on ES. Now her follow-up reads her own data, his question marked as his, and
    his "and in 2023?" reads his own."""
    fake = fake_telegram
    provider = ScriptedProvider([group_model] * 20)
    at = f"@{fake.bot['username']} "
    in_group = {"chat_type": "supergroup"}
    async with barb_bot(fake, db_url, provider=provider):
        alices = await ask_and_get_plan(fake, GROUP, ALICE, at + "weekday ranges?", **in_group)
        await run_and_wait(fake, GROUP, ALICE, alices, 2)
        bobs = await ask_and_get_plan(fake, GROUP, BOB, at + "how many ES days?", **in_group)
        await run_and_wait(fake, GROUP, BOB, bobs, 4)

        await ask_and_get_plan(fake, GROUP, ALICE, at + "and for ES?", **in_group)
        request = provider.requests[-1]
        [query_line] = [x for x in previous_data_lines(request) if x.startswith("query ")]
        assert json.loads(query_line.removeprefix("query ")) == {
            "instrument": "NQ",
            **WEEKDAY_RANGE,
        }
        asked = [m.text or "" for m in request.messages if m.role == "user"]
        assert asked[0].endswith("weekday ranges?") and "another member" not in asked[0]
        assert asked[1].startswith("[asked by another member of the group]")
        assert asked[1].endswith("how many ES days?")
        assert asked[2].endswith("and for ES?") and "another member" not in asked[2]

        await ask_and_get_plan(fake, GROUP, BOB, at + "and in 2023?", **in_group)
        request = provider.requests[-1]
        [query_line] = [x for x in previous_data_lines(request) if x.startswith("query ")]
        assert json.loads(query_line.removeprefix("query ")) == ES_DAYS
        asked = [m.text or "" for m in request.messages if m.role == "user"]
        assert [a.startswith("[asked by another member") for a in asked] == [
            True,
            False,
            True,
            False,
        ]


async def test_a_follow_up_typed_instead_of_run_reads_the_plan_it_replaces(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """The weekday plan shown, then "а для ES?" typed instead of Run: the model was sent
    "а для ES?" alone (the earlier question had no answer in words, so the history dropped
    it). Now it reads the question, the plan's words and its query, and that it never ran."""
    fake = fake_telegram
    provider = ScriptedProvider(
        [
            turn("Weekday ranges.", tool_call("execute_query", query=WEEKDAY_RANGE)),
            turn(
                "Now on ES.",
                tool_call("execute_query", query={**WEEKDAY_RANGE, "instrument": "ES"}),
            ),
        ]
    )
    async with barb_bot(fake, db_url, provider=provider):
        first = await ask_and_get_plan(fake, ALICE, ALICE, "средний RTH диапазон по дням недели?")
        assert len(keyboard_data(first)) == 2
        second = await ask_and_get_plan(fake, ALICE, ALICE, "а для ES?")
        assert len(keyboard_data(second)) == 2
        request = provider.requests[-1]
        [asked, planned, now] = request.messages
        assert asked.text == "средний RTH диапазон по дням недели?"
        assert planned.role == "assistant" and planned.text.startswith("Weekday ranges.\n")
        assert "the query was not run" in planned.text
        query = json.loads(planned.text.split("The plan's query: ", 1)[1].removesuffix("]"))
        assert query == {"instrument": "NQ", **WEEKDAY_RANGE}
        assert now.text == "а для ES?"
        assert "Previous data shown" not in request.system  # nothing ran


def replied_data_lines(request: ModelRequest) -> list[str]:
    """The lines of the data a reply follows, after the line quoting its question."""
    system = request.system
    assert "is a reply to your answer" in system, system
    return system.split("is a reply to your answer", 1)[1].splitlines()


async def test_a_reply_to_another_members_answer_follows_that_answer(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """Alice's weekday ranges, Bob's ES day count, then Alice's "and in 2023?" as a reply to
    Bob's answer: she was read with her own weekday query as the data to follow, so the
    model changed the wrong query. Now a reply follows the answer it replies to (its
    question quoted, marked as Bob's, and its query whole), whoever asked it; the same
    words without a reply still follow her own."""
    fake = fake_telegram
    provider = ScriptedProvider([group_model] * 20)
    at = f"@{fake.bot['username']} "
    in_group = {"chat_type": "supergroup"}
    async with barb_bot(fake, db_url, provider=provider) as svc:
        alices = await ask_and_get_plan(fake, GROUP, ALICE, at + "weekday ranges?", **in_group)
        await run_and_wait(fake, GROUP, ALICE, alices, 2)
        bobs = await ask_and_get_plan(fake, GROUP, BOB, at + "how many ES days?", **in_group)
        said = await run_and_wait(fake, GROUP, BOB, bobs, 4)
        bobs_answer = said[-1]
        assert "Answer: Result: count = 4647" in bobs_answer["text"], bobs_answer
        await settled_outbox(svc)  # marked sent: Alice reads it before she replies

        await ask_and_get_plan(
            fake,
            GROUP,
            ALICE,
            "and in 2023?",
            reply_to_message_id=bobs_answer["message_id"],
            **in_group,
        )
        request = provider.requests[-1]
        lines = replied_data_lines(request)
        assert "(asked by another member of the group)" in lines[0]
        assert lines[0].endswith('"how many ES days?"')
        [query_line] = [x for x in lines if x.startswith("query ")]
        assert json.loads(query_line.removeprefix("query ")) == ES_DAYS
        assert "Previous data shown" not in request.system

        # Her reply to her own (older) plan message follows her weekday question.
        await ask_and_get_plan(
            fake,
            GROUP,
            ALICE,
            "and on Fridays only?",
            reply_to_message_id=alices["message_id"],
            **in_group,
        )
        lines = replied_data_lines(provider.requests[-1])
        assert "another member" not in lines[0] and lines[0].endswith('"weekday ranges?"')
        [query_line] = [x for x in lines if x.startswith("query ")]
        assert json.loads(query_line.removeprefix("query ")) == {
            "instrument": "NQ",
            **WEEKDAY_RANGE,
        }

        # Without a reply: her own last data, as before.
        await ask_and_get_plan(fake, GROUP, ALICE, at + "and for ES?", **in_group)
        [query_line] = [
            x for x in previous_data_lines(provider.requests[-1]) if x.startswith("query ")
        ]
        assert json.loads(query_line.removeprefix("query ")) == {
            "instrument": "NQ",
            **WEEKDAY_RANGE,
        }

        # Her reply to Bob's plan, still waiting for his Run: his plan's query, as shown.
        bobs = await ask_and_get_plan(fake, GROUP, BOB, at + "how many ES days now?", **in_group)
        await settled_outbox(svc)
        await ask_and_get_plan(
            fake, GROUP, ALICE, "and for CL?", reply_to_message_id=bobs["message_id"], **in_group
        )
        system = provider.requests[-1].system
        assert "is a reply to your plan" in system, system
        lines = system.split("is a reply to your plan", 1)[1].splitlines()
        assert "(asked by another member of the group)" in lines[0]
        assert lines[0].endswith('"how many ES days now?"')
        [query_line] = [x for x in lines if x.startswith("query ")]
        assert json.loads(query_line.removeprefix("query ")) == ES_DAYS


async def test_a_reply_to_another_members_question_follows_its_answer(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """Alice's weekday ranges, Bob's ES day count, then Alice's "@Barb and in 2023?" as a
    reply to Bob's question message (not Barb's answer): only Barb's own messages were
    looked up, so she was read with her own weekday query. Now the question message is
    found by the answer that quotes it, and her reply follows Bob's count."""
    fake = fake_telegram
    provider = ScriptedProvider([group_model] * 20)
    at = f"@{fake.bot['username']} "
    in_group = {"chat_type": "supergroup"}
    async with barb_bot(fake, db_url, provider=provider) as svc:
        alices = await ask_and_get_plan(fake, GROUP, ALICE, at + "weekday ranges?", **in_group)
        await run_and_wait(fake, GROUP, ALICE, alices, 2)
        bobs_question = fake.message_update(
            chat_id=GROUP, user_id=BOB, text=at + "how many ES days?", **in_group
        )
        fake.inject(bobs_question)
        bobs = (await fake.wait_said(3, chat_id=GROUP))[2]
        assert bobs["reply_to_message"]["message_id"] == bobs_question["message"]["message_id"]
        await run_and_wait(fake, GROUP, BOB, bobs, 4)
        await settled_outbox(svc)

        await ask_and_get_plan(
            fake,
            GROUP,
            ALICE,
            at + "and in 2023?",
            reply_to_message_id=bobs_question["message"]["message_id"],
            **in_group,
        )
        lines = replied_data_lines(provider.requests[-1])
        assert "(asked by another member of the group)" in lines[0]
        assert lines[0].endswith('"how many ES days?"')
        [query_line] = [x for x in lines if x.startswith("query ")]
        assert json.loads(query_line.removeprefix("query ")) == ES_DAYS

        # Her reply to her own question message follows her own weekday question.
        mine = fake.said(GROUP)[0]["reply_to_message"]["message_id"]
        await ask_and_get_plan(
            fake, GROUP, ALICE, at + "Fridays only?", reply_to_message_id=mine, **in_group
        )
        lines = replied_data_lines(provider.requests[-1])
        assert "another member" not in lines[0] and lines[0].endswith('"weekday ranges?"')


async def test_in_a_private_chat_a_reply_to_an_earlier_question_follows_it(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """Alice asks for weekday ranges, then for the ES day count, then replies "а в 2023?" to
    her first question message: in a private chat Barb's answers quote nothing, so her
    message was found among none of its replies and the model read the last data shown,
    the ES count, and changed the wrong query. Now every reply of a question names the
    message that asked it, and her reply follows the weekday question, its query whole."""
    fake = fake_telegram
    provider = ScriptedProvider([group_model] * 20)
    async with barb_bot(fake, db_url, provider=provider) as svc:
        first = fake.message_update(chat_id=ALICE, user_id=ALICE, text="weekday ranges?")
        fake.inject(first)
        [plan] = await fake.wait_said(1, chat_id=ALICE)
        assert "reply_to_message" not in plan  # a private chat's answers quote nothing
        await run_and_wait(fake, ALICE, ALICE, plan, 2)
        count = await ask_and_get_plan(fake, ALICE, ALICE, "how many ES days?")
        await run_and_wait(fake, ALICE, ALICE, count, 4)
        await settled_outbox(svc)

        await ask_and_get_plan(
            fake,
            ALICE,
            ALICE,
            "а в 2023?",
            reply_to_message_id=first["message"]["message_id"],
        )
        request = provider.requests[-1]
        lines = replied_data_lines(request)
        assert lines[0].endswith('"weekday ranges?"') and "another member" not in lines[0]
        [query_line] = [x for x in lines if x.startswith("query ")]
        assert json.loads(query_line.removeprefix("query ")) == {
            "instrument": "NQ",
            **WEEKDAY_RANGE,
        }
        assert "Previous data shown" not in request.system

        # The same words not as a reply: the last data shown, the ES count.
        await ask_and_get_plan(fake, ALICE, ALICE, "а в 2023?")
        [query_line] = [
            x for x in previous_data_lines(provider.requests[-1]) if x.startswith("query ")
        ]
        assert json.loads(query_line.removeprefix("query ")) == ES_DAYS


#: A pasted question over Telegram's limit, which the apps send as two messages.
LONG_WEEKDAY = (
    "Context for my question. "
    + "NQ trended up on heavy volume that week. " * 100
    + "So: what are the weekday ranges? END"
)


async def test_a_reply_to_a_split_questions_second_part_follows_that_question(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """Alice pastes a long weekday question (the app sends it in two parts, asked whole),
    runs it, then runs the ES day count, then replies "а в 2023?" to the second part of
    her long question: only the first part's message was stored as the one that asked, so
    the model read the ES count as the data to follow. Now any part is followed."""
    from test_split_questions_e2e import app_split

    first, second = app_split(LONG_WEEKDAY)
    fake = fake_telegram
    provider = ScriptedProvider([group_model] * 20)
    async with barb_bot(fake, db_url, provider=provider) as svc:
        parts = [fake.message_update(chat_id=ALICE, user_id=ALICE, text=t) for t in (first, second)]
        for part in parts:
            fake.inject(part)
        [plan] = await fake.wait_said(1, chat_id=ALICE)
        await run_and_wait(fake, ALICE, ALICE, plan, 2)
        count = await ask_and_get_plan(fake, ALICE, ALICE, "how many ES days?")
        await run_and_wait(fake, ALICE, ALICE, count, 4)
        await settled_outbox(svc)

        for part in reversed(parts):  # the second part, then the first: both followed
            await ask_and_get_plan(
                fake, ALICE, ALICE, "а в 2023?", reply_to_message_id=part["message"]["message_id"]
            )
            request = provider.requests[-1]
            lines = replied_data_lines(request)
            assert lines[0].endswith('weekday ranges? END"')
            [query_line] = [x for x in lines if x.startswith("query ")]
            assert json.loads(query_line.removeprefix("query ")) == {
                "instrument": "NQ",
                **WEEKDAY_RANGE,
            }
            assert "Previous data shown" not in request.system


async def test_a_reply_to_the_query_button_s_message_follows_its_answer(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """Alice runs weekday ranges and presses Query under the answer, runs the ES day count,
    then replies "а в 2023?" to the query message: it was stored as no question's, so the
    model read the ES count as the data to follow and changed the wrong query."""
    fake = fake_telegram
    provider = ScriptedProvider([group_model] * 20)
    async with barb_bot(fake, db_url, provider=provider) as svc:
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "weekday ranges?")
        [*_, answer] = await run_and_wait(fake, ALICE, ALICE, plan, 2)
        [show_query] = [d for d in keyboard_data(answer) if d.startswith("q:")]
        await press(fake, ALICE, ALICE, answer, show_query)
        [*_, shown] = await fake.wait_said(3, chat_id=ALICE)
        assert shown["text"].startswith("Barb Script behind this answer"), shown
        count = await ask_and_get_plan(fake, ALICE, ALICE, "how many ES days?")
        await run_and_wait(fake, ALICE, ALICE, count, 5)
        await settled_outbox(svc)

        await ask_and_get_plan(
            fake, ALICE, ALICE, "а в 2023?", reply_to_message_id=shown["message_id"]
        )
        request = provider.requests[-1]
        lines = replied_data_lines(request)
        assert lines[0].endswith('"weekday ranges?"')
        [query_line] = [x for x in lines if x.startswith("query ")]
        assert json.loads(query_line.removeprefix("query ")) == {
            "instrument": "NQ",
            **WEEKDAY_RANGE,
        }
        assert "Previous data shown" not in request.system


async def test_a_reply_to_a_plan_older_than_the_last_fifty_follows_that_plan(
    fake_telegram: FakeBotAPI, db_url: str, sample_settings
) -> None:
    """Alice's weekday plan, never run: she asks for the ES day count instead and runs
    that, then fifty more plans come in the chat, then she replies "а для ES?" to the
    weekday plan. Only plans still waiting for Run were looked up, so the model read the
    count as the data to follow; now a plan that never ran (replaced, cancelled, expired)
    is followed too. And the reply looked for it among the chat's last fifty plans only,
    did not find it, and silently read the ES count: it is now found from the message
    replied to, however old."""
    fake = fake_telegram
    provider = ScriptedProvider([group_model] * 20)
    async with barb_bot(fake, db_url, provider=provider) as svc:
        weekdays = await ask_and_get_plan(fake, ALICE, ALICE, "weekday ranges?")
        count = await ask_and_get_plan(fake, ALICE, ALICE, "how many ES days?")
        await run_and_wait(fake, ALICE, ALICE, count, 3)
        await settled_outbox(svc)
        # Fifty later plans of the chat (as stored: the count's plan, shown again and again).
        [latest] = await svc.store.pending.recent_for_chat(ALICE, 1)
        for _ in range(50):
            await svc.store.pending.create(ALICE, ALICE, "confirm", latest.payload)

        await ask_and_get_plan(
            fake, ALICE, ALICE, "а для ES?", reply_to_message_id=weekdays["message_id"]
        )
        system = provider.requests[-1].system
        assert "Previous data shown" not in system
        assert "is a reply to your plan" in system, system
        lines = system.split("is a reply to your plan", 1)[1].splitlines()
        assert lines[0].endswith('"weekday ranges?"') and "another member" not in lines[0]
        [query_line] = [x for x in lines if x.startswith("query ")]
        assert json.loads(query_line.removeprefix("query ")) == {
            "instrument": "NQ",
            **WEEKDAY_RANGE,
        }

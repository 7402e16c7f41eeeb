"""/query with hostile input over the real wire: one plain sentence, and everyone else answered.

Issue 15: a 1,060-character /query (a select nested 500 deep) broke the worker pool, its
sender got silence and every later /query "Something broke". Here the bot runs on real
worker processes, as `barb bot` does.
"""

from __future__ import annotations

import json

from bot_harness import ALICE, BOB, ask_and_get_plan, barb_bot
from fake_bot_api import FakeBotAPI

from barb import execute
from bot.pool.runner import ProcessRunner

COUNT_QUERY = '{"session": "RTH", "from": "daily", "select": "count()"}'
COUNT = f"/query {COUNT_QUERY}"


def count_answer() -> str:
    """The answer computed in this process, to compare with what the worker sent."""
    value = execute(json.loads(COUNT_QUERY), "NQ").summary.value
    return f"number of days = {value:,}"  # as a person reads it: the chart's headline


DEEP = '/query {"select": ' + "[" * 500 + '"close"' + "]" * 500 + "}"


async def test_a_pool_breaking_query_gets_a_sentence_and_the_next_people_are_answered(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    runner = ProcessRunner(workers=1, timeout_s=60)
    async with barb_bot(fake, db_url, runner=runner):
        assert len(DEEP) > 1_000
        refused = await ask_and_get_plan(fake, ALICE, ALICE, DEEP)
        assert refused["text"].startswith(
            "The query did not run: a query too large.\n"
            "The query nests JSON more than 8 levels deep."
        )
        for person in (BOB, ALICE):
            answer = await ask_and_get_plan(fake, person, person, COUNT)
            assert answer["text"].startswith(count_answer())
        assert runner.pool_replacements == 0
    await runner.close()


async def test_hostile_query_texts_each_get_one_sentence(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    fake = fake_telegram
    cases = {
        '/query {"limit": ' + "9" * 5_000 + "}": "5,000-digit number",
        '/query {"period": "\\ud800"}': "lone UTF-16 surrogate",
        '/query {"sort": "close' + " " * 3_000 + 'x"}': "sort must look like",
        '/query {"from": "daily", "group_by": "year()", "sort": "volume desc"}': "Cannot sort by",
        '/query {"from": "daily", "map": {"x": "next(close, 1e308)"}, "select": "mean(x)"}': (
            "from 1 to 10,000,000"
        ),
        "/query {nope": "That is not valid JSON: a field name in double quotes was expected",
    }
    async with barb_bot(fake, db_url, questions_per_minute=100):
        for text, words in cases.items():
            reply = await ask_and_get_plan(fake, ALICE, ALICE, text)
            assert words in reply["text"], (text[:60], reply["text"])
            assert "Internal error" not in reply["text"]
        answer = await ask_and_get_plan(fake, BOB, BOB, COUNT)
        assert answer["text"].startswith(count_answer())

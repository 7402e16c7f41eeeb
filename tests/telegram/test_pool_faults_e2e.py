"""A worker pool that breaks under a confirmed plan: the person is told the right thing.

The real process pool (pebble, workers forked from the fork server, on the sample) breaks the
way a query that cannot be sent to a worker broke it before inputs were bounded: pebble's
scheduler thread dies while pickling the job. The runner replaces the pool and fails that job
alone. The person who pressed Run reads the sentence /query and Run use for a failed worker
(with the log's reference), not "took too long", and the plan's Run works again; the next
person's question is answered.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from bot_harness import (
    ALICE,
    BOB,
    ask_and_get_plan,
    barb_bot,
    commentary_of,
    keyboard_data,
    press,
)
from fake_bot_api import FakeBotAPI

from bot.pool.jobs import QueryJob, QueryOutcome
from bot.pool.runner import ProcessRunner

BROKE = "This query could not be run because of a failure on my side (reference "


class BreaksThePoolWhenSent:
    """Pickles in the runner's own check, then raises RecursionError in pebble's scheduler
    thread (not an error pebble expects there: the thread dies, the pool stops working)."""

    def __init__(self) -> None:
        self.pickled = 0

    def __reduce__(self) -> Any:
        self.pickled += 1
        if self.pickled > 1:
            raise RecursionError("maximum recursion depth exceeded while pickling an object")
        return (BreaksThePoolWhenSent, ())


class PoisonedJob(QueryJob):
    poison: Any = None


class BreaksOnce(ProcessRunner):
    """The first job Alice's Run sends carries the poison; everything else is as it is."""

    def __init__(self) -> None:
        super().__init__(workers=1, timeout_s=60)
        self.poisoned = False

    async def run(self, job: QueryJob) -> QueryOutcome:
        if not self.poisoned:
            self.poisoned = True
            job = PoisonedJob(**job.model_dump(), poison=BreaksThePoolWhenSent())
        return await super().run(job)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
async def test_a_broken_pool_is_named_and_the_next_person_is_answered(
    fake_telegram: FakeBotAPI, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    fake = fake_telegram
    runner = BreaksOnce()
    caplog.set_level(logging.ERROR, logger="bot.pool.runner")
    async with barb_bot(fake, db_url, runner=runner):
        plan = await ask_and_get_plan(fake, ALICE, ALICE, "Average range by weekday?")
        run, _ = keyboard_data(plan)
        await press(fake, ALICE, ALICE, plan, run)
        said = await fake.wait_said(2, chat_id=ALICE, timeout=60)
        told = said[-1]["text"]
        assert told.startswith(BROKE), told
        assert "took too long" not in told
        ref = told.removeprefix(BROKE)[:8]
        assert any(ref in record.getMessage() for record in caplog.records)
        assert runner.pool_replacements >= 1
        # The failure was Barb's: the plan has its Run and Cancel buttons back, and Run now
        # gives the answer from the healed pool.
        await fake.wait_for("editMessageText", 2, chat_id=ALICE)
        shown = fake.message(ALICE, plan["message_id"])
        assert "⏵" not in shown["text"]
        assert keyboard_data(shown) == keyboard_data(plan)
        await press(fake, ALICE, ALICE, plan, run)
        [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE, timeout=60)
        assert "5 groups by weekday" in photo.params["caption"]
        await fake.wait_for("editMessageText", 4, chat_id=ALICE)
        assert fake.message(ALICE, plan["message_id"])["text"].endswith("⏵ Done.")

        # The next person: a plan, Run, the answer (the chart captioned with its headline and
        # the commentary).
        plan = await ask_and_get_plan(fake, BOB, BOB, "Average range by weekday?")
        run, _ = keyboard_data(plan)
        await press(fake, BOB, BOB, plan, run)
        [_, answer] = await fake.wait_said(2, chat_id=BOB, timeout=60)
        commentary = commentary_of(answer["text"])
        assert commentary.startswith("Answer: "), answer
        assert "5 groups by weekday" in commentary  # computed by the healed pool
        assert [p.status for p in fake.calls("sendPhoto", chat_id=BOB)] == [200]

"""Flood control: Telegram's rate is kept, RetryAfter holds everything, and the waiting
requests go acknowledgements first, then oldest question first, decoration last."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

import pytest
from telegram.error import RetryAfter

from bot.telegram.flood import OrderedRateLimiter
from bot.work_order import acknowledged, arrived, decoration


class Recorder:
    """A Bot API call stand-in: records when each request went out."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, float]] = []
        self.fail_with: list[Exception] = []

    async def call(self, name: str) -> bool:
        if self.fail_with:
            raise self.fail_with.pop(0)
        self.sent.append((name, time.monotonic()))
        return True


async def request(
    limiter: OrderedRateLimiter, recorder: Recorder, name: str, data: dict[str, Any]
) -> Any:
    return await limiter.process_request(
        recorder.call, (name,), {}, "sendMessage", data, rate_limit_args=None
    )


async def test_the_overall_rate_is_kept() -> None:
    limiter, recorder = OrderedRateLimiter(overall_max_rate=20), Recorder()
    started = time.monotonic()
    await asyncio.gather(*(request(limiter, recorder, f"m{i}", {"chat_id": i}) for i in range(40)))

    # A bucket of 20 goes at once; the other 20 at 20 a second.
    assert time.monotonic() - started >= 0.9
    assert len(recorder.sent) == 40


async def test_requests_without_a_chat_are_not_held() -> None:
    limiter, recorder = OrderedRateLimiter(overall_max_rate=1), Recorder()
    started = time.monotonic()
    await asyncio.gather(*(request(limiter, recorder, f"a{i}", {}) for i in range(10)))

    assert time.monotonic() - started < 0.5
    assert len(recorder.sent) == 10


async def test_waiting_requests_go_acknowledgements_first_then_oldest_then_decoration() -> None:
    rate = 20
    limiter, recorder = OrderedRateLimiter(overall_max_rate=rate), Recorder()

    async def send(name: str, started: float, *, acked: bool, typing: bool = False) -> None:
        arrived(started)
        if acked:
            acknowledged()
        if typing:
            decoration()
        await request(limiter, recorder, name, {"chat_id": 1})

    # A bucketful goes at once; the next waits at the bucket itself; the rest wait in line,
    # then leave by priority, not arrival.
    tasks = [asyncio.create_task(send(f"fill{i}", 0.0, acked=True)) for i in range(rate + 1)]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(send("typing", 5.0, acked=True, typing=True)))
    for name, started, acked in [
        ("answer-new", 30.0, True),
        ("answer-old", 10.0, True),
        ("press", 40.0, False),
        ("answer-middle", 20.0, True),
    ]:
        tasks.append(asyncio.create_task(send(name, started, acked=acked)))
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)

    order = [name for name, _ in recorder.sent]
    expected = ["press", "answer-old", "answer-middle", "answer-new", "typing"]
    assert order[rate + 1 :] == expected


async def test_retry_after_holds_every_request_then_retries() -> None:
    limiter, recorder = OrderedRateLimiter(overall_max_rate=0), Recorder()
    recorder.fail_with = [RetryAfter(timedelta(seconds=0.3))]
    started = time.monotonic()

    first = asyncio.create_task(request(limiter, recorder, "refused-then-sent", {"chat_id": 1}))
    await asyncio.sleep(0.05)
    second = asyncio.create_task(request(limiter, recorder, "other chat", {"chat_id": 2}))
    await asyncio.gather(first, second)

    assert sorted(name for name, _ in recorder.sent) == ["other chat", "refused-then-sent"]
    assert all(at - started >= 0.35 for _, at in recorder.sent)  # 0.3 s + 0.1 s margin


async def test_retry_after_past_the_retries_reaches_the_caller() -> None:
    limiter, recorder = OrderedRateLimiter(overall_max_rate=0, max_retries=1), Recorder()
    recorder.fail_with = [RetryAfter(timedelta(seconds=0.01))] * 2

    with pytest.raises(RetryAfter):
        await request(limiter, recorder, "m", {"chat_id": 1})
    assert recorder.sent == []


async def test_a_group_has_its_own_per_minute_limit() -> None:
    limiter, recorder = OrderedRateLimiter(overall_max_rate=0, group_max_rate=3), Recorder()
    sends = [request(limiter, recorder, f"g{i}", {"chat_id": -100}) for i in range(4)]
    sends += [request(limiter, recorder, f"p{i}", {"chat_id": 5}) for i in range(4)]
    _, pending = await asyncio.wait([asyncio.ensure_future(s) for s in sends], timeout=0.3)

    # The group's fourth message waits for the minute; the private chat is not held.
    assert sorted(name for name, _ in recorder.sent) == ["g0", "g1", "g2", "p0", "p1", "p2", "p3"]
    assert len(pending) == 1
    for task in pending:
        task.cancel()


async def test_overlapping_holds_last_until_the_longest() -> None:
    limiter, recorder = OrderedRateLimiter(overall_max_rate=0), Recorder()
    recorder.fail_with = [RetryAfter(timedelta(seconds=0.4)), RetryAfter(timedelta(seconds=0.1))]
    started = time.monotonic()

    long_hold = asyncio.create_task(request(limiter, recorder, "a", {"chat_id": 1}))
    await asyncio.sleep(0.01)
    short_hold = asyncio.create_task(request(limiter, recorder, "b", {"chat_id": 2}))
    await asyncio.gather(long_hold, short_hold)

    # The shorter hold, set later, did not cut the longer one short.
    assert all(at - started >= 0.45 for _, at in recorder.sent)

"""Questions per person per minute: a sliding window, and nobody is remembered for longer."""

from __future__ import annotations

from bot.telegram.services import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_person_past_the_limit_is_told_how_long_to_wait() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=2, clock=clock)

    assert limiter.check(1) == 0 and limiter.check(1) == 0
    clock.now += 15
    assert limiter.check(1) == 45  # the first question leaves the window in 45 s
    assert limiter.check(2) == 0  # someone else is not held by it
    clock.now += 45
    assert limiter.check(1) == 0


def test_people_who_stopped_asking_are_forgotten() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=5, clock=clock)
    for user in range(100):
        limiter.check(user)
    clock.now += 30
    limiter.check(7)
    assert len(limiter) == 100

    clock.now += 45  # a minute and more since the first 100 asked, 45 s since user 7 did
    limiter.check(8)
    assert len(limiter) == 2  # 7 (asked within the minute) and 8

"""Reading numbers the way models write them, in English and Russian."""

from __future__ import annotations

import pytest

from bot.eval.numbers import find, matches, numbers_in


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Result: max_range = 1,826.25", 1826.25),
        ("mean_volume = 312,502.08", 312502.08),
        ("средний объём 312 502,08 контракта", 312502.08),
        ("средний объём 312\u00a0502,08", 312502.08),
        ("около 129,6 пункта", 129.6),
        ("about 129.6 points", 129.6),
        ("1.234.567,5 (European)", 1234567.5),
        ("correlation 0,2774", 0.2774),
        ("56.59% of sessions", 56.59),
        ("56,59 % сессий", 0.5659),
        ("fell −3.2 points", -3.2),
        ("fell -3.2 points", -3.2),
        ("volume near 312.5k", 312500.0),
        ("около 1,2 млн контрактов", 1_200_000.0),
        ("**26** inside days", 26.0),
        ("year=2,025, mean_range=401.1", 2025.0),
        ("weekday,mean_range\nMon,319.26\nTue,310.69", 319.26),
        ("year,mean_range\n2008,64.35\n2009,24.58", 64.35),
        ("year,mean_range\n2008,64.35\n2009,24.58", 2009.0),
        ("month,count\n10,14\n11,16", 16.0),
        ("hour,mean_range\n16,7.04", 7.04),
    ],
)
def test_reads_the_number(text: str, value: float) -> None:
    assert find(value, numbers_in(text), 1e-9) is not None


def test_a_date_is_not_a_negative_number() -> None:
    assert not any(n < 0 for n in numbers_in("on 2024-06-25 the range was 780.5"))


def test_no_number_in_a_word() -> None:
    assert numbers_in("RTH_OPEN, rsi14, ES") == []
    assert numbers_in("RSI(14) в 2024г.") == [14.0, 2024.0]
    assert numbers_in(None) == []


def test_tolerance_is_relative_and_zero_means_exact() -> None:
    assert matches(129.602, 129.6, 0.002)
    assert not matches(129.602, 129.0, 0.002)
    assert matches(26, 26.0, 0)
    assert not matches(26, 25.9999, 0)

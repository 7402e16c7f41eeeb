"""Numbers as people and models write them, in English and Russian, and matching them.

"1,234.5", "1 234,5", "1234,5", "12.5%", "−3.2", "312.5k", "1,2 млн" all read, and so do
the values of a CSV row ("Mon,319.26", "2008,64.35"). A written
number can be ambiguous ("1,234" is 1234 in English and 1.234 in Russian), so each one yields
every reading it allows; a question passes when one of them is within tolerance. Extra
readings can only add matches for numbers that really appear in the text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

_SPACES = " \u00a0\u202f\u2009"
_NUMBER = re.compile(
    rf"""
    (?<![\w.])                                   # not the tail of a word or of a number
    (?P<sign>[-−–]?)
    (?P<body>
        \d{{1,3}}(?:[{_SPACES}]\d{{3}})+(?:[.,]\d+)?  # 1 234 567,5
      | \d[\d.,]*\d                                  # 1,234.5 / 1.234,5 / 129,6 / 2008,64.35
      | \d
    )
    (?![\d])
    (?P<suffix>\s?(?:%|k\b|K\b|тыс\.?|M\b|млн\.?))?
    """,
    re.VERBOSE,
)
_SCALE = {"k": 1e3, "K": 1e3, "тыс": 1e3, "M": 1e6, "млн": 1e6}


def _readings(body: str) -> set[float]:
    """Every value the digits may stand for."""
    for space in _SPACES:
        body = body.replace(space, " ")
    values: set[float] = set()
    if " " in body:
        # "1 234,5" (grouped thousands), but also "in 12 100 days" (two numbers).
        values.update(_readings(body.replace(" ", "")))
        for part in body.split(" "):
            values.update(_readings(part))
        return values
    if "," in body:
        # A comma may also separate values, as in a CSV row ("2008,64.35", "Mon,319.26").
        parts = body.split(",")
        if len(parts) > 1 and all(parts):
            for part in parts:
                values.update(_readings(part))
    if "," in body and "." in body:
        if body.rfind(",") < body.rfind("."):
            values.add(_float(body.replace(",", "")))  # 1,234.5
        else:
            values.add(_float(body.replace(".", "").replace(",", ".")))  # 1.234,5
        return {v for v in values if not math.isnan(v)}
    for separator in ",.":
        if separator in body:
            groups = body.split(separator)
            if len(groups) == 2:
                values.add(float(".".join(groups)))  # a decimal point or comma
            if all(len(g) == 3 for g in groups[1:]) and 1 <= len(groups[0]) <= 3:
                values.add(float("".join(groups)))  # grouped thousands
            return values
    values.add(float(body))
    return values


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:  # e.g. "1.2.3,4": not one number
        return math.nan


def numbers_in(text: str | None) -> list[float]:
    """Every number ``text`` may contain, each written number in all its readings."""
    if not text:
        return []
    found: list[float] = []
    for match in _NUMBER.finditer(text):
        sign = -1.0 if match.group("sign") else 1.0
        suffix = (match.group("suffix") or "").strip().rstrip(".")
        for value in sorted(_readings(match.group("body"))):
            value *= sign
            found.append(value)
            if suffix == "%":
                found.append(value / 100)
            elif suffix in _SCALE:
                found.append(value * _SCALE[suffix])
    return found


def matches(expected: float, got: float, tolerance: float) -> bool:
    """``got`` equals ``expected`` within ``tolerance`` (relative; 0 = exact)."""
    if tolerance == 0:
        return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9)
    return abs(got - expected) <= tolerance * abs(expected) + 1e-12


def find(expected: float, candidates: Iterable[float], tolerance: float) -> float | None:
    """The candidate closest to ``expected`` among those that match it, if any."""
    hits = [c for c in candidates if matches(expected, c, tolerance)]
    return min(hits, key=lambda c: abs(c - expected)) if hits else None

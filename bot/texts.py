"""Barb's own words to people (errors, limits, buttons), in English and Russian."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

import yaml

Language = Literal["en", "ru"]
TEXTS_FILE = Path(__file__).with_name("texts.yaml")
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")


@cache
def _texts(path: Path = TEXTS_FILE) -> dict[str, dict[str, str]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def t(key: str, lang: str = "en", **values: object) -> str:
    entry = _texts()[key]
    return entry.get(lang, entry["en"]).format(**values)


def detect_language(text: str, fallback: Language = "en") -> Language:
    """Russian when at least a third of the letters are Cyrillic (Russian questions carry
    English jargon: "сколько inside days в 2024?"), else English."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return fallback
    cyrillic = sum(1 for c in letters if _CYRILLIC.match(c))
    return "ru" if cyrillic * 3 >= len(letters) else "en"


def language_for(setting: str, text: str, telegram_code: str | None = None) -> Language:
    """The chat's setting when fixed, else the message's own language (or Telegram's hint)."""
    if setting in ("en", "ru"):
        return setting  # type: ignore[return-value]
    fallback: Language = "ru" if (telegram_code or "").startswith("ru") else "en"
    return detect_language(text, fallback)

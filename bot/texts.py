"""The bot's words to people, from the ``bot`` gettext catalog (``barb.i18n``), and the
language a person is answered in."""

from __future__ import annotations

import re

from barb.i18n import LANGUAGES, Language, language, text

_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
#: A ticker or session written in capitals (ES, NQ, RTH, ETH, CL), as a word of its own.
_SYMBOL = re.compile(r"(?<![^\W\d_])[A-Z]{2,5}(?![^\W\d_])")


def t(key: str, lang: str = "en", *, plural_of: float | None = None, **values: object) -> str:
    """The bot's text ``key`` in ``lang``, in the plural form for ``plural_of`` when it has
    forms ("first 3 rows", "первые 3 строки"); ``pybabel extract -k t`` finds the keys."""
    return text("bot", key, lang, plural_of=plural_of, **values)


def detect_language(message: str, fallback: Language = "en") -> Language:
    """Russian when at least a third of the letters are Cyrillic (Russian questions carry
    English jargon: "сколько inside days в 2024?"), else English."""
    letters = _letters(message)
    if not letters:
        return fallback
    cyrillic = sum(1 for c in letters if _CYRILLIC.match(c))
    return "ru" if cyrillic * 3 >= len(letters) else "en"


def _letters(message: str) -> list[str]:
    """The letters of ``message``'s words. Symbols and sessions (ES, NQ, RTH) are no
    language's words: "ES?" after a Russian question was answered in English, the language
    of its two Latin capitals."""
    return [c for c in _SYMBOL.sub(" ", message) if c.isalpha()]


def has_words(message: str) -> bool:
    """Whether ``message`` says its language ("ES?", "2023" do not)."""
    return bool(_letters(message))


def language_for(setting: str, message: str, telegram_code: str | None = None) -> Language:
    """The chat's setting when it fixes one; else Telegram's ``language_code``, except that
    a question is answered in the language it is written in (a Russian question from an
    English phone gets a Russian plan)."""
    if setting in LANGUAGES:
        return language(setting)
    return detect_language(message, language(telegram_code))


__all__ = ["Language", "detect_language", "has_words", "language_for", "t"]

"""Interface strings: every key in English and Russian, and language detection."""

from __future__ import annotations

import yaml

from bot.texts import TEXTS_FILE, detect_language, language_for


def test_every_text_has_both_languages() -> None:
    texts = yaml.safe_load(TEXTS_FILE.read_text(encoding="utf-8"))
    for key, entry in texts.items():
        assert isinstance(key, str), key  # YAML turns bare on/off/yes/no into booleans
        assert set(entry) == {"en", "ru"}, key


def test_language_detection() -> None:
    assert detect_language("сколько inside days в 2024?") == "ru"
    assert detect_language("average RTH range by weekday?") == "en"
    assert detect_language("2024?", "ru") == "ru"
    assert language_for("en", "привет") == "en"
    assert language_for("auto", "123", "ru-RU") == "ru"

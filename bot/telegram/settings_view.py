"""The /settings message: the chat's switches, and what Barb remembers about the person,
each remembered preference with a button that forgets it."""

from __future__ import annotations

from collections.abc import Sequence

from telegram import InlineKeyboardMarkup

from bot.store.records import ChatSettings, Preference
from bot.telegram import keyboards
from bot.texts import t

#: Telegram shows about this much of a button's text on a phone.
BUTTON_CHARS = 40


def preference_label(preference: Preference, lang: str) -> str:
    """ "Session: RTH"; a note in quotation marks, because it is the person's own words."""
    value = f"“{preference.text}”" if preference.kind == "note" else preference.text
    return f"{t(f'preference_{preference.kind}', lang)}: {value}"


def settings_view(
    settings: ChatSettings, preferences: Sequence[Preference], lang: str
) -> tuple[str, InlineKeyboardMarkup]:
    """Plain text (the caller escapes it for HTML) and the keyboard."""
    onoff = {True: t("switch_on", lang), False: t("switch_off", lang)}
    text = t(
        "settings_prompt",
        lang,
        confirm=onoff[settings.confirm_queries],
        charts=onoff[settings.charts],
        language=settings.language,
    )
    labels = [preference_label(p, lang) for p in preferences]
    listing = "\n".join(f"• {label}" for label in labels) or t("no_preferences", lang)
    text += f"\n\n{t('preferences_title', lang)}\n{listing}"
    forget = [
        (p.id, t("forget_one_button", lang, label=_short(label)))
        for p, label in zip(preferences, labels, strict=True)
    ]
    markup = keyboards.settings(
        settings.confirm_queries, settings.charts, settings.language, lang, forget
    )
    return text, markup


def _short(label: str) -> str:
    return label if len(label) <= BUTTON_CHARS else label[: BUTTON_CHARS - 1] + "…"

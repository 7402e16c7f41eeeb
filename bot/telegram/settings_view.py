"""The /settings message: the chat's switches, and what Barb remembers about the person,
each remembered preference with a button that forgets it.

A person's memory is theirs, kept across all their chats: it is shown in a private chat
only. In a group the message is everyone's (and any member may press under it), so it shows
the group's switches alone, saying who may change them (``chat_admins``) and where the
memory is (p46ac #2: a member's notes from a private chat were posted to the group, and
another member's press redrew them with theirs)."""

from __future__ import annotations

from collections.abc import Sequence

from telegram import InlineKeyboardMarkup

from barb.i18n import N_
from bot.store.records import ChatSettings, Preference, PreferenceKind
from bot.telegram import keyboards
from bot.texts import t

#: Telegram shows about this much of a button's text on a phone.
BUTTON_CHARS = 40
#: The catalog key naming each kind of remembered preference.
PREFERENCE_NAMES: dict[PreferenceKind, str] = {
    "session": N_("preference_session"),
    "instrument": N_("preference_instrument"),
    "timezone": N_("preference_timezone"),
    "language": N_("preference_language"),
    "charts": N_("preference_charts"),
    "confirmation": N_("preference_confirmation"),
    "note": N_("preference_note"),
}
#: The catalog key of each value of the chat's language setting.
LANGUAGE_SETTING_NAMES: dict[str, str] = {
    "auto": N_("language_auto"),
    "en": N_("language_en"),
    "ru": N_("language_ru"),
}


def preference_label(preference: Preference, lang: str) -> str:
    """ "Session: RTH"; a note in quotation marks, because it is the person's own words."""
    value = f"“{preference.text}”" if preference.kind == "note" else preference.text
    return f"{t(PREFERENCE_NAMES[preference.kind], lang)}: {value}"


def settings_view(
    settings: ChatSettings, preferences: Sequence[Preference] | None, lang: str
) -> tuple[str, InlineKeyboardMarkup]:
    """Plain text (the caller escapes it for HTML) and the keyboard. ``preferences``: the
    person's, in a private chat; ``None`` in a group, which sees the switches alone."""
    onoff = {True: t("switch_on", lang), False: t("switch_off", lang)}
    language_name = t(LANGUAGE_SETTING_NAMES[settings.language], lang)
    text = t(
        "settings_prompt",
        lang,
        confirm=onoff[settings.confirm_queries],
        charts=onoff[settings.charts],
        language=language_name,
    )
    if preferences is None:
        text += "\n\n" + t("settings_group_note", lang)
        markup = keyboards.settings(
            settings.confirm_queries, settings.charts, language_name, lang, personal=False
        )
        return text, markup
    labels = [preference_label(p, lang) for p in preferences]
    listing = "\n".join(f"• {label}" for label in labels) or t("no_preferences", lang)
    text += "\n\n" + t("preferences_title", lang) + f"\n{listing}"
    forget = [
        (p.id, t("forget_one_button", lang, label=keyboards.label(label, BUTTON_CHARS)))
        for p, label in zip(preferences, labels, strict=True)
    ]
    markup = keyboards.settings(
        settings.confirm_queries, settings.charts, language_name, lang, forget
    )
    return text, markup

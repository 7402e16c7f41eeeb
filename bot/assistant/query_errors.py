"""Why typed Barb Script did not run, as the person who typed it reads it.

The engine's messages are written for the model: English sentences that name the query's own
words (fields, columns, functions) and what exists instead. The person gets the kind of error
and the field it is in, in their own language, and the engine's sentence and hint quoted as
the technical detail they are: never an English sentence set inside a Russian one. The JSON
reader's reasons come from a small fixed set (Python's ``json`` decoder), so those are
translated outright, with where the text broke.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from barb.i18n import N_
from bot.assistant.gate import Unreadable
from bot.texts import t

#: The engine's error types (``barb.errors``), named in the person's words.
ERROR_KINDS: dict[str, str] = {
    "InvalidQuery": N_("error_invalid_query"),
    "SyntaxError": N_("error_syntax"),
    "UnknownColumn": N_("error_unknown_column"),
    "UnknownFunction": N_("error_unknown_function"),
    "ArgumentError": N_("error_arguments"),
    "TypeError": N_("error_types"),
    "InvalidPeriod": N_("error_period"),
    "UnknownSession": N_("error_unknown_session"),
    "InvalidSession": N_("error_session"),
    "UnknownTimeframe": N_("error_unknown_timeframe"),
    "UnknownInstrument": N_("error_unknown_instrument"),
    "UnknownEvent": N_("error_unknown_event"),
    "QueryTooLarge": N_("error_too_large"),
    "OutOfMemory": N_("error_out_of_memory"),
    "NoData": N_("error_no_data"),
    "ExecutionError": N_("error_execution"),
}

#: What Python's JSON decoder says (``json.JSONDecodeError.msg``), by catalog key.
_JSON_REASONS: dict[str, str] = {
    "Expecting value": N_("json_expecting_value"),
    "Expecting ',' delimiter": N_("json_expecting_comma"),
    "Expecting ':' delimiter": N_("json_expecting_colon"),
    "Expecting property name enclosed in double quotes": N_("json_expecting_name"),
    "Unterminated string starting at": N_("json_unterminated_string"),
    "Invalid control character at": N_("json_control_character"),
    "Invalid \\escape": N_("json_bad_escape"),
    "Invalid \\uXXXX escape": N_("json_bad_escape"),
    "Extra data": N_("json_extra_data"),
}

#: The engine's most common hint, whole: a name it guessed ("did you mean 'range'?",
#: "did you mean atr()?"), said in the person's words with the name as code; a Russian
#: reader met the English question under «Подсказка:».
_GUESS = re.compile(r"did you mean '?([^'\s?]+)'?\?")

_NOT_FIELDS = frozenset({"query", "parse", "execute", "data"})

#: Characters of the typed text shown from where the JSON reader stopped.
NEAR_CHARS = 24


def quoted(detail: str) -> str:
    """A code span holding ``detail`` whatever it contains (Markdown has no escape inside
    one, so a backtick in it would end the span early)."""
    return "`" + detail.replace("`", "'") + "`"


#: The engine's commonest error, whole: a column not there and those that are. A Russian
#: reader met «такой колонки нет» over the English sentence naming them.
_NO_COLUMN = re.compile(r"Column '([^']+)' does not exist\. Available: (.+)\.")


def query_error_text(error: Mapping[str, Any], lang: str) -> str:
    """One reply for a query that did not run: what went wrong, where, and the engine's hint."""
    message = str(error.get("message") or "")
    hint = str(error.get("hint") or "")
    kind = ERROR_KINDS.get(str(error.get("error_type")), N_("error_invalid_query"))
    step = str(error.get("step") or "")
    # A stage of the whole query ("parse", "execute") is not a field the person wrote.
    field = "" if step in _NOT_FIELDS or not step else t("error_in_field", lang, field=quoted(step))
    missing = _NO_COLUMN.fullmatch(message.strip())
    if missing is not None:
        return t(
            "query_no_column",
            lang,
            name=quoted(missing.group(1)),
            field=field,
            columns=quoted(missing.group(2)),
            hint=hint_text(hint, lang),
        ).strip()
    return t(
        "query_failed",
        lang,
        detail=quoted(message),
        kind=t(kind, lang),
        field=field,
        hint=hint_text(hint, lang),
    ).strip()


def hint_text(hint: str, lang: str) -> str:
    """The engine's hint line: a guessed name asked in the person's words, any other hint
    quoted as written; "" for none."""
    if not hint:
        return ""
    guess = _GUESS.fullmatch(hint.strip())
    if guess is not None:
        return t("query_did_you_mean", lang, name=quoted(guess.group(1)))
    return t("query_hint", lang, detail=quoted(hint))


def json_error_text(reason: str, position: int | None, text: str, lang: str) -> str:
    """The JSON reader's complaint about ``text`` in the person's words, with where it broke."""
    key = _JSON_REASONS.get(reason)
    said = t(key, lang) if key else quoted(reason)
    if position is None:
        return said
    near = " ".join(text[position : position + NEAR_CHARS].split())
    where = t("json_at", lang, at=position + 1)
    if near:
        where = t("json_at_near", lang, at=position + 1, near=quoted(near))
    return f"{said} {where}"


def unreadable_text(unreadable: Unreadable, lang: str) -> str:
    """The reply to typed Barb Script that could not be read or was refused on sight."""
    params = unreadable.params
    if unreadable.key == "query_failed":
        return query_error_text(params["error"], lang)
    if unreadable.key == "query_bad_json":
        said = json_error_text(params["reason"], params["position"], params["text"], lang)
        return t("query_bad_json", lang, error=said).strip()
    return t(unreadable.key, lang, **params).strip()


__all__ = ["ERROR_KINDS", "json_error_text", "query_error_text", "quoted", "unreadable_text"]

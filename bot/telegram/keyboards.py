"""Inline keyboards. callback_data carries a prefix and a short id, never a query (64 bytes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from barb.i18n import decimal
from bot.texts import t

RUN = "r"
CANCEL = "c"
OPTION = "o"
SHOW_QUERY = "q"
HELD_FILE = "f"
INSTRUMENT = "i"
SETTING = "s"
FORGET_PREFERENCE = "p"
EXAMPLE = "x"
SEPARATOR = ":"
#: A button label's length, beyond which it is cut (``label``). Telegram sets no limit on a
#: label (the 64 bytes are callback_data's); this is about what a full-width button shows
#: whole on a desktop: a phone cuts it further, with its own "…".
LABEL_CHARS = 60
# Left off a label cut with "…": spaces, and punctuation that would dangle before it.
_TRAILING = " ,;:([{—–-"


def data(prefix: str, *parts: object) -> str:
    value = SEPARATOR.join([prefix, *(str(p) for p in parts)])
    if len(value.encode()) > 64:
        raise ValueError(f"callback_data over 64 bytes: {value!r}")
    return value


def parse(value: str) -> tuple[str, list[str]]:
    prefix, *parts = value.split(SEPARATOR)
    return prefix, parts


def confirm(action_id: str, lang: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(t("run_button", lang), callback_data=data(RUN, action_id)),
                InlineKeyboardButton(
                    t("cancel_button", lang), callback_data=data(CANCEL, action_id)
                ),
            ]
        ]
    )


def label(text: str, limit: int = LABEL_CHARS) -> str:
    """``text`` as a button's label: whole if it fits in ``limit`` characters, else cut at
    a word boundary with "…", e.g. "Какой ATR(14) сейчас и где он относительно…". Only the
    label: the press asks or answers with the whole text."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if text[limit - 1] != " " and " " in cut:
        cut = cut[: cut.rindex(" ")]  # no half word
    return cut.rstrip(_TRAILING) + "…"


def without(markup: InlineKeyboardMarkup, *gone: str) -> InlineKeyboardMarkup | None:
    """``markup`` less the buttons ``gone`` (their callback_data), None if none is left;
    ``markup`` itself when it has none of them."""
    rows = [[b for b in row if b.callback_data not in gone] for row in markup.inline_keyboard]
    if sum(map(len, rows)) == sum(map(len, markup.inline_keyboard)):
        return markup
    left = [row for row in rows if row]
    return InlineKeyboardMarkup(left) if left else None


def options(action_id: str, replies: list[str]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(label(r), callback_data=data(OPTION, action_id, i))]
            for i, r in enumerate(replies)
        ]
    )


def show_query(question_id: str, lang: str) -> InlineKeyboardMarkup:
    return answer(question_id, lang, query=True)


@dataclass(frozen=True)
class HeldCsv:
    """A CSV kept until its button is pressed: its proof's index in the answer, its rows,
    the rows it holds the first of when it was cut (0: all of them), and what tells it
    from the answer's other CSVs under the same message ("NQ"), if any."""

    proof: int
    rows: int
    cut_from: int = 0
    name: str = ""


def csv_label(rows: int, cut_from: int, lang: str) -> str:
    """A CSV's button: "CSV · 5 rows", or "CSV · first 50,000 of 1,774,380 rows"."""
    if cut_from > rows:
        return t(
            "csv_button_cut",
            lang,
            plural_of=cut_from,
            rows=decimal(rows, lang),
            total=decimal(cut_from, lang),
        )
    return t("csv_button", lang, plural_of=rows, rows=decimal(rows, lang))


def answer(
    question_id: str, lang: str, *, query: bool = False, csv: Sequence[HeldCsv] = ()
) -> InlineKeyboardMarkup:
    """The buttons under an answer: its CSVs kept until asked for, and the query behind it.
    One CSV sits beside Query; several, or one cut short (its longer label), each get a
    row of their own."""
    files = [
        InlineKeyboardButton(
            f"{held.name} · {csv_label(held.rows, held.cut_from, lang)}"
            if held.name
            else csv_label(held.rows, held.cut_from, lang),
            callback_data=data(HELD_FILE, question_id, held.proof),
        )
        for held in csv
    ]
    show = (
        [InlineKeyboardButton(t("query_button", lang), callback_data=data(SHOW_QUERY, question_id))]
        if query
        else []
    )
    if len(csv) == 1 and not csv[0].cut_from:
        return InlineKeyboardMarkup([[*files, *show]])
    return InlineKeyboardMarkup([*([button] for button in files), *([show] if show else [])])


def instruments(symbols: list[str], current: str) -> InlineKeyboardMarkup:
    row = [
        InlineKeyboardButton(("• " if s == current else "") + s, callback_data=data(INSTRUMENT, s))
        for s in symbols
    ]
    return InlineKeyboardMarkup([row])


def settings(
    confirm_on: bool,
    charts_on: bool,
    language_name: str,
    lang: str,
    forget: Sequence[tuple[int, str]] = (),
    *,
    personal: bool = True,
) -> InlineKeyboardMarkup:
    """The switches, then one button per remembered preference (``forget``: id, label) and
    one that forgets them all; ``personal=False`` (a group): the switches alone.
    ``language_name`` is the language setting as ``lang`` names it."""
    onoff = {True: t("switch_on", lang), False: t("switch_off", lang)}
    forget_all = [
        InlineKeyboardButton(t("forget_button", lang), callback_data=data(SETTING, "forget"))
    ]
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(
                    t("settings_confirm_button", lang, state=onoff[confirm_on]),
                    callback_data=data(SETTING, "confirm"),
                )
            ],
            [
                InlineKeyboardButton(
                    t("settings_charts_button", lang, state=onoff[charts_on]),
                    callback_data=data(SETTING, "charts"),
                )
            ],
            [
                InlineKeyboardButton(
                    t("settings_language_button", lang, language=language_name),
                    callback_data=data(SETTING, "language"),
                )
            ],
            *(
                [InlineKeyboardButton(label, callback_data=data(FORGET_PREFERENCE, pref_id))]
                for pref_id, label in forget
            ),
            *([forget_all] if personal else []),
        ]
    )


def examples(questions: list[str]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(label(q), callback_data=data(EXAMPLE, i))]
            for i, q in enumerate(questions)
        ]
    )

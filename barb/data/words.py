"""The importer's words to the person importing a file, from the ``barb`` catalog
(``locales/<lang>/LC_MESSAGES/barb.po``, keys ``import.*``).

The CLI speaks English; the bot's upload asks for the admin's language, so its report and
its refusals («строка 302: high 18102 ниже low 18103.», «столбцы не распознаны. Найдены:
a, b. …») read as the bot's own offer around them did. Prices and times are quoted as the
file wrote them in every language. A refusal raised deep in the reading, where the language
is not known, carries its key and values (``Refusal``) and is said where it is caught.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from barb.i18n import DEFAULT, N_, decimal, text

#: What a reader noticed about a file (a catalog key and its values), said later in the
#: report's language: ``("import.note.unix_seconds", {})``.
Note = tuple[str, dict[str, object]]
#: A message raised while reading a file: a catalog key and its values, said in the language
#: of whoever catches it (``check_file``'s), or a text already said (a library's own).
Message = str | Note
#: Where the person gives the import's options: on the command line (``barb data import``),
#: or in the caption of the file sent to the bot.
Advice = Literal["command", "caption"]

#: The advice that names an option, as the bot gives it: the admin cannot "pass --timezone
#: Asia/Dubai" to the bot, and reads «отправьте файл ещё раз с подписью `--timezone
#: Asia/Dubai`» instead. The CLI's words stay as they are.
CAPTION_ADVICE = {
    "import.clock.assumed": N_("import.caption.clock.assumed"),
    "import.refuse.interval_contradicts": N_("import.caption.interval_contradicts"),
    "import.refuse.interval_found": N_("import.caption.interval_found"),
    "import.refuse.level_known": N_("import.caption.level_known"),
    "import.refuse.level_stored": N_("import.caption.level_stored"),
    "import.refuse.memory": N_("import.caption.memory"),
    "import.refuse.no_header": N_("import.caption.no_header"),
    "import.refuse.no_zone": N_("import.caption.no_zone"),
    "import.refuse.no_zone_break": N_("import.caption.no_zone_break"),
    "import.refuse.no_zone_fixed": N_("import.caption.no_zone_fixed"),
    "import.refuse.no_zone_shifted": N_("import.caption.no_zone_shifted"),
    "import.refuse.no_zone_shifted_maybe": N_("import.caption.no_zone_shifted_maybe"),
    "import.refuse.zone_shifted": N_("import.caption.zone_shifted"),
    "import.refuse.append_shifted": N_("import.caption.append_shifted"),
    "import.refuse.cents": N_("import.caption.cents"),
    "import.refuse.date_order": N_("import.caption.date_order"),
    "import.refuse.date_order_contradicts": N_("import.caption.date_order_contradicts"),
    "import.refuse.date_order_day": N_("import.caption.date_order_day"),
    "import.refuse.fixed_zone": N_("import.caption.fixed_zone"),
    "import.refuse.header_fixed_offset": N_("import.caption.header_fixed_offset"),
    "import.refuse.own_zone": N_("import.caption.own_zone"),
    "import.refuse.stamp_unknown": N_("import.caption.stamp_unknown"),
    "import.refuse.ts_event_zone": N_("import.caption.ts_event_zone"),
    "import.refuse.unrecognised": N_("import.caption.unrecognised"),
    "import.refuse.zone_abbreviation": N_("import.caption.zone_abbreviation"),
    "import.refuse.zone_abbreviation_conflict": N_("import.caption.zone_abbreviation_conflict"),
    "import.refuse.zone_break": N_("import.caption.zone_break"),
    "import.refuse.zone_closed": N_("import.caption.zone_closed"),
    "import.refuse.zones_fit": N_("import.caption.zones_fit"),
    "import.refuse.zone_session": N_("import.caption.zone_session"),
    "import.refuse.zone_session_end": N_("import.caption.zone_session_end"),
}


@dataclass(frozen=True)
class ImportWords:
    """The importer's words in one language: ``words("import.line", line=302)`` gives
    "line 302" in English and "строка 302" in Russian."""

    language: str = DEFAULT
    advice: Advice = "command"  # "caption": options are advised as the bot takes them

    def __call__(self, key: str, *, plural_of: float | None = None, **values: object) -> str:
        if self.advice == "caption":
            key = CAPTION_ADVICE.get(key, key)
        return text("barb", key, self.language, plural_of=plural_of, **values)

    def count(self, value: float) -> str:
        """A count as the language groups it: ``20,700`` / ``20 700``."""
        return decimal(value, self.language)

    def note(self, note: Note) -> str:
        """A note said; a value that is itself a note is said first: ``("import.refuse.zone_break",
        {"found": ("import.zone", {...}), …})``."""
        key, values = note
        return self(key, **{name: self.say(value) for name, value in values.items()})

    def say(self, message: object) -> object:
        """A ``Message`` in this language (anything else as it is)."""
        if isinstance(message, tuple) and len(message) == 2 and isinstance(message[1], dict):
            return self.note(message)
        return message


ENGLISH = ImportWords()


def said(message: Message) -> str:
    """A message in English, as the CLI and the logs show it."""
    return str(ENGLISH.say(message))


class Refusal(Exception):
    """A problem found while reading a file, said later in the reader's language:
    ``message`` is English, ``said`` the key and values for ``ImportWords.say``."""

    def __init__(self, message: Message):
        self.said = message
        self.message = said(message)
        super().__init__(self.message)

"""The importer's words to the person importing a file, from the ``barb`` catalog
(``locales/<lang>/LC_MESSAGES/barb.po``, keys ``import.*``).

The CLI speaks English; the bot's upload asks for the admin's language, so its report and
its refusals («строка 302: high 18102 ниже low 18103.») read as the bot's own offer around
them did. Prices and times are quoted as the file wrote them in every language.
"""

from __future__ import annotations

from dataclasses import dataclass

from barb.i18n import DEFAULT, decimal, text

#: What a reader noticed about a file (a catalog key and its values), said later in the
#: report's language: ``("import.note.unix_seconds", {})``.
Note = tuple[str, dict[str, object]]


@dataclass(frozen=True)
class ImportWords:
    """The importer's words in one language: ``words("import.line", line=302)`` gives
    "line 302" in English and "строка 302" in Russian."""

    language: str = DEFAULT

    def __call__(self, key: str, *, plural_of: float | None = None, **values: object) -> str:
        return text("barb", key, self.language, plural_of=plural_of, **values)

    def count(self, value: float) -> str:
        """A count as the language groups it: ``20,700`` / ``20 700``."""
        return decimal(value, self.language)

    def note(self, note: Note) -> str:
        key, values = note
        return self(key, **values)


ENGLISH = ImportWords()

"""Every word Barb itself shows a person, from gettext catalogs, and numbers in their locale.

The catalogs are ``locales/<lang>/LC_MESSAGES/<domain>.po``, one domain per layer: ``barb``
(the engine's words: charts, timeframes) and ``bot`` (the bot's messages, buttons, plans).
A msgid is a stable key (``plan_header``, ``median``) and each language, English
included, has its own translation, so a text can change in one language without renaming
it in the code. The ``.po`` files are read at run time with Babel, so a fresh clone needs
no compile step. ``locales/<domain>.pot`` is what ``pybabel extract`` finds in the code
(``make catalogs``); the tests check that code, template and both catalogs hold the same keys.

Texts are ``str.format`` templates (``{name}``); numbers and dates are formatted by the
caller with :func:`decimal`, :func:`percent`, :func:`money` and :func:`day`, which use
Babel's data for the locale (``1 234,5`` in Russian, with a no-break space), never by the
template.
"""

from __future__ import annotations

import datetime as dt
import re
from contextlib import AbstractContextManager
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext
from functools import cache
from pathlib import Path
from typing import Literal

from babel import Locale, UnknownLocaleError
from babel.dates import format_date
from babel.messages.pofile import read_po
from babel.numbers import (
    NumberFormatError,
    NumberPattern,
    format_compact_decimal,
    format_currency,
    format_decimal,
    get_decimal_symbol,
    parse_decimal,
    parse_pattern,
)

from barb.settings import PROJECT_ROOT

Language = Literal["en", "ru"]
Domain = Literal["barb", "bot"]
#: The languages Barb speaks; the first is everyone else's.
LANGUAGES: tuple[Language, ...] = ("en", "ru")
DEFAULT: Language = LANGUAGES[0]
LOCALES_DIR = PROJECT_ROOT / "locales"
# One form of a word by CLDR plural category: "few=пункта".
_PLURAL_FORM = re.compile(r"^(?:zero|one|two|few|many|other)=")


def N_(key: str) -> str:
    """Marks a catalog key written away from its lookup (in a table), so that
    ``pybabel extract`` finds it; returns it unchanged (gettext's ``gettext_noop``)."""
    return key


def language(code: str | None) -> Language:
    """The Barb language for a language code (``ru-RU`` → ``ru``); English for any other."""
    short = (code or "").split("-")[0].split("_")[0].lower()
    return next((lang for lang in LANGUAGES if lang == short), DEFAULT)


def catalog_path(domain: Domain, lang: str, root: Path = LOCALES_DIR) -> Path:
    return root / lang / "LC_MESSAGES" / f"{domain}.po"


@cache
def messages(domain: Domain, lang: str, root: Path = LOCALES_DIR) -> dict[str, str]:
    """The translated messages of one catalog (untranslated ones left out)."""
    with catalog_path(domain, lang, root).open("rb") as fh:
        po = read_po(fh, locale=lang, domain=domain)
    return {m.id: m.string for m in po if m.id and isinstance(m.string, str) and m.string}


def text(
    domain: Domain,
    key: str,
    lang: str | None = DEFAULT,
    *,
    plural_of: float | Decimal | None = None,
    ordinal_of: float | Decimal | None = None,
    **values: object,
) -> str:
    """The text ``key`` in ``lang`` with ``values`` filled in; a text written as plural forms
    (:func:`plural`) takes the one for ``plural_of``, or for the ordinal ``ordinal_of``
    ("one={value}st|two={value}nd|few={value}rd|other={value}th"). A key missing from a
    language falls back to English (the tests keep Russian complete); an unknown key is a
    bug and raises ``KeyError``."""
    chosen = language(lang)
    found = messages(domain, chosen).get(key)
    if found is None:
        chosen, found = DEFAULT, messages(domain, DEFAULT)[key]
    if ordinal_of is not None:
        return plural(found, ordinal_of, chosen, ordinal=True).format(**values)
    return plural(found, plural_of, chosen).format(**values)


@cache
def _locale(lang: Language) -> Locale:
    return Locale.parse(lang)


@cache
def _fixed(decimals: int) -> NumberPattern:
    """Grouped digits with exactly ``decimals`` after the point (parsed once: a chart
    formats hundreds of tick labels)."""
    return parse_pattern("#,##0" + ("." + "0" * decimals if decimals else ""))


@cache
def _percent(lang: Language, decimals: int) -> NumberPattern:
    """The locale's percent pattern ("#,##0%", "#,##0 %") with ``decimals`` digits."""
    pattern = _locale(lang).percent_formats[None].pattern
    if decimals:  # its one integer zero takes the decimals after it
        pattern = pattern.replace("0", "0." + "0" * decimals, 1)
    return parse_pattern(pattern)


def decimal(value: float, lang: str | None = DEFAULT, decimals: int | None = None) -> str:
    """A number as the locale writes it: ``1,234.5`` / ``1 234,5``; ``decimals`` fixes the
    digits after the point (else Babel's default, up to three)."""
    locale = _locale(language(lang))
    with _half_away():
        if decimals is None:
            return format_decimal(value, locale=locale)
        return _fixed(decimals).apply(value, locale)


def decimal_mark(code: str | None) -> str:
    """The decimal mark of the locale ``code`` names, from Babel's number symbols: "." for
    ``en``, "," for ``ru`` (and ``de``, ``pt-BR``…); English's for a code Babel does not
    know. Any locale, not only the languages Barb speaks: it is how the person's spreadsheet
    reads a number."""
    try:
        locale = Locale.parse((code or DEFAULT).replace("-", "_"))
    except (ValueError, UnknownLocaleError):
        locale = _locale(DEFAULT)
    return get_decimal_symbol(locale)


def _half_away() -> AbstractContextManager[Context]:
    """Babel rounds in the decimal context, half to even by default: NQ's quarter points
    read −293.2 for −293.25 and 390.2 for 390.25, yet 535.8 for 535.75. A half rounds away
    from zero, as round() in Barb Script does; Babel takes a float's shortest decimal
    string (0.145 is "0.145"), so a tie is a tie as written."""
    return localcontext(rounding=ROUND_HALF_UP)


def millions(value: float, lang: str | None = DEFAULT) -> str:
    """A number in millions in the locale's short form: ``2.4M`` / ``2,4 млн``, and
    ``0.5M`` rather than ``500K``, so that an axis reads in one unit."""
    chosen = language(lang)
    one = format_compact_decimal(1_000_000, format_type="short", locale=_locale(chosen))
    return decimal(value / 1_000_000, chosen) + one.removeprefix("1")


def percent(points: float, lang: str | None = DEFAULT, decimals: int = 0) -> str:
    """A value already in percent (``5.06`` for 5.06 %) in the locale's percent pattern:
    ``5.06%`` / ``5,06 %`` (Russian puts a no-break space before the sign)."""
    chosen = language(lang)
    with _half_away():
        return _percent(chosen, decimals).apply(points / 100, _locale(chosen))


def shown_number(written: str, lang: str | None = DEFAULT) -> Decimal | None:
    """The number ``written`` says as the locale writes it (``4 810``, ``−0,25``), with
    the decimals it shows; None for anything else. A plural is chosen from it: 4 809.9
    shown as "4 810" takes "контрактов", as the number read does."""
    try:
        return parse_decimal(written.replace("\u2212", "-"), locale=language(lang), strict=True)
    except NumberFormatError:
        return None


def plural(
    forms: str, value: float | Decimal | None, lang: str | None = DEFAULT, *, ordinal: bool = False
) -> str:
    """The word for ``value`` of a catalog text written as CLDR plural forms,
    ``one=пункт|few=пункта|many=пунктов|other=пункта``: 1 пункт, 2 пункта, 5 пунктов,
    168,2 пункта (Babel's rules, which know fractions as gettext's integer formula does
    not); of an ``ordinal``, CLDR's ordinal forms (1st, 2nd, 3rd, 100th). A text without
    forms is the word itself; no value takes ``other``."""
    parts = forms.split("|")
    if not all(_PLURAL_FORM.match(part) for part in parts):
        return forms
    table = dict(part.split("=", 1) for part in parts)
    locale = _locale(language(lang))
    rule = locale.ordinal_form if ordinal else locale.plural_form
    category = "other" if value is None else rule(abs(value))
    return table.get(category, table["other"])


def day(value: dt.date, lang: str | None = DEFAULT) -> str:
    """A date as the locale writes it in full sentences: ``Jan 2, 2008`` /
    ``2 янв. 2008 г.``."""
    return format_date(value, format="medium", locale=language(lang))


def money(usd: float, lang: str | None = DEFAULT, decimals: int = 4) -> str:
    """US dollars to ``decimals`` places (model calls cost fractions of a cent):
    ``$0.0123`` / ``$0,0123``."""
    pattern = "¤#,##0." + "0" * decimals
    return format_currency(usd, "USD", format=pattern, currency_digits=False, locale=language(lang))

"""The caption of a file of bars an admin sends: the instrument and the import options,
written as on the command line (``ES --timezone Asia/Dubai --interval 5m``).

A Dubai-time file, 5-minute bars or close-stamped bars were refused with "pass --timezone
Asia/Dubai", which the bot gave no way to do: such a file could not be imported through the
bot at all. The caption is read strictly: from its first option on, ``shlex.split``, then
only the options of ``barb data import`` that describe the file (never ``--replace`` or
``--check``: whether Import appends or replaces is the offer's) and ``--fill-volumes``
(Import then only fills in the volumes of stored dates that have none, as the command
does: data mixing dates with and without volumes had no way to be mended from the bot),
each value checked by the importer's own code
before the file is fetched. Anything else starting with a dash, or an option with an empty
value, is refused in one sentence naming it, nothing staged. Words that are not options are
the admin's ("ES please", the bot's @name): the first that names an instrument is the
instrument. Nothing in a caption is ever evaluated.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from barb.data.importer import check_options, parse_interval
from barb.data.layouts import DateOrder, Stamp
from barb.data.words import ImportWords
from barb.errors import BarbError
from barb.i18n import N_
from bot.texts import t

#: The caption's options and the ``check_file`` argument each sets.
OPTIONS = {
    "--instrument": "symbol",
    "-i": "symbol",
    "--timezone": "timezone",
    "--interval": "interval",
    "--stamp": "stamp",
    "--date-order": "date_order",
    "--format": "fmt",
    "--columns": "columns",
}
#: The caption's options that take no value, and the ``UploadOptions`` field each sets True:
#: ``check_file``'s argument, or (``--fill-volumes``) what Import does.
SWITCHES = {"--any-level": "any_level", "--fill-volumes": "fill_volumes"}
FLAGS = {name: flag for flag, name in reversed((OPTIONS | SWITCHES).items())}  # "fmt" -> "--format"
#: ``--stamp``'s values and what each makes of the file's times.
STAMPS = {"open": N_("upload_option_stamp_open"), "close": N_("upload_option_stamp_close")}
#: ``--date-order``'s values and what each makes of the file's dates.
DATE_ORDER_WORDS = {
    "month-first": N_("upload_option_month_first"),
    "day-first": N_("upload_option_day_first"),
}
# Phones and Macs turn a typed "--" into a dash: "—timezone" is still the option.
_DASHED = re.compile(r"(?<!\S)[—–](?=[A-Za-z])")
_OPTION = re.compile(r"-{1,2}[A-Za-z]")
#: A word written as a futures ticker ("GC", "MGC", "GCZ4", "GC1!"): a caption naming one
#: Barb does not have is refused, not taken as the chat's instrument. Gold sent as "GC" was
#: checked as NQ bars and refused only for its level, with "send it again with --any-level",
#: which imported it as NQ.
_TICKER = re.compile(r"(?P<root>[A-Z]{1,4}?)(?:[FGHJKMNQUVXZ]\d{1,2}|\d!)?")
#: Capitalised words of a caption that are no ticker.
_NOT_TICKERS = frozenset(
    {"A", "I", "OK", "CSV", "TXT", "ZIP", "GZ", "ETH", "RTH", "UTC", "GMT", "EST", "EDT", "CST"}
    | {"CDT", "ET", "CT", "NY", "FX", "MT", "PLS", "PLZ", "THX", "ASAP", "TV", "IB", "NT"}
)
#: Where the options begin: the first word that is one.
_FIRST_OPTION = re.compile(r"(?<!\S)-{1,2}[A-Za-z]")


class CaptionError(Exception):
    """A caption that is not understood: ``str`` is one sentence in the admin's language."""


class UploadOptions(BaseModel):
    """The options a file was checked with; the offer keeps them, so Import reads the file
    exactly as its check did."""

    model_config = ConfigDict(frozen=True)

    timezone: str | None = None
    interval: str | None = None
    stamp: Stamp | None = None
    date_order: DateOrder | None = None
    fmt: str | None = None
    columns: str | None = None
    any_level: bool | None = None  # None when not given, so ``arguments`` leaves it out
    # Import fills in the volumes of the stored dates that have none, and nothing else.
    fill_volumes: bool | None = None

    def given(self) -> dict[str, str | bool]:
        """The options the caption set: ``{"timezone": "Asia/Dubai", "fill_volumes": True}``."""
        return self.model_dump(exclude_none=True)

    def arguments(self) -> dict[str, str | bool]:
        """The ``check_file`` keyword arguments that are set: ``{"timezone": "Asia/Dubai"}``."""
        return self.model_dump(exclude_none=True, exclude={"fill_volumes"})

    def command(self) -> str:
        """As written on the command line: ``--timezone Asia/Dubai --interval 5m``."""
        return shlex.join(
            part
            for name, value in self.given().items()
            for part in ((FLAGS[name],) if value is True else (FLAGS[name], str(value)))
        )

    def described(self, lang: str) -> str:
        """What they make of the file: "read as Asia/Dubai time, 5-minute bars"."""
        parts = []
        if self.timezone:
            parts.append(t("upload_option_timezone", lang, zone=self.timezone))
        if self.interval:
            minutes = parse_interval(self.interval)
            parts.append(t("upload_option_interval", lang, minutes=minutes))
        if self.stamp:
            parts.append(t(STAMPS[self.stamp], lang))
        if self.date_order:
            parts.append(t(DATE_ORDER_WORDS[self.date_order], lang))
        if self.fmt:
            parts.append(t("upload_option_format", lang, format=self.fmt))
        if self.columns:
            parts.append(t("upload_option_columns", lang, columns=self.columns))
        if self.any_level:
            parts.append(t("upload_option_any_level", lang))
        if self.fill_volumes:
            parts.append(t("upload_option_fill_volumes", lang))
        return ", ".join(parts)


@dataclass(frozen=True)
class Caption:
    symbol: str | None  # None: the chat's instrument
    options: UploadOptions = field(default_factory=UploadOptions)


def read_caption(caption: str | None, symbols: set[str], lang: str) -> Caption:
    """The instrument and options of a caption, or ``CaptionError``.

    >>> read_caption("ES --timezone Asia/Dubai --interval=5m", {"ES", "NQ"}, "en")
    Caption(symbol='ES', options=UploadOptions(timezone='Asia/Dubai', interval='5m', ...))
    """
    text = _DASHED.sub("--", caption or "")
    # The words before the first option are prose, split on spaces: its apostrophes are no
    # quotes. shlex paired the two of "Monday's ES bars, Tuesday's too" into one token, ES
    # was not found, and the file was offered as the chat's instrument (p46b #5).
    first = _FIRST_OPTION.search(text)
    cut = len(text) if first is None else first.start()
    try:
        tokens = text[:cut].split() + shlex.split(text[cut:])
    except ValueError:  # "No closing quotation" among the options: what is quoted is unclear
        raise CaptionError(t("upload_caption_quote", lang)) from None
    given: dict[str, str] = {}
    named: str | None = None  # an instrument among the words
    unknown: str | None = None  # the first word written as a ticker Barb does not have
    tokens.reverse()
    while tokens:
        token = tokens.pop()
        if not _OPTION.match(token):
            word = token.strip(",.;:!?\"'()").upper()  # "ES, please"
            ticker = _TICKER.fullmatch(token.strip(",.;:?\"'()"))  # "ESM4", "NQ1!" too
            if named is None and word in symbols:
                named = word
            elif named is None and ticker and ticker["root"] in symbols:
                named = ticker["root"]
            elif unknown is None and ticker and ticker[0] not in _NOT_TICKERS:
                unknown = ticker[0]
            continue
        flag, has_value, value = token.partition("=")
        if flag in SWITCHES and not has_value:
            if SWITCHES[flag] in given:
                raise CaptionError(t("upload_caption_twice", lang, option=flag))
            given[SWITCHES[flag]] = "true"
            continue
        name = OPTIONS.get(flag)
        if name is None:
            known = ", ".join(
                f for f, n in (OPTIONS | SWITCHES).items() if f.startswith("--") and n != "symbol"
            )
            raise CaptionError(t("upload_caption_unknown", lang, option=flag, known=known))
        if name in given:
            raise CaptionError(t("upload_caption_twice", lang, option=flag))
        if not has_value:
            if not tokens or _OPTION.match(tokens[-1]):
                raise CaptionError(t("upload_caption_no_value", lang, option=flag))
            value = tokens.pop()
        if not value.strip():  # --columns '' read as no mapping, --stamp "" as "not ."
            raise CaptionError(t("upload_caption_no_value", lang, option=flag))
        given[name] = value
    symbol = given.pop("symbol", None)
    if symbol is None and named is None and unknown is not None:
        symbol = unknown  # refused below: the file is not the chat's instrument's
    if symbol is not None and symbol.upper() not in symbols:
        known = ", ".join(sorted(symbols))
        raise CaptionError(t("upload_caption_symbol", lang, symbol=symbol, known=known))
    if given.get("stamp", "open") not in STAMPS:
        raise CaptionError(t("upload_caption_stamp", lang, value=given["stamp"]))
    try:  # the importer's own checks, said as the bot advises
        check_options(
            timezone=given.get("timezone"),
            interval=given.get("interval"),
            fmt=given.get("fmt"),
            columns=given.get("columns"),
            date_order=given.get("date_order"),
            words=ImportWords(lang, "caption"),
        )
    except BarbError as exc:
        raise CaptionError(str(exc)) from None
    options = UploadOptions.model_validate(given)
    return Caption(symbol.upper() if symbol else named, options)

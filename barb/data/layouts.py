"""The one registry of vendor file layouts Barb imports, and how a file's layout is found.

A layout names the columns it needs (each with the header spellings vendors use), how its
times are written, whether a header row exists, and whether bars are stamped at their open
or their close. Detection tries the layouts in registry order; ``--columns`` builds a custom
layout from a mapping the person gives; ``docs/data.md`` documents each entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from barb.data.words import Refusal
from barb.i18n import N_

TimeKind = Literal["timestamp", "split", "ts_event", "compact", "ib"]
Stamp = Literal["open", "close"]
#: Which comes first in a date such as 03/04/2024 (``--date-order``): told by the file
#: itself only when a day is over 12 (03/13/2024).
DateOrder = Literal["month-first", "day-first"]
DATE_ORDERS: tuple[DateOrder, ...] = ("month-first", "day-first")

PRICES = ("open", "high", "low", "close")
CANONICAL = ("timestamp", "date", "time", "ts_event", *PRICES, "volume")


@dataclass(frozen=True)
class Layout:
    name: str
    title: str  # as a person knows the file ("Sierra Chart intraday text export")
    # canonical column -> accepted header names (lower case); for headerless layouts, the
    # canonical names in field order.
    columns: dict[str, tuple[str, ...]]
    time: TimeKind
    header: bool = True
    stamp: Stamp = "open"
    optional: tuple[str, ...] = ()  # canonical columns that may be absent
    # Headerless layouts: the first line must match this.
    first_line: re.Pattern[str] | None = None
    example: str = ""
    delimiter: str | None = None  # fixed delimiter of headerless layouts
    # Header names (as ``column_key`` writes them) the vendor always adds beside the bars,
    # which tell its layout from another's with the same bar columns: IB's ``date`` column
    # is its timestamp only beside ``average`` and ``barCount``.
    marks: tuple[str, ...] = ()

    def needed(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.optional)


#: Each layout's title in the report's language, by the layout's name (``Layout.title`` is
#: the English, kept for the CLI's refusals).
TITLE_WORDS = {
    "databento": N_("import.layout.databento"),
    "sierra": N_("import.layout.sierra"),
    "split": N_("import.layout.split"),
    "tradingview": N_("import.layout.tradingview"),
    "plain": N_("import.layout.plain"),
    "ninjatrader": N_("import.layout.ninjatrader"),
    "kibot": N_("import.layout.kibot"),
    "firstrate": N_("import.layout.firstrate"),
    "barchart": N_("import.layout.barchart"),
    "metatrader": N_("import.layout.metatrader"),
    "ib": N_("import.layout.ib"),
    "ib_insync": N_("import.layout.ib_insync"),
    "custom": N_("import.layout.custom"),
}


def _same(*names: str) -> dict[str, tuple[str, ...]]:
    return {n: (n,) for n in names}


#: How the layouts whose volume column is optional find it: MetaTrader 5's <VOL>, Excel
#: users' "Vol", investing.com's "Vol.". A "Vol" column beside a timestamp was not taken,
#: and every volume was stored as 0 under "the file has no volume column".
VOLUME = {"volume": ("volume", "vol", "vol.")}
#: TradeStation writes a bar's volume as two columns, the volume traded on upticks and on
#: downticks ("Up","Down", or "UpVol","DownVol"), with no "Volume": the volume is their sum.
#: Read only when the file has no volume column and both are there (``match_header``); they
#: were ignored, and every bar stored with volume 0 under "the file has no volume column".
UP_DOWN = {
    "up_volume": ("up", "upvol", "upvolume"),
    "down_volume": ("down", "downvol", "downvolume"),
}


LAYOUTS: dict[str, Layout] = {
    layout.name: layout
    for layout in (
        Layout(
            "databento",
            "Databento OHLCV-1m",
            _same("ts_event", *PRICES, "volume"),
            "ts_event",
            example="ts_event,rtype,publisher_id,instrument_id,open,high,low,close,volume,symbol",
        ),
        Layout(
            "sierra",
            "Sierra Chart intraday text export",
            {**_same("date", "time", "open", "high", "low"), "close": ("last",)} | _same("volume"),
            "split",
            example="Date, Time, Open, High, Low, Last, Volume, NumberOfTrades, BidVolume, "
            "AskVolume",
        ),
        Layout(
            "split",
            "Date and Time columns",
            # MetaTrader 5 writes <VOL> (exchange volume) beside <TICKVOL>.
            {**_same("date", "time", *PRICES), **VOLUME, **UP_DOWN},
            "split",
            # Before TradingView's, so that a Date,Time file without volume (TradeStation's
            # Up/Down columns) is not read as TradingView's single time column.
            optional=("volume", *UP_DOWN),
            example="Date,Time,Open,High,Low,Close,Volume",
        ),
        Layout(
            "tradingview",
            "TradingView chart export",
            {**_same("time", *PRICES), **VOLUME},
            "timestamp",
            optional=("volume",),
            example="time,open,high,low,close,Volume",
        ),
        Layout(
            # Barchart's historical download: the close is "Last", beside the day's "Change"
            # and "%Chg"; newest bar first, and a "Downloaded from Barchart.com" footer.
            "barchart",
            "Barchart historical data download",
            {"timestamp": ("time",), **_same("open", "high", "low"), "close": ("last",)} | VOLUME,
            "timestamp",
            optional=("volume",),
            marks=("change", "%chg"),
            example="Time,Open,High,Low,Last,Change,%Chg,Volume",
        ),
        Layout(
            # TWS and its API (reqHistoricalData written as it comes): "20240318 09:30:00
            # US/Eastern", "20240318  09:30:00" without a zone, "20240318" for daily bars.
            "ib",
            "Interactive Brokers TWS export",
            {"timestamp": ("date",), **_same(*PRICES, "volume")},
            "ib",
            marks=("average", "barcount"),
            example="date,open,high,low,close,volume,average,barCount",
        ),
        Layout(
            # ib_insync's util.df(bars).to_csv(): IB's columns (and pandas' index), the
            # times ISO with their offset ("2024-03-03 17:00:00-06:00"). The same header as
            # TWS's: taken for it by the reader when the first time is ISO.
            "ib_insync",
            "ib_insync (Interactive Brokers API) CSV",
            {"timestamp": ("date",), **_same(*PRICES, "volume")},
            "timestamp",
            marks=("average", "barcount"),
            example=",date,open,high,low,close,volume,average,barCount",
        ),
        Layout(
            # After IB's, whose "date" column is its time beside "average" and "barCount".
            # "Date" holding the date and time in one cell (pandas' and many platforms'
            # exports) was "unrecognised columns"; a daily file's "Date" is refused as daily.
            "plain",
            "one timestamp column",
            {"timestamp": ("timestamp", "datetime", "date"), **_same(*PRICES), **VOLUME},
            "timestamp",
            # A file without volume (many exports of daily or index bars) gets volume 0 and
            # the report says so, as the split and TradingView layouts do.
            optional=("volume",),
            example="timestamp,open,high,low,close,volume",
        ),
        Layout(
            "ninjatrader",
            "NinjaTrader 8 text export",
            _same("timestamp", *PRICES, "volume"),
            "compact",
            header=False,
            stamp="close",
            first_line=re.compile(r"^\d{8} \d{6};"),
            delimiter=";",
            example="20240105 093100;16850.25;16852;16849.5;16851.75;412",
        ),
        Layout(
            # MetaTrader 4's History Center export: its last column counts ticks, not
            # contracts, so it is not read as the volume (``formats.from_table`` says so).
            "metatrader",
            "MetaTrader 4 history export, no header",
            _same("date", "time", *PRICES),
            "split",
            header=False,
            first_line=re.compile(r"^\d{4}\.\d\d\.\d\d,\d\d:\d\d(:\d\d)?,"),
            delimiter=",",
            example="2024.01.05,09:30,16850.25,16852,16849.5,16851.75,412",
        ),
        Layout(
            # FirstRate Data's futures files (NQ_1min.txt): one date-time field, US
            # Eastern bar opens. Was "no header row, … not a layout Barb knows".
            "firstrate",
            "FirstRate Data, no header",
            _same("timestamp", *PRICES, "volume"),
            "timestamp",
            header=False,
            first_line=re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?,"),
            delimiter=",",
            example="2024-01-05 09:30:00,16850.25,16852,16849.5,16851.75,412",
        ),
        Layout(
            "kibot",
            "Kibot-style, no header",
            _same("date", "time", *PRICES, "volume"),
            "split",
            header=False,
            first_line=re.compile(r"^\d{1,2}/\d{1,2}/\d{4},\d{1,2}:\d\d(:\d\d)?,"),
            delimiter=",",
            example="01/05/2024,09:30,16850.25,16852,16849.5,16851.75,412",
        ),
    )
}
FORMATS: tuple[str, ...] = (*LAYOUTS, "parquet")

# A custom layout from --columns: which canonical columns make a complete set of times.
TIME_SETS: tuple[tuple[TimeKind, tuple[str, ...]], ...] = (
    ("timestamp", ("timestamp",)),
    ("split", ("date", "time")),
    ("ts_event", ("ts_event",)),
)


class LayoutError(Refusal):
    """The columns fit no layout (or not the one asked for); the message says what to pass."""


def parse_columns_option(text: str) -> dict[str, str]:
    """``timestamp=Time,open=O,…`` -> {canonical: header name}."""
    mapping: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not sep or not value:
            raise LayoutError((N_("import.refuse.columns_pair"), {"part": repr(part.strip())}))
        if key not in CANONICAL:
            raise LayoutError(
                (
                    N_("import.refuse.columns_unknown"),
                    {"column": repr(key), "known": ", ".join(CANONICAL)},
                )
            )
        mapping[key] = value
    return mapping


def custom_layout(mapping: dict[str, str], found: list[str], stamp: Stamp) -> Layout:
    """The layout ``--columns`` describes, checked against the header's columns."""
    lower = {column_key(c) for c in found}
    missing_names = [v for v in mapping.values() if column_key(v) not in lower]
    if missing_names:
        raise LayoutError(
            (
                N_("import.refuse.columns_absent"),
                {"names": ", ".join(missing_names), "found": ", ".join(found)},
            )
        )
    kind = next((k for k, cols in TIME_SETS if all(c in mapping for c in cols)), None)
    if kind is None:
        raise LayoutError((N_("import.refuse.columns_no_time"), {}))
    absent = [p for p in PRICES if p not in mapping]
    if absent:
        raise LayoutError((N_("import.refuse.columns_lacks"), {"prices": ", ".join(absent)}))
    names = {c: (column_key(mapping[c]),) for c in mapping}
    # Without volume=… the bars get volume 0 and the report says so, as TradingView's do.
    return Layout(
        "custom", "columns given with --columns", names, kind, stamp=stamp, optional=("volume",)
    )


#: Column names as Russian terminals and spreadsheets write them (QUIK's and Excel's
#: «Дата;Время;Открытие;Максимум;Минимум;Закрытие;Объём»), as ``column_key`` writes them,
#: by the English name every layout takes: such a file was "unrecognised columns". «ё» is
#: read as «е» first (Объём, Объем). Finam's and QUIK's ``<DATE>,<TIME>,<OPEN>…<VOL>`` are
#: English already.
RUSSIAN = {
    "дата": "date",
    "время": "time",
    "датаивремя": "datetime",
    "датавремя": "datetime",
    "дата/время": "datetime",
    "открытие": "open",
    "откр": "open",
    "откр.": "open",
    "ценаоткрытия": "open",
    "максимум": "high",
    "макс": "high",
    "макс.": "high",
    "минимум": "low",
    "мин": "low",
    "мин.": "low",
    "закрытие": "close",
    "закр": "close",
    "закр.": "close",
    "ценазакрытия": "close",
    "объем": "volume",
    "об": "volume",
    "об.": "volume",
    "объемторгов": "volume",
}


def column_key(name: str) -> str:
    """A header name as matched: without regard to case, spaces or MetaTrader's angle
    brackets ("Date Time" = datetime, "<DATE>" = date), nor the zone it names ("Time (UTC)"
    = time: ``header_zone``); a Russian name as its English ("Объём" = volume)."""
    key = re.sub(r"[\s<>]+", "", header_zone(name)[0]).lower().replace("ё", "е")
    return RUSSIAN.get(key, key)


#: Zones a header may name beside a time column, by how it names them (lower case); an
#: IANA name ("Time (America/Chicago)") is taken as well.
HEADER_ZONES = {
    "utc": "UTC",
    "gmt": "UTC",
    "et": "America/New_York",
    "ct": "America/Chicago",
    # A header's "EST"/"CST" is the vendor's name for the exchange's clock, written all year
    # as IB's stamps do: read as the region's zone, clock changes included. Times kept on a
    # fixed UTC-5 instead fall an hour off it in summer and are refused by the clock checks.
    "est": "America/New_York",
    "edt": "America/New_York",
    "cst": "America/Chicago",
    "cdt": "America/Chicago",
    # A platform set to the trader's own clock: "Time (MST)" was "unrecognised columns".
    "mst": "America/Denver",
    "mdt": "America/Denver",
    "pst": "America/Los_Angeles",
    "pdt": "America/Los_Angeles",
    # Russian terminals' «Время (МСК)».
    "мск": "Europe/Moscow",
}
#: What the header's abbreviation means taken literally: one offset from UTC all year
#: (POSIX signs: Etc/GMT+5 is UTC-5). Times kept so under "Time (EST)" are refused as New
#: York time in summer; the refusal advised America/Chicago, right only until November.
HEADER_FIXED = {
    "est": "Etc/GMT+5",
    "edt": "Etc/GMT+4",
    "cst": "Etc/GMT+6",
    "cdt": "Etc/GMT+5",
    "mst": "Etc/GMT+7",  # Arizona's clock all year (America/Phoenix)
    "mdt": "Etc/GMT+6",
    "pst": "Etc/GMT+8",
    "pdt": "Etc/GMT+7",
}
# "Time (UTC)", "Time [America/Chicago]", "timestamp UTC", "datetime_utc"; "Gmt time"
# (Dukascopy's). Only a time column's name: "High_ct" is no high in Chicago.
_TIME_NAME = (
    r"(?P<name>time|date|date\s*time|datetime|timestamp|ts_event|дата\s*и\s*время|время|дата)"
)
_NAMED_ZONE = re.compile(
    rf"^\s*{_TIME_NAME}(?:\s*\((?P<a>[^()]+)\)|\s*\[(?P<b>[^\[\]]+)\]|[\s_]+(?P<c>[\w/+-]+))\s*$",
    re.I,
)
_ZONE_FIRST = re.compile(rf"^\s*(?P<zone>gmt|utc)[\s_-]+{_TIME_NAME}\s*$", re.I)


def header_zone(name: str) -> tuple[str, str | None]:
    """A header name without the zone it names, and that zone (an IANA name), or the name
    as it is and None: "Time (UTC)" -> ("Time", "UTC"), "Gmt time" -> ("time", "UTC"),
    "Time (CT)" -> ("Time", "America/Chicago"). Such headers were "unrecognised columns"."""
    first = _ZONE_FIRST.match(name)
    if first:
        return first["name"], "UTC"
    found = _NAMED_ZONE.match(name)
    if not found:
        return name, None
    word = (found["a"] or found["b"] or found["c"]).strip()
    zone = HEADER_ZONES.get(word.lower())
    if zone is None and "/" in word:
        zone = _iana(word)
    return (found["name"], zone) if zone else (name, None)


def named_zone(names: list[str], indexes: dict[str, int]) -> str | None:
    """The zone the header names beside the file's time columns ("Time (UTC)"), or None;
    ``LayoutError`` when its date and time columns name two."""
    zones = {
        zone
        for column, i in indexes.items()
        if column in ("timestamp", "date", "time", "ts_event")
        and (zone := header_zone(names[i])[1]) is not None
    }
    if len(zones) > 1:
        raise LayoutError((N_("import.refuse.header_zones"), {"zones": ", ".join(sorted(zones))}))
    return zones.pop() if zones else None


def named_abbreviation(names: list[str], indexes: dict[str, int]) -> str | None:
    """The abbreviation with a fixed offset ("EST") the header names beside the file's time
    columns, upper case, or None: "Time (EST)" -> "EST", "Time (ET)" -> None."""
    for column, i in indexes.items():
        found = _NAMED_ZONE.match(names[i]) if column in ("timestamp", "date", "time") else None
        word = (found["a"] or found["b"] or found["c"]).strip().lower() if found else ""
        if word in HEADER_FIXED:
            return word.upper()
    return None


def _iana(word: str) -> str | None:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(word)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return None
    return word


def match_header(layout: Layout, names: list[str]) -> dict[str, int] | None:
    """canonical column -> index in ``names`` if every needed column is there, else None."""
    lower = [column_key(n) for n in names]
    if not set(layout.marks) <= set(lower):
        return None
    found: dict[str, int] = {}
    for canonical, spellings in layout.columns.items():
        index = next((lower.index(s) for s in spellings if s in lower), None)
        if index is None:
            if canonical in layout.optional:
                continue
            return None
        found[canonical] = index
    if "volume" in found or not set(UP_DOWN) <= set(found):
        for name in UP_DOWN:  # the volume's two halves are read only in its place
            found.pop(name, None)
    return found


def detect_header_layout(names: list[str], forced: str | None) -> tuple[Layout, dict[str, int]]:
    """The first layout whose columns the header has (or ``forced``), with their indexes."""
    candidates = [LAYOUTS[forced]] if forced else [x for x in LAYOUTS.values() if x.header]
    for layout in candidates:
        found = match_header(layout, names)
        if found is not None:
            return layout, found
    shown: object = ", ".join(names) or (N_("import.refuse.none"), {})
    if forced:
        layout = LAYOUTS[forced]
        lower = {column_key(n) for n in names}
        missing = [c for c in layout.needed() if not set(layout.columns[c]) & lower]
        missing += [m for m in layout.marks if m not in lower]
        raise LayoutError(
            (
                N_("import.refuse.layout_missing"),
                {
                    "missing": ", ".join(missing),
                    "layout": (TITLE_WORDS[layout.name], {}),
                    "example": layout.example,
                    "found": shown,
                },
            )
        )
    known = "; ".join(f"{x.name}: {x.example}" for x in LAYOUTS.values() if x.header)
    raise LayoutError((N_("import.refuse.unrecognised"), {"found": shown, "known": known}))


def detect_headerless(first_line: str) -> Layout | None:
    """A headerless layout whose first line looks like ``first_line``."""
    for layout in LAYOUTS.values():
        if layout.first_line is not None and layout.first_line.match(first_line):
            return layout
    return None

"""Data traders ask about that Barb's bars do not hold: order flow, quotes, open interest,
options and implied volatility, exchange settlement prices, company data, cash-index values.

A column of one of them (open_interest, bid, cum_delta, vix) was told "add it first with
map, e.g. high - low", and a model that retries once got a table titled open_interest that
was the daily range (p38d Q4); ask_volume got "did you mean 'volume'?", one side of the book
read as all of it (Q2); get_concept("max pain") offered max drawdown (Q8). A name of this
table gets instead what the bars hold, that the thing is not among them so the answer must
say so, and a proxy only where an honest one exists, called one. Events Barb has no dates
for (OPEC, the ECB) are barb/events/names.py's ``_NO_DATES``, looked up before this.
"""

from __future__ import annotations

from dataclasses import dataclass

from barb.events.catalog import concept_key
from barb.instruments import Instrument


@dataclass(frozen=True)
class _Missing:
    """What the bars lack, and what to say instead: a proxy (called one) or a warning."""

    what: str
    instead: str = ""


_KINDS = {
    "order flow": _Missing(
        "no order flow (trades at the bid or at the ask: delta, buy and sell volume, "
        "footprint), ticks or trade counts",
        "A proxy is volume signed by the bar's direction, if(close > open, volume, if(close < "
        "open, -volume, 0)): call it that, a proxy, not order flow.",
    ),
    "quotes": _Missing(
        "no quotes (bid, ask, bid-ask spread, order book)",
        "A bar's range (high - low) is no spread.",
    ),
    "open interest": _Missing(
        "no open interest or positioning (COT reports)",
        "Volume counts contracts traded, not contracts held.",
    ),
    "options": _Missing(
        "no options (implied volatility, VIX, greeks such as gamma, strikes, put/call ratios, "
        "max pain)",
        "A proxy for volatility is realised volatility on daily bars, rolling_std(log(close / "
        "prev(close)), 20) * sqrt(252) * 100: call it realised, not implied.",
    ),
    "settlement": _Missing(
        "no exchange settlement prices (daily or final)",
        "A proxy for the daily settlement is the close of the settlement window: get_concept "
        "settlement.",
    ),
    "company": _Missing("no company figures (earnings, dividends, fundamentals)"),
    "cash index": _Missing(
        "no cash-index values (the Nasdaq-100 or S&P 500 index itself)",
        "Futures prices differ from the index by the basis, the carry to expiry.",
    ),
}

# Names by the one spelling concept_key gives them (cum_delta is "cum delta"), with the kind
# of data each is. A name of this table, or a run of words inside a longer name (nq_oi,
# open_interest_change, bid_size), is that data.
_ABSENT = {
    **dict.fromkeys(
        [
            "delta",
            "cum delta",
            "cumulative delta",
            "cvd",
            "bar delta",
            "volume delta",
            "delta volume",
            "order flow",
            "orderflow",
            "footprint",
            "buy volume",
            "sell volume",
            "buying volume",
            "selling volume",
            "ask volume",
            "bid volume",
            "aggressor",
            "tick volume",
            "tick data",
            "trade count",
            "number of trades",
            "time and sales",
            "дельта",
            "кумулятивная дельта",
            "футпринт",
            "ордерфлоу",
        ],
        "order flow",
    ),
    **dict.fromkeys(
        [
            "bid",
            "ask",
            "best bid",
            "best ask",
            "spread",
            "bid ask",
            "bid ask spread",
            "quote",
            "quotes",
            "order book",
            "market depth",
            "depth of market",
            "level 2",
            "спред",
            "бид",
            "аск",
            "стакан",
        ],
        "quotes",
    ),
    **dict.fromkeys(
        [
            "open interest",
            "openinterest",
            "open int",
            "oi",
            "cot",
            "commitments of traders",
            "открытый интерес",
        ],
        "open interest",
    ),
    **dict.fromkeys(
        [
            "vix",
            "vxn",
            "iv",
            "implied",
            "implied vol",
            "implied volatility",
            "gamma",
            "gex",
            "greeks",
            "vega",
            "theta",
            "max pain",
            "put call",
            "put call ratio",
            "pcr",
            "подразумеваемая волатильность",
            "макс пейн",
            "гамма",
        ],
        "options",
    ),
    **dict.fromkeys(
        [
            "settlement",
            "settle",
            "settlement price",
            "final settlement",
            "soq",
            "special opening quotation",
        ],
        "settlement",
    ),
    **dict.fromkeys(
        [
            "earnings",
            "dividend",
            "dividends",
            "eps",
            "revenue",
            "pe ratio",
            "fundamentals",
            "дивиденды",
        ],
        "company",
    ),
    **dict.fromkeys(["ndx", "spx", "cash index", "index close", "index price"], "cash index"),
}
# Words that are missing data only as the whole name: delta_pct and spread_es are a model's
# own columns (a change, a spread between two prices) that it forgot to map.
_WHOLE_NAME_ONLY = frozenset({"delta", "spread", "дельта", "спред"})


def absent_kind(name: str) -> str | None:
    """The kind of data ``name`` asks for when the bars do not hold it, else None.

    >>> absent_kind("open_interest"), absent_kind("nq_oi"), absent_kind("ask_volume")
    ('open interest', 'open interest', 'order flow')
    >>> absent_kind("delta"), absent_kind("delta_pct"), absent_kind("atr14")
    ('order flow', None, None)
    """
    words = concept_key(name).split()
    # Longest runs first: ask_volume is order flow before "ask" is a quote.
    for size in range(len(words), 0, -1):
        for start in range(len(words) - size + 1):
            run = " ".join(words[start : start + size])
            if run in _ABSENT and (size == len(words) or run not in _WHOLE_NAME_ONLY):
                return _ABSENT[run]
    return None


def absent_data_text(name: str, instrument: Instrument | None = None) -> str | None:
    """What the bars hold and that ``name``'s data is not among them, for a column hint and
    the concept lookup; None for a name of no missing data.

    >>> print(absent_data_text("oi"))  # doctest: +NORMALIZE_WHITESPACE
    Barb's bars hold only open, high, low, close and volume per bar: the data has no open
    interest or positioning (COT reports), so the answer must say so. Volume counts
    contracts traded, not contracts held.
    """
    kind = absent_kind(name)
    if kind is None:
        return None
    missing = _KINDS[kind]
    holder = "Barb's bars"
    if instrument is not None:
        holder = f"{instrument.symbol}'s bars ({instrument.name} futures)"
    text = (
        f"{holder} hold only open, high, low, close and volume per bar: the data has "
        f"{missing.what}, so the answer must say so."
    )
    return f"{text} {missing.instead}" if missing.instead else text

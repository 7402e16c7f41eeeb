"""How much the synthetic sample behaves like the market: each statistic next to its target.

    python -m bench.sample_stats            # the table; exit status 1 if any is off target
    python -m bench.sample_stats --markdown # the table as docs/data.md shows it

Computed from the data files themselves (pandas over the minute bars), except the NQ-ES
correlation, which is asked of the engine with an instrument join, as a user would ask it,
and checked against pandas. ``tests/data/test_sample_statistics.py`` runs it in CI on the
full sample, so the sample cannot drift from the targets unnoticed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from barb.data.store import data_path, read_bars
from barb.events.schedule import event_dates
from barb.instruments import load_instrument
from barb.interpreter import execute
from barb.settings import EngineSettings

# Approximate real values, for the targets (continuous front-month futures).
REAL_YEAR_END_CLOSE: dict[str, dict[int, float]] = {
    "NQ": {2008: 1212, 2012: 2660, 2016: 4870, 2019: 8730, 2020: 12890, 2022: 10940, 2024: 21200},
    "ES": {2008: 903, 2012: 1420, 2016: 2236, 2019: 3230, 2020: 3750, 2022: 3860, 2024: 5900},
    "CL": {2008: 44.6, 2012: 91.8, 2016: 53.7, 2019: 61.1, 2020: 48.5, 2022: 80.3, 2024: 71.7},
}
REAL_VOLATILITY: dict[str, dict[int, float]] = {
    "NQ": {2008: 0.42, 2017: 0.10, 2020: 0.35, 2022: 0.34},
    "ES": {2008: 0.40, 2017: 0.07, 2020: 0.33, 2022: 0.24},
    "CL": {2008: 0.52, 2017: 0.26, 2020: 0.70, 2022: 0.48},
}
VOLATILITY_TOLERANCE = 0.35  # a year's realised volatility within ±35% of the real one
YEAR_END_TOLERANCE = 0.15


@dataclass(frozen=True)
class Stat:
    name: str
    value: float
    target: str
    ok: bool
    fmt: str = "{:.2f}"

    def row(self) -> str:
        met = "yes" if self.ok else "**no**"
        return f"| {self.name} | {self.fmt.format(self.value)} | {self.target} | {met} |"


def within(low: float, high: float) -> Callable[[float], bool]:
    return lambda x: low <= x <= high


class Sample:
    """The minute bars of each instrument and derived daily bars, loaded once."""

    def __init__(self, settings: EngineSettings):
        self.settings = settings
        self.minutes: dict[str, pd.DataFrame] = {}
        self.daily: dict[str, pd.DataFrame] = {}
        for symbol in ("NQ", "ES", "CL"):
            frame, meta = read_bars(data_path(symbol, settings))
            if meta.source != "synthetic":
                raise SystemExit(f"{symbol} holds {meta.source} data, not the synthetic sample.")
            self.minutes[symbol] = frame
            grouped = frame.groupby("trading_date")
            self.daily[symbol] = pd.DataFrame(
                {
                    "high": grouped["high"].max(),
                    "low": grouped["low"].min(),
                    "close": grouped["close"].last(),
                }
            )

    def returns(self, symbol: str) -> pd.Series:
        close = self.daily[symbol]["close"]
        return np.log(close).diff().dropna()


def correlation_stats(sample: Sample) -> list[Stat]:
    r = {s: sample.returns(s) for s in ("NQ", "ES", "CL")}
    both = pd.concat([r["NQ"], r["ES"]], axis=1, join="inner")
    by_pandas = float(both.corr().iloc[0, 1])
    query = {
        "instrument": "NQ",
        "session": "ETH",
        "from": "daily",
        "join": {"instrument": "ES"},
        "map": {"r": "close / prev(close) - 1", "es_r": "es_close / prev(es_close) - 1"},
        "select": "correlation(r, es_r)",
    }
    result = execute(query, "NQ", settings=sample.settings)
    by_engine = float(result.summary.value) if result.ok and result.summary else float("nan")
    cl = pd.concat([r["CL"], r["ES"]], axis=1, join="inner").corr().iloc[0, 1]
    return [
        Stat(
            "NQ-ES daily return correlation (Barb query with an ES join)",
            by_engine,
            "0.85-0.95 (real ≈ 0.9); equals pandas",
            0.85 <= by_engine <= 0.95 and abs(by_engine - by_pandas) < 0.01,
        ),
        Stat(
            "CL-ES daily return correlation",
            float(cl),
            "0.15-0.45 (real ≈ 0.3)",
            0.15 <= cl <= 0.45,
        ),
    ]


def volatility_stats(sample: Sample) -> list[Stat]:
    stats = []
    for symbol, years in REAL_VOLATILITY.items():
        r = sample.returns(symbol)
        for year, real in years.items():
            got = float(r[r.index.year == year].std() * np.sqrt(252))
            stats.append(
                Stat(
                    f"{symbol} {year} volatility (annualised)",
                    got,
                    f"{real:.2f} ±{VOLATILITY_TOLERANCE:.0%}",
                    abs(got / real - 1) <= VOLATILITY_TOLERANCE,
                )
            )
    return stats


def year_end_stats(sample: Sample) -> list[Stat]:
    stats = []
    for symbol, years in REAL_YEAR_END_CLOSE.items():
        close = sample.daily[symbol]["close"]
        worst = 0.0
        for year, real in years.items():
            got = close[close.index.year == year].iloc[-1]
            worst = max(worst, abs(got / real - 1))
        stats.append(
            Stat(
                f"{symbol} year-end close, largest miss ({', '.join(map(str, years))})",
                worst,
                f"≤ {YEAR_END_TOLERANCE:.0%}",
                worst <= YEAR_END_TOLERANCE,
                "{:.1%}",
            )
        )
    return stats


def kurtosis_stats(sample: Sample) -> list[Stat]:
    stats = []
    for symbol in ("NQ", "ES", "CL"):
        k = float(sample.returns(symbol).kurt() + 3)  # pandas gives excess kurtosis
        stats.append(Stat(f"{symbol} daily return kurtosis", k, "≥ 5 (normal: 3)", k >= 5))
    return stats


def _mean_volume(frame: pd.DataFrame, start: str, end: str) -> float:
    a, b = (dt.time.fromisoformat(x) for x in (start, end))
    m = frame["minute"].to_numpy()
    lo, hi = a.hour * 60 + a.minute, b.hour * 60 + b.minute
    return float(frame["volume"].to_numpy()[(m >= lo) & (m < hi)].mean())


def profile_stats(sample: Sample) -> list[Stat]:
    nq = sample.minutes["NQ"]
    midday = _mean_volume(nq, "12:00", "13:00")
    night = _mean_volume(nq, "01:00", "02:30")
    checks = [
        ("NQ volume 09:30-09:35 / 12:00-13:00", _mean_volume(nq, "09:30", "09:35") / midday, 2.0),
        ("NQ volume 15:55-16:00 / 12:00-13:00", _mean_volume(nq, "15:55", "16:00") / midday, 1.5),
        ("NQ volume 03:00-03:15 / 01:00-02:30", _mean_volume(nq, "03:00", "03:15") / night, 1.3),
        (
            "NQ volume 08:30-08:35 / 08:00-08:25",
            _mean_volume(nq, "08:30", "08:35") / _mean_volume(nq, "08:00", "08:25"),
            1.5,
        ),
    ]
    return [Stat(name, value, f"≥ {low:g}", value >= low) for name, value, low in checks]


def event_stats(sample: Sample) -> list[Stat]:
    stats = []
    for symbol, events, low in (
        ("NQ", ("nfp", "cpi"), 1.15),
        ("NQ", ("fomc",), 1.1),
        ("CL", ("eia",), 1.1),
    ):
        instrument = load_instrument(symbol)
        daily = sample.daily[symbol]
        rel_range = (daily["high"] - daily["low"]) / daily["close"]
        days = set()
        for name in events:
            table = event_dates(name, instrument)
            days |= set(pd.DatetimeIndex(table["trading_date"]))
        on = rel_range.index.isin(list(days))
        if events == ("eia",):  # Wednesdays against Wednesdays
            same_weekday = rel_range.index.weekday == 2
            ratio = rel_range[on & same_weekday].mean() / rel_range[~on & same_weekday].mean()
        else:
            ratio = rel_range[on].mean() / rel_range[~on].mean()
        stats.append(
            Stat(
                f"{symbol} daily range on {'/'.join(e.upper() for e in events)} days / other days",
                float(ratio),
                f"≥ {low:g}",
                ratio >= low,
            )
        )
    return stats


def all_stats(settings: EngineSettings) -> list[Stat]:
    sample = Sample(settings)
    return [
        *correlation_stats(sample),
        *volatility_stats(sample),
        *year_end_stats(sample),
        *kurtosis_stats(sample),
        *profile_stats(sample),
        *event_stats(sample),
    ]


def table(stats: list[Stat]) -> str:
    head = "| Statistic | Sample | Target | Met |\n|---|---|---|---|"
    return "\n".join([head, *(s.row() for s in stats)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="only the Markdown table")
    args = parser.parse_args(argv)
    stats = all_stats(EngineSettings())
    print(table(stats))
    bad = [s.name for s in stats if not s.ok]
    if bad and not args.markdown:
        print(f"\nOff target: {'; '.join(bad)}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

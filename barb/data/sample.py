"""Synthetic minute bars that look like an index or crude future, for trying Barb without data.

What is modelled:

- The real exchange calendar (``pandas_market_calendars``, the instrument's ``calendar``):
  one bar per minute in each trading date's [open, close), so the Sunday 18:00 ET open, the
  17:00-18:00 maintenance break, holidays and early closes are those of the exchange,
  with the ones the library misses (``barb.events.rules.MISSED_EARLY_CLOSES``: the index
  futures' 09:30 ET closes on the national days of mourning).
- Volatility near the real one year by year (``sample.volatility``: 2008, 2020 and 2022
  wild, 2017 calm), log-interpolated between mid-years, times a GJR-GARCH(1,1) driven by
  each day's own realised return (falls raise volatility more than rises, the leverage
  effect of equity indices), so volatility clusters and daily returns have fat tails.
- Instruments move together: every minute's shock (and each reopen gap) mixes the market's
  shock, shared by all instruments and drawn per date from one seed, with the instrument's
  own, weighted by ``sample.market_loading`` (NQ-ES daily correlation about 0.9, CL-equity
  about 0.3).
- An intraday profile of activity by minute of day: a U across the cash session (high at the
  open, a midday lull, rising into the cash close), low overnight, small bumps at the Globex
  reopen, the 03:00 European open and the 08:30 US data releases. Volume follows it, and so
  does volatility (as its square root: variance scales with the number of trades).
- Scheduled events move prices: bursts of activity (volatility and volume) at 08:30 on NFP
  and CPI days, 14:00 on FOMC days and, for crude oil, 10:30 on EIA Wednesdays, from Barb's
  event calendar, so those days have wider ranges.
- Gaps: a jump at each Globex reopen, larger after weekends and holidays; the overnight
  session itself moves the price between one cash close and the next cash open.
- Fat-tailed minute returns (Student t, 4 degrees of freedom).
- Price levels: the random path is pinned, Brownian-bridge style, to the instrument's
  ``sample.anchors`` (approximate historical closes) at the close of each anchor date
  inside the range, and to the log-linear trend between anchors at both ends of the range.
- Highs and lows drawn from the exact distribution of a Brownian bridge's maximum and
  minimum within the bar; prices rounded to the tick; volume in whole contracts, busier on
  volatile days and in volatile minutes.

What is not: unscheduled news, limit moves and trading halts, contract rolls (the series is
one continuous contract), the pre-2021 15-minute daily halt, long-term growth in volume,
bid/ask structure, and anything that needs a negative price (crude oil does not fall below
zero as it did on 2020-04-20: the path is built in log-price). The data is for
demonstrations and tests, never for conclusions about markets.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pandas_market_calendars as mcal

from barb.data.mapped import refresh_mapped
from barb.data.store import DataMeta, data_path, make_meta, read_meta, write_bars
from barb.errors import DataError
from barb.events.rules import exchange_schedule
from barb.instruments import (
    Instrument,
    SampleSpec,
    available_instruments,
    load_instrument,
    parse_clock,
)
from barb.sessions import MINUTES_PER_DAY, minutes_of_day, trading_dates
from barb.settings import EngineSettings

log = logging.getLogger(__name__)

SAMPLE_START = dt.date(2008, 1, 2)
SAMPLE_END = dt.date(2026, 1, 7)
# Raised whenever the generator's output changes: an older sample on disk is regenerated
# (it is synthetic, so nothing of the user's is lost), so no machine keeps stale numbers.
GENERATOR_VERSION = 3

MINUTE_NS = 60 * 1_000_000_000
TRADING_DAYS_PER_YEAR = 252

# GJR-GARCH(1,1) on daily returns: typical fitted values for stock index futures.
GARCH_ALPHA = 0.03  # reaction to any shock
GARCH_GAMMA = 0.10  # extra reaction to a fall
GARCH_BETA = 0.90  # persistence of variance
# Cap on the GARCH factor: volatility at most 2.5x the year's level.
MAX_VARIANCE_MULTIPLE = 6.25
T_DEGREES_OF_FREEDOM = 4

# The shocks every instrument shares (the market), drawn per trading date and minute of day
# from this seed, so that NQ, ES and CL move together by their ``market_loading``.
MARKET_SEED = 20080102

# Scheduled releases that move markets: (extra activity at the release minute, as a multiple
# of the minute's usual, and its decay in minutes). Activity sets both volatility and volume.
EVENT_BURSTS: dict[str, tuple[float, float]] = {
    "nfp": (30.0, 10.0),  # 08:30 employment report
    "cpi": (30.0, 10.0),  # 08:30 consumer prices
    "fomc": (15.0, 20.0),  # 14:00 rate decision
    "eia": (12.0, 8.0),  # 10:30 Wednesday crude inventories (CL)
}

# Share of a day's variance that arrives as the jump at the Globex reopen.
REOPEN_GAP_SHARE = 0.001  # after the one-hour daily break
WEEKEND_GAP_SHARE = 0.15  # after a weekend or holiday

DAY_VOLUME_NOISE = 0.2  # log-sd of a day's volume around the level its volatility implies
BAR_VOLUME_NOISE = 0.45  # log-sd of a minute's volume around the profile


@dataclass(frozen=True)
class Schedule:
    """The trading sessions of a date range, in the instrument's wall-clock time."""

    dates: np.ndarray  # datetime64[ns] trading dates, midnight
    opens: np.ndarray  # datetime64[ns] first minute of each session
    lengths: np.ndarray  # int64 minutes in each session
    # Minutes an early close the calendar library misses took off the session's end
    # (barb.events.rules.MISSED_EARLY_CLOSES; 0 on other days). The generator draws them as
    # usual and drops them, so two cut days do not move every later day's random draws.
    cut: np.ndarray  # int64


def load_schedule(instrument: Instrument, start: dt.date, end: dt.date) -> Schedule:
    """Sessions from the exchange calendar, converted to the instrument's timezone."""
    calendar = mcal.get_calendar(instrument.calendar)
    library = calendar.schedule(start_date=start, end_date=end)
    sched = exchange_schedule(calendar, start, end)
    if sched.empty:
        raise DataError(f"The {instrument.calendar} calendar has no sessions {start}..{end}.")
    opens = sched["market_open"].dt.tz_convert(instrument.timezone).dt.tz_localize(None)
    closes = sched["market_close"].dt.tz_convert(instrument.timezone).dt.tz_localize(None)
    utc_minutes = (sched["market_close"] - sched["market_open"]) // pd.Timedelta(minutes=1)
    wall_minutes = (closes - opens) // pd.Timedelta(minutes=1)
    # Bars are laid out in wall-clock minutes, which is exact only when no clock change
    # falls inside a session (they happen early on Sunday mornings, when CME is shut).
    if not (utc_minutes == wall_minutes).all():
        bad = sched.index[utc_minutes != wall_minutes][0].date()
        raise DataError(f"The session of {bad} spans a clock change; cannot lay out its bars.")
    return Schedule(
        dates=sched.index.to_numpy(dtype="datetime64[ns]"),
        opens=opens.to_numpy(dtype="datetime64[ns]"),
        lengths=utc_minutes.to_numpy(dtype=np.int64),
        cut=((library["market_close"] - sched["market_close"]) // pd.Timedelta(minutes=1)).to_numpy(
            dtype=np.int64
        ),
    )


def cash_hours(instrument: Instrument) -> tuple[int, int]:
    """Minutes of the cash (pit) session's open and close, where activity peaks.

    For equity index futures the YAML's RTH runs on to the 17:00 Globex close, but the cash
    market closes at 16:00, the start of its RTH_CLOSE window; for crude oil RTH ends at the
    14:30 settlement.
    """
    rth = instrument.sessions.get("RTH") or instrument.session(instrument.default_session)
    close = rth.end_minute
    brk = instrument.maintenance_break
    closing = instrument.sessions.get("RTH_CLOSE")
    if brk is not None and closing is not None and rth.end == brk.start:
        close = closing.start_minute
    return rth.start_minute, close


def intraday_profile(instrument: Instrument) -> np.ndarray:
    """Relative activity (trades) by minute of day, 1440 values; US Eastern clock times."""
    m = np.arange(MINUTES_PER_DAY, dtype=np.float64)
    cash_open, cash_close = cash_hours(instrument)
    day_start = instrument.trading_day_start_minute

    def after(t: int, tau: float) -> np.ndarray:
        """A burst at minute t that decays with time constant tau."""
        since = (m - t) % MINUTES_PER_DAY
        return np.where(since < 8 * tau, np.exp(-since / tau), 0.0)

    def before(t: int, tau: float) -> np.ndarray:
        """A build-up into minute t."""
        until = (t - m) % MINUTES_PER_DAY
        return np.where((until > 0) & (until < 8 * tau), np.exp(-until / tau), 0.0)

    def between(a: int, b: int) -> np.ndarray:
        return ((m - a) % MINUTES_PER_DAY < (b - a) % MINUTES_PER_DAY).astype(np.float64)

    return (
        0.10  # the overnight floor
        + 0.10 * between(3 * 60, cash_open)  # Europe trades more than Asia
        + 0.25 * after(day_start, 15)  # Globex reopen
        + 0.35 * after(3 * 60, 30)  # European open
        + 1.20 * after(8 * 60 + 30, 10)  # US economic data
        + 0.55 * between(cash_open, cash_close)  # cash session
        + 2.00 * after(cash_open, 25)  # the open
        + 1.30 * before(cash_close, 30)  # into the close
        + 0.20 * between(cash_close, cash_close + 15)  # just after the cash close
    )


def _regular_day(instrument: Instrument) -> np.ndarray:
    """Minutes of day that trade on an ordinary day (all but the maintenance break)."""
    trades = np.ones(MINUTES_PER_DAY, dtype=bool)
    brk = instrument.maintenance_break
    if brk is not None:
        m = np.arange(MINUTES_PER_DAY)
        start, end = parse_clock(brk.start), parse_clock(brk.end)
        trades &= (m - start) % MINUTES_PER_DAY >= (end - start) % MINUTES_PER_DAY
    return trades


def _anchor_trend(spec: SampleSpec) -> tuple[np.ndarray, np.ndarray]:
    """Anchor dates (days since 1970) and log-prices, sorted."""
    days = sorted(spec.anchors)
    if not days:
        raise DataError("The instrument's `sample.anchors` is empty; give at least one price.")
    return np.array(days, dtype="datetime64[D]").astype(np.int64), np.log(
        [spec.anchors[d] for d in days]
    )


def _yearly_variance(spec: SampleSpec, dates: np.ndarray) -> np.ndarray:
    """Each date's daily variance from the yearly volatility table, log-interpolated between
    mid-years (flat beyond the table); ``annual_volatility`` when there is no table."""
    days = dates.astype("datetime64[D]").astype(np.int64)
    if not spec.volatility:
        return np.full(len(dates), spec.annual_volatility**2 / TRADING_DAYS_PER_YEAR)
    years = sorted(spec.volatility)
    mids = np.array([f"{y}-07-01" for y in years], dtype="datetime64[D]").astype(np.int64)
    logs = np.log([spec.volatility[y] for y in years])
    return np.exp(2 * np.interp(days, mids, logs)) / TRADING_DAYS_PER_YEAR


def _market_shocks(dates: np.ndarray, dof: int) -> tuple[np.ndarray, np.ndarray]:
    """The market's minute shocks (trading date x minute of day) and reopen gap shocks.

    Drawn from a generator seeded by the date itself, so every instrument, whatever range
    it is generated over, gets the same shock for the same date and minute.
    """
    days = dates.astype("datetime64[D]").astype(np.int64)
    minutes = np.empty((len(days), MINUTES_PER_DAY))
    gaps = np.empty(len(days))
    scale = np.sqrt(dof / (dof - 2))
    for k, day in enumerate(days.tolist()):
        rng = np.random.default_rng([MARKET_SEED, day])
        gaps[k] = rng.standard_normal()
        minutes[k] = rng.standard_t(dof, MINUTES_PER_DAY) / scale
    return minutes, gaps


def _event_activity(
    instrument: Instrument, sched: Schedule, first_bar: np.ndarray, minute: np.ndarray
) -> np.ndarray:
    """A multiplier of each bar's activity: bursts after scheduled releases."""
    from barb.events.schedule import EVENT_TIMEZONE, event_dates

    n = len(minute)
    last_bar = np.append(first_bar[1:], n) - 1
    mult = np.ones(n)
    start = pd.Timestamp(sched.dates[0]).date()
    end = pd.Timestamp(sched.dates[-1]).date()
    for name in instrument.events:
        if name not in EVENT_BURSTS:
            continue
        boost, tau = EVENT_BURSTS[name]
        table = event_dates(name, instrument, start, end)
        if table.empty:
            continue
        local = pd.DatetimeIndex(table["time"]).tz_localize(EVENT_TIMEZONE)
        local = local.tz_convert(instrument.timezone).tz_localize(None)
        release = np.asarray(local.hour * 60 + local.minute)
        tdates = table["trading_date"].to_numpy(dtype="datetime64[ns]")
        k = np.clip(np.searchsorted(sched.dates, tdates), 0, len(sched.dates) - 1)
        found = sched.dates[k] == tdates
        span = np.arange(int(8 * tau))
        burst = 1 + boost * np.exp(-span / tau)
        for d, r in zip(k[found].tolist(), release[found].tolist(), strict=True):
            i0 = first_bar[d] + (r - minute[first_bar[d]]) % MINUTES_PER_DAY
            i1 = min(i0 + len(span), last_bar[d] + 1)
            if i0 < i1:
                mult[i0:i1] *= burst[: i1 - i0]
    return mult


def _anchor_pins(
    spec: SampleSpec, dates: np.ndarray, last_bar: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Bars to pin and their target log-prices: the range's ends and the anchors inside."""
    days, logs = _anchor_trend(spec)
    day_numbers = dates.astype("datetime64[D]").astype(np.int64)
    # Log-linear between anchors, flat beyond the first and last.
    pins = {0: float(np.interp(day_numbers[0], days, logs))}
    pins[int(last_bar[-1])] = float(np.interp(day_numbers[-1], days, logs))
    for day, target in zip(days, logs, strict=True):
        if day_numbers[0] <= day <= day_numbers[-1]:
            # An anchor on a non-trading day pins the last session before it.
            k = int(np.searchsorted(day_numbers, day, side="right")) - 1
            pins[int(last_bar[k])] = float(target)
    bars = np.array(sorted(pins), dtype=np.int64)
    return bars, np.array([pins[b] for b in bars])


def _daily_variance(shocks: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Each day's return variance: ``level`` (the year's) times GJR-GARCH(1,1), which
    reacts to the previous days' standardised returns ``shocks`` and has mean 1."""
    persistence = GARCH_ALPHA + GARCH_GAMMA / 2 + GARCH_BETA
    omega = 1 - persistence
    h = np.empty(len(shocks))
    garch = 1.0
    for t, z in enumerate(shocks.tolist()):
        h[t] = level[t] * garch
        reaction = GARCH_ALPHA + (GARCH_GAMMA if z < 0 else 0.0)
        garch = min(MAX_VARIANCE_MULTIPLE, omega + (reaction * z * z + GARCH_BETA) * garch)
    return h


def _round_to_tick(prices: np.ndarray, tick: float) -> np.ndarray:
    ticks = np.rint(prices / tick)
    per_unit = round(1 / tick)
    # Dividing by a whole number of ticks per point gives the nearest float to the decimal
    # price (71.57, not 71.57000000000001).
    if abs(per_unit - 1 / tick) < 1e-9:
        return ticks / per_unit
    return ticks * tick


def generate_sample(
    instrument: Instrument, start: dt.date = SAMPLE_START, end: dt.date = SAMPLE_END
) -> pd.DataFrame:
    """Synthetic minute bars of ``instrument`` in the stored form (see ``barb.data.store``).

    Deterministic: the same instrument, seed and range give byte-identical frames.
    """
    spec = instrument.sample
    if spec is None:
        raise DataError(f"{instrument.symbol} has no `sample` block in its instrument file.")
    rng = np.random.default_rng(spec.seed)
    traded = load_schedule(instrument, start, end)
    # Bars are drawn over the library's whole sessions; those past a missed early close go.
    whole = traded.lengths + traded.cut
    sched = Schedule(traded.dates, traded.opens, whole, np.zeros_like(traded.cut))
    n_days, n = len(sched.lengths), int(sched.lengths.sum())
    first_bar = np.cumsum(sched.lengths) - sched.lengths
    last_bar = first_bar + sched.lengths - 1
    day = np.repeat(np.arange(n_days), sched.lengths)

    # Wall-clock bar times: each session's open plus whole minutes.
    offset = np.arange(n, dtype=np.int64) - first_bar[day]
    timestamp = (sched.opens.astype(np.int64)[day] + offset * MINUTE_NS).view("datetime64[ns]")
    del offset
    minute = minutes_of_day(timestamp)

    # Intraday shape: volatility weights (sum of squares over an ordinary day = 1) and
    # volume shares (sum over an ordinary day = 1).
    activity = intraday_profile(instrument)
    regular = _regular_day(instrument)
    vol_shape = np.sqrt(activity / activity[regular].sum())
    volume_share = activity / activity[regular].sum()
    events = _event_activity(instrument, sched, first_bar, minute)
    w = vol_shape[minute] * np.sqrt(events)

    # Shocks: fat-tailed minute innovations (unit variance) and one jump per reopen, each a
    # mix of the market's (shared with the other instruments) and the instrument's own.
    dof = T_DEGREES_OF_FREEDOM
    e = rng.standard_t(dof, n) / np.sqrt(dof / (dof - 2))
    gap_z = rng.standard_normal(n_days)
    loading = spec.market_loading
    if loading > 0:
        market, market_gap = _market_shocks(sched.dates, dof)
        own = np.sqrt(1 - loading**2)
        e = loading * market[day, minute] + own * e
        gap_z = loading * market_gap + own * gap_z
        del market
    session_end = sched.opens + sched.lengths * np.timedelta64(1, "m")
    pause = sched.opens[1:] - session_end[:-1]
    gap_share = np.zeros(n_days)
    gap_share[1:] = np.where(pause > np.timedelta64(2, "h"), WEEKEND_GAP_SHARE, REOPEN_GAP_SHARE)

    # Each day's standardised return drives the next days' variance.
    we = w * e
    day_noise = np.add.reduceat(we, first_bar) + np.sqrt(gap_share) * gap_z
    day_scale = np.sqrt(np.add.reduceat(w * w, first_bar) + gap_share)
    level = _yearly_variance(spec, sched.dates)
    h = _daily_variance(day_noise / day_scale, level)
    sd_day = np.sqrt(h)

    # Log-price: random walk plus a Brownian-bridge correction through the pins.
    r = we * sd_day[day]
    del we
    gap = np.zeros(n)
    gap[first_bar[1:]] = (np.sqrt(gap_share * h) * gap_z)[1:]
    log_close = np.cumsum(r + gap)
    pin_bars, pin_targets = _anchor_pins(spec, sched.dates, last_bar)
    log_close += np.interp(
        np.arange(n, dtype=np.float64), pin_bars, pin_targets - log_close[pin_bars]
    )
    log_open = np.empty(n)
    log_open[0] = log_close[0] - r[0]
    log_open[1:] = log_close[:-1] + gap[1:]
    del gap, r

    open_, high, low, close = _bars(log_open, log_close, w * sd_day[day], instrument, rng)
    del log_open, log_close, w
    base_sd = spec.annual_volatility / np.sqrt(TRADING_DAYS_PER_YEAR)
    volume = _volume(spec, sd_day / base_sd, day, volume_share[minute] * events, e, rng)
    del e

    tdate = trading_dates(timestamp, instrument.trading_day_start_minute)
    # Barb's trading-date rule must agree with the calendar that laid out the sessions.
    if not (
        np.array_equal(tdate[first_bar], sched.dates)
        and np.array_equal(tdate[last_bar], sched.dates)
    ):
        raise DataError(f"{instrument.calendar} sessions disagree with Barb's trading dates.")
    keep = np.arange(n) - first_bar[day] < traded.lengths[day]
    frame = pd.DataFrame(
        {
            "timestamp": timestamp,
            "open": open_,
            "high": high,
            "low": low,
            "close": close,
            "volume": volume,
            "trading_date": tdate,
            "minute": minute,
        },
        copy=False,  # the arrays are ours: no need for pandas to consolidate copies
    )
    return frame if keep.all() else frame[keep].reset_index(drop=True)


def _bars(
    log_open: np.ndarray,
    log_close: np.ndarray,
    bar_sd: np.ndarray,
    instrument: Instrument,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Open, high, low, close on the tick; highs and lows are the extremes of a Brownian
    bridge from open to close with the bar's variance (exact, one draw each)."""
    move = log_close - log_open
    var2 = 2 * bar_sd**2
    log_high = log_open + (move + np.sqrt(move**2 + var2 * rng.standard_exponential(len(move)))) / 2
    log_low = log_open + (move - np.sqrt(move**2 + var2 * rng.standard_exponential(len(move)))) / 2
    del move, var2
    tick = instrument.tick_size
    open_ = _round_to_tick(np.exp(log_open), tick)
    close = _round_to_tick(np.exp(log_close), tick)
    high = np.maximum(_round_to_tick(np.exp(log_high), tick), np.maximum(open_, close))
    low = np.minimum(_round_to_tick(np.exp(log_low), tick), np.minimum(open_, close))
    return open_, high, low, close


def _volume(
    spec: SampleSpec,
    day_vol_ratio: np.ndarray,
    day: np.ndarray,
    share: np.ndarray,
    e: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Contracts per bar: busier on volatile days (``day_vol_ratio``: volatility over its
    base level) and in minutes with big moves (``e``), around each minute's ``share``."""
    day_level = (
        spec.daily_volume
        * day_vol_ratio**0.8
        * np.exp(
            DAY_VOLUME_NOISE * rng.standard_normal(len(day_vol_ratio)) - DAY_VOLUME_NOISE**2 / 2
        )
    )
    size = np.abs(e)
    size = 0.5 + 0.5 * size / size.mean()
    noise = np.exp(BAR_VOLUME_NOISE * rng.standard_normal(len(e)) - BAR_VOLUME_NOISE**2 / 2)
    return np.maximum(1.0, np.rint(day_level[day] * share * size * noise)).astype(np.int64)


@dataclass(frozen=True)
class SampleReport:
    """What ``write_samples`` did for one instrument."""

    symbol: str
    path: Path
    meta: DataMeta
    seconds: float
    written: bool  # False: a file was already there and ``force`` was not given


def sample_symbols(settings: EngineSettings | None = None) -> list[str]:
    """Every configured instrument that has a ``sample`` block."""
    settings = settings or EngineSettings()
    return [
        symbol
        for symbol in available_instruments(settings)
        if load_instrument(symbol, settings).sample is not None
    ]


def _outdated_sample(meta: DataMeta) -> bool:
    """A synthetic sample written by an older generator."""
    return meta.source == "synthetic" and not meta.description.startswith(
        f"synthetic sample v{GENERATOR_VERSION},"
    )


def write_samples(
    symbols: Sequence[str] | None,
    settings: EngineSettings | None = None,
    force: bool = False,
) -> list[SampleReport]:
    """Generate and write the sample of each symbol (default: ``sample_symbols()``).

    An existing file is kept unless ``force``: it may be real, imported data.
    """
    settings = settings or EngineSettings()
    reports = []
    for symbol in symbols or sample_symbols(settings):
        instrument = load_instrument(symbol, settings)
        if instrument.sample is None:
            raise DataError(f"{instrument.symbol} has no `sample` block in its instrument file.")
        path = data_path(instrument.symbol, settings)
        if path.exists() and not force and not _outdated_sample(read_meta(path)):
            reports.append(SampleReport(instrument.symbol, path, read_meta(path), 0.0, False))
            continue
        started = time.perf_counter()
        frame = generate_sample(instrument)
        meta = make_meta(
            frame,
            instrument=instrument.symbol,
            timezone=instrument.timezone,
            source="synthetic",
            description=f"synthetic sample v{GENERATOR_VERSION}, seed {instrument.sample.seed}",
        )
        write_bars(frame, meta, path)
        refresh_mapped(frame, meta, path, settings)
        del frame
        seconds = time.perf_counter() - started
        log.info("wrote %s: %d rows in %.1f s", path, meta.rows, seconds)
        reports.append(SampleReport(instrument.symbol, path, meta, seconds, True))
    return reports

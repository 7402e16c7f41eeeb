"""The synthetic sample: deterministic, on the exchange calendar, shaped like real bars."""

from __future__ import annotations

import datetime as dt
import hashlib

import numpy as np
import pandas as pd
import pandas_market_calendars as mcal
import pytest

from barb.data import sample
from barb.data.sample import generate_sample, write_samples
from barb.data.store import data_path, make_meta, read_bars, read_meta, write_bars
from barb.errors import DataError
from barb.instruments import Instrument, load_instrument
from barb.settings import EngineSettings


def minutes_between(frame: pd.DataFrame, start: str, end: str) -> pd.Series:
    t = frame["timestamp"].dt.time
    return (t >= dt.time.fromisoformat(start)) & (t < dt.time.fromisoformat(end))


def test_same_seed_gives_identical_bars(
    nq: Instrument, nq_summer: pd.DataFrame, summer: tuple[dt.date, dt.date]
) -> None:
    again = generate_sample(nq, *summer)
    for column in nq_summer.columns:
        assert nq_summer[column].to_numpy().tobytes() == again[column].to_numpy().tobytes()


def test_another_seed_gives_other_bars(
    nq: Instrument, nq_summer: pd.DataFrame, summer: tuple[dt.date, dt.date]
) -> None:
    spec = nq.sample.model_copy(update={"seed": nq.sample.seed + 1})
    other = generate_sample(nq.model_copy(update={"sample": spec}), *summer)
    assert (other["timestamp"] == nq_summer["timestamp"]).all()
    assert not np.array_equal(other["close"], nq_summer["close"])


def test_bars_are_exactly_the_calendar_minutes(
    nq: Instrument, nq_summer: pd.DataFrame, summer: tuple[dt.date, dt.date]
) -> None:
    schedule = mcal.get_calendar(nq.calendar).schedule(*summer)
    expected = pd.DatetimeIndex([])
    for row in schedule.itertuples():
        minutes = pd.date_range(row.market_open, row.market_close, freq="1min", inclusive="left")
        expected = expected.append(minutes.tz_convert(nq.timezone).tz_localize(None))
    assert (nq_summer["timestamp"].to_numpy() == expected.to_numpy()).all()
    assert len(nq_summer) == len(expected)
    dates = pd.DatetimeIndex(nq_summer["trading_date"].unique())
    assert dates.equals(pd.DatetimeIndex(schedule.index))


def test_calendar_details(nq_summer: pd.DataFrame) -> None:
    ts = nq_summer["timestamp"]
    by_date = nq_summer.groupby("trading_date")["timestamp"]
    # The daily maintenance break.
    assert not minutes_between(nq_summer, "17:00", "18:00").any()
    # Sunday 18:00 opens Monday's trading date; nothing else on a weekend.
    sunday_open = nq_summer[ts == pd.Timestamp("2024-06-09 18:00")]
    assert list(sunday_open["trading_date"]) == [pd.Timestamp("2024-06-10")]
    weekend = ts.dt.dayofweek >= 5
    assert not (weekend & ~((ts.dt.dayofweek == 6) & (ts.dt.hour >= 18))).any()
    # Early close on July 3rd at 13:15 ET; Independence Day halts at 13:00 and the market
    # reopens at 18:00 for July 5th (CME's holiday hours, as the calendar has them).
    assert by_date.max()[pd.Timestamp("2024-07-03")] == pd.Timestamp("2024-07-03 13:14")
    assert by_date.max()[pd.Timestamp("2024-07-04")] == pd.Timestamp("2024-07-04 12:59")
    july_4 = ts.dt.date == dt.date(2024, 7, 4)
    assert not (july_4 & minutes_between(nq_summer, "13:00", "18:00")).any()
    assert by_date.min()[pd.Timestamp("2024-07-05")] == pd.Timestamp("2024-07-04 18:00")
    # Juneteenth: equity futures halt at 13:00 ET.
    assert by_date.max()[pd.Timestamp("2024-06-19")] == pd.Timestamp("2024-06-19 12:59")


def test_the_days_of_mourning_stop_the_index_futures_at_0930(
    nq: Instrument, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CME closed its equity index futures at 08:30 CT (09:30 ET) on 2018-12-05 (CME's notice
    of 2018-12-02), which the calendar library has as a full day: the sample's bars stop
    there, and are otherwise the bars of the full day drawn as before (so no later day's
    prices moved). CL (energy traded as usual) keeps the whole day."""
    from barb.events import rules

    week = (dt.date(2018, 12, 3), dt.date(2018, 12, 7))
    cut = generate_sample(nq, *week)
    monkeypatch.setattr(rules, "MISSED_EARLY_CLOSES", {})
    whole = generate_sample(nq, *week)
    day = whole["trading_date"] == pd.Timestamp("2018-12-05")
    late = day & (whole["timestamp"] >= pd.Timestamp("2018-12-05 09:30"))
    assert late.sum() == 450  # 09:30-17:00
    assert cut.equals(whole[~late].reset_index(drop=True))
    monkeypatch.undo()
    cl = generate_sample(load_instrument("CL"), *week)
    last = cl[cl["trading_date"] == pd.Timestamp("2018-12-05")]["timestamp"].max()
    assert last == pd.Timestamp("2018-12-05 16:59")


def test_prices_are_on_the_tick_and_bars_consistent(nq_summer: pd.DataFrame) -> None:
    o, h, low, c = (nq_summer[k].to_numpy() for k in ("open", "high", "low", "close"))
    for prices in (o, h, low, c):
        assert np.array_equal(prices * 4, np.round(prices * 4))
    assert ((low <= o) & (low <= c) & (o <= h) & (c <= h)).all()
    assert (low > 0).all()
    # Within a session each bar opens at the previous close; only reopens may gap.
    same_session = (
        nq_summer["trading_date"].to_numpy()[1:] == nq_summer["trading_date"].to_numpy()[:-1]
    )
    assert np.array_equal(o[1:][same_session], c[:-1][same_session])


def test_crude_oil_ticks_are_cents() -> None:
    frame = generate_sample(load_instrument("CL"), dt.date(2020, 4, 1), dt.date(2020, 4, 30))
    for column in ("open", "high", "low", "close"):
        cents = frame[column].to_numpy() * 100
        assert np.allclose(cents, np.round(cents), atol=1e-6)
        assert (frame[column] > 0).all()  # unlike 2020-04-20's real -37.63


def test_volume_and_volatility_follow_the_intraday_u(nq_summer: pd.DataFrame) -> None:
    volume = nq_summer["volume"]
    assert volume.dtype == np.int64
    assert (volume > 0).all()
    open_half_hour = minutes_between(nq_summer, "09:30", "10:00")
    night = minutes_between(nq_summer, "01:00", "03:00")
    lunch = minutes_between(nq_summer, "12:00", "13:00")
    into_close = minutes_between(nq_summer, "15:30", "16:00")
    assert volume[open_half_hour].mean() > 3 * volume[night].mean()
    assert volume[into_close].mean() > volume[lunch].mean() < volume[open_half_hour].mean()
    span = nq_summer["high"] - nq_summer["low"]
    assert span[open_half_hour].mean() > 2 * span[night].mean()
    assert span[into_close].mean() > span[lunch].mean()
    # Bumps at 03:00 (Europe) and 08:30 (US data) above the quiet minutes before them.
    at = nq_summer["timestamp"].dt.strftime("%H:%M")
    assert volume[at == "03:00"].mean() > 2 * volume[at == "02:30"].mean()
    assert volume[at == "08:30"].mean() > 2 * volume[at == "08:15"].mean()


def daily_closes(frame: pd.DataFrame) -> pd.Series:
    return frame.groupby("trading_date")["close"].last()


def test_volatility_clusters(es_years: pd.DataFrame) -> None:
    returns = np.log(daily_closes(es_years)).diff().dropna()
    assert returns.abs().autocorr(1) > 0.1
    assert abs(returns.autocorr(1)) < 0.15  # clustered size, not predictable direction


def test_prices_pass_near_the_anchors(
    es_years: pd.DataFrame, years: tuple[dt.date, dt.date]
) -> None:
    closes = daily_closes(es_years)
    anchors = load_instrument("ES").sample.anchors
    inside = {d: p for d, p in anchors.items() if years[0] <= d <= years[1]}
    assert len(inside) >= 3
    for day, price in inside.items():
        close = closes[: pd.Timestamp(day)].iloc[-1]
        assert price / 1.5 < close < price * 1.5, (day, close, price)


def test_overnight_moves_the_price_between_cash_sessions(nq_summer: pd.DataFrame) -> None:
    rth = nq_summer[minutes_between(nq_summer, "09:30", "16:00")]
    days = rth.groupby("trading_date").agg(first=("open", "first"), last=("close", "last"))
    gaps = days["first"].to_numpy()[1:] - days["last"].to_numpy()[:-1]
    assert (gaps != 0).mean() > 0.9


def test_instrument_without_sample_block_is_refused(nq: Instrument) -> None:
    with pytest.raises(DataError, match="no `sample` block"):
        generate_sample(nq.model_copy(update={"sample": None}))


@pytest.fixture
def short_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    """write_samples generates 18 years; a few days are enough to test what it writes."""
    real = sample.generate_sample
    monkeypatch.setattr(
        sample,
        "generate_sample",
        lambda instrument: real(instrument, dt.date(2024, 1, 2), dt.date(2024, 1, 5)),
    )


@pytest.mark.usefixtures("short_generator")
def test_write_samples_writes_and_keeps_existing_files(settings: EngineSettings) -> None:
    reports = write_samples(["NQ", "CL"], settings)
    assert [(r.symbol, r.written) for r in reports] == [("NQ", True), ("CL", True)]
    frame, meta = read_bars(data_path("NQ", settings))
    assert meta.source == "synthetic"
    assert meta.description == f"synthetic sample v{sample.GENERATOR_VERSION}, seed 101"
    assert (meta.first_date, meta.last_date) == (dt.date(2024, 1, 2), dt.date(2024, 1, 5))
    assert meta.rows == len(frame) == 4 * 1380

    # An existing file, perhaps real data, stays unless forced.
    imported = frame.iloc[:10]
    write_bars(
        imported,
        make_meta(
            imported,
            instrument="NQ",
            timezone="America/New_York",
            source="imported",
            description="mine",
        ),
        data_path("NQ", settings),
    )
    (kept,) = write_samples(["NQ"], settings)
    assert not kept.written
    assert read_meta(data_path("NQ", settings)).source == "imported"
    (forced,) = write_samples(["NQ"], settings, force=True)
    assert forced.written
    assert read_meta(data_path("NQ", settings)).source == "synthetic"
    (current,) = write_samples(["NQ"], settings)
    assert not current.written

    # A sample from an older generator is synthetic, so it is simply made again.
    old = make_meta(
        imported,
        instrument="NQ",
        timezone="America/New_York",
        source="synthetic",
        description="synthetic sample, seed 101",
    )
    write_bars(imported, old, data_path("NQ", settings))
    (renewed,) = write_samples(["NQ"], settings)
    assert renewed.written
    assert read_meta(data_path("NQ", settings)).rows == 4 * 1380


def test_sample_symbols_are_the_instruments_with_a_sample_block() -> None:
    assert sample.sample_symbols() == ["CL", "ES", "NQ"]


# The bars' bytes as generated on the machine that last changed the generator: any machine
# (another CPU, another NumPy build) must produce exactly these. Changing the generator on
# purpose means raising GENERATOR_VERSION and recording the new digests here.
GOLDEN_DIGESTS = {
    "NQ": "1b3e08eccba6183cd17bb3a64a157732379eaf2f17a45dc51d0d71b4c3397c3e",
    "CL": "41c4a8a7786514f648e4195dc2ea47a02a8d64dd323657358411102b8baca8e9",
}


@pytest.mark.parametrize("symbol", sorted(GOLDEN_DIGESTS))
def test_sample_bars_are_byte_identical_on_every_machine(
    symbol: str, summer: tuple[dt.date, dt.date]
) -> None:
    frame = generate_sample(load_instrument(symbol), *summer)
    digest = hashlib.sha256()
    for column in frame.columns:
        digest.update(frame[column].to_numpy().tobytes())
    assert digest.hexdigest() == GOLDEN_DIGESTS[symbol]


def test_instruments_share_the_markets_shocks(es_years: pd.DataFrame, years: tuple) -> None:
    nq = generate_sample(load_instrument("NQ"), *years)
    cl = generate_sample(load_instrument("CL"), *years)

    def returns(frame: pd.DataFrame) -> pd.Series:
        return np.log(frame.groupby("trading_date")["close"].last()).diff().dropna()

    both = pd.concat([returns(nq), returns(es_years), returns(cl)], axis=1, join="inner")
    corr = both.corr().to_numpy()
    assert 0.85 <= corr[0, 1] <= 0.95  # NQ-ES
    assert 0.1 <= corr[1, 2] <= 0.5  # ES-CL

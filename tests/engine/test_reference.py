"""The model's reference texts: generated from the registry, sized for a model, examples run."""

from __future__ import annotations

import json

import pytest
import yaml

from barb import execute, render_summary
from barb.data.sample import write_samples
from barb.events import event_catalog
from barb.instruments import load_instrument
from barb.reference import (
    concept_names,
    describe_concept,
    examples_for,
    indicators_reference,
    query_examples,
    query_reference,
)
from barb.script.library import library
from barb.script.patterns import pattern_catalog
from barb.session_concepts import session_concepts
from barb.settings import PROJECT_ROOT


def test_query_reference_is_model_sized() -> None:
    text = query_reference(load_instrument("NQ"))
    assert len(text.splitlines()) <= 200
    # Tokens at 4 characters each; 4,100 since the calendar functions (holiday, trading_day),
    # per-unit running functions, session lags, beta and rolling_correlation; 4,200 since
    # pre_holiday, post_holiday, weekofyear and dayofyear; 4,300 since exp, cumprod and
    # coalesce (a compounded equity and an empty value needed 2.718 ** and 0 / 0 tricks);
    # 4,400 since floor and ceil (histogram buckets: round(x - 0.5) is off for negatives);
    # 4,500 since wtd and the rule for the data's unfinished last week or month (last_1_bars
    # read "last week" as this week's three days); 4,600 since the joined instruments' hours
    # and the join's own session (CL's overnight beside NQ's RTH day had no query).
    assert len(text) / 4 < 4600


def test_the_mean_line_gives_the_empty_else_of_a_mean_over_some_rows() -> None:
    """p39b Q11t: a model keeping every year listed wrote mean(if(st == 3, next_ret, 0)),
    whose 0s on the other days shrank each year's mean ~18 times. The reference's line for
    mean() names the else that leaves them out: 0 / 0, empty."""
    lines = query_reference(load_instrument("NQ")).splitlines()
    mean = next(line for line in lines if line.strip().startswith("mean(col) —"))
    assert "mean(if(c, x, 0 / 0)) averages x where c" in mean


# CME's contract specifications: what a move of 1.0 in the price is worth on one contract.
CONTRACT_USD = {"NQ": "20", "ES": "50", "CL": "1,000"}


@pytest.mark.parametrize("asking", sorted(CONTRACT_USD))
def test_every_instruments_point_value_is_in_the_reference(asking: str) -> None:
    """An NQ chat asked for CL's P&L in dollars multiplied by NQ's 20 (p32e Q8/16: -0.50 for
    -25.12 USD): the reference the model reads first names each instrument's value, and
    the backtest concept the asking one's multiplier."""
    line = query_reference(load_instrument(asking)).splitlines()[2]
    assert line.startswith(f'- instrument: "{asking}", ')
    others = ", ".join(f"{s} {v}" for s, v in sorted(CONTRACT_USD.items()) if s != asking)
    assert line.endswith(
        f"Per contract a 1.0 move is {asking} {CONTRACT_USD[asking]}, {others} USD."
    )
    multiplier = CONTRACT_USD[asking].replace(",", "")
    backtest = describe_concept("profit factor", load_instrument(asking))
    assert f"Per {asking} contract in USD: pnl * {multiplier}." in backtest


def test_every_function_is_documented_once_somewhere() -> None:
    text = query_reference(load_instrument("NQ")) + "\n" + indicators_reference()
    specs = {s.name: s for s in library().values()}
    for spec in specs.values():
        needle = spec.name if spec.category == "candle" else spec.signature()
        # A family is on its first one's line, with its parameters: daily|weekly|monthly(…).
        head = specs[spec.listed_under or spec.name]
        family = [head.name, *(s.name for s in specs.values() if s.listed_under == head.name)]
        if len(family) > 1:
            parameters = head.signature().removeprefix(head.name)
            assert spec.signature().removeprefix(spec.name) == parameters, spec.name
            needle = "|".join(family) + parameters
        assert needle in text, spec.name


def test_there_are_at_least_ten_examples() -> None:
    assert len(query_examples()) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("symbol", ["NQ", "CL"])
@pytest.mark.parametrize(
    "index", range(len(query_examples())), ids=[e.question[:40] for e in query_examples()]
)
def test_every_example_runs(symbol: str, index: int, sample_settings) -> None:
    """On the full sample: the examples name real periods (2023, last_year), and a period
    without data is an error. Each runs as the instrument's reference shows it, its times
    filled in (CL's opening range is another window than NQ's)."""
    write_samples([symbol], sample_settings)  # CL is not in the default sample fixture
    example = examples_for(load_instrument(symbol))[index]
    result = execute(example.query, symbol, settings=sample_settings)
    assert result.ok, (example.question, result.to_dict())


@pytest.mark.parametrize("name", [*pattern_catalog(), *event_catalog()])
def test_concepts_are_described(name: str) -> None:
    text = describe_concept(name)
    assert not text.startswith("No concept")
    assert len(text) > 60


def test_concept_lookup_is_forgiving() -> None:
    assert "prev(high)" in describe_concept("Inside Day")
    assert "Did you mean inside_day" in describe_concept("insde day")


def test_the_result_format_is_explained() -> None:
    text = query_reference(load_instrument("NQ"))
    result = text[text.index("RESULT:") : text.index("EXAMPLES:")]
    # What "first" and "last" rows are: the ends of the order the summary names.
    assert "first 5 and the last 5 rows in the table's order" in result
    assert "not earliest or best" in result
    # Every bar label, as the summary, the CSV and the chart write it.
    for needle in ("date 2023-01-05", "week 2023-01-03 (the week's first trading date)",
                   "month 2023-01", "quarter 2023-Q1", "year 2023"):  # fmt: skip
        assert needle in result


@pytest.mark.slow
def test_the_columns_the_model_reads_are_the_ones_the_reference_names(sample_settings) -> None:
    """The reference says rows show the select (else the mapped columns) and then the sort
    column, else OHLC: what the summary's header line holds must agree."""
    text = query_reference(load_instrument("NQ"))
    assert "Rows show your select (else your map's columns), then your sort column" in text

    def header(query: dict) -> list[str]:
        base = {"session": "RTH", "from": "weekly", "period": "2024-10:2024-12"}
        result = execute({**base, **query}, "NQ", settings=sample_settings)
        assert result.ok, result.to_dict()
        return render_summary(result).splitlines()[1].split(",")

    ret = {"map": {"ret": "close / prev(close) - 1"}}
    assert header({}) == ["week", "open", "high", "low", "close"]
    assert header(ret) == ["week", "ret"]
    assert header({"sort": "range desc"}) == ["week", "range"]
    assert header({**ret, "select": ["close", "range", "ret"]}) == ["week", "close", "range", "ret"]
    # "Sorted by ret" over closes alone left the model no return to say.
    assert header({**ret, "select": "close", "sort": "ret desc"}) == ["week", "close", "ret"]


def test_examples_use_the_default_session_unless_they_say_why() -> None:
    default = load_instrument("NQ").default_session
    for example in query_examples():
        session = example.query.get("session", default)
        assert session == default or example.session_why, example.question


@pytest.mark.parametrize("name", concept_names())
def test_every_listed_concept_name_and_alias_resolves(name: str) -> None:
    text = describe_concept(name)
    assert not text.startswith("No concept"), text


@pytest.mark.parametrize(
    ("asked", "headline"),
    [
        ("non-farm payrolls", "nfp — Non-Farm Payrolls"),
        ("Non-Farm Payrolls", "nfp — Non-Farm Payrolls"),
        ("nonfarm_payrolls", "nfp — Non-Farm Payrolls"),
        ("quad witching", "quad_witching — Quarterly Options Expiration"),
        ("Consumer Price Index", "cpi — Consumer Price Index"),
        ("inside day", "Inside day"),
    ],
)
def test_concepts_are_found_however_they_are_spelt(asked: str, headline: str) -> None:
    assert describe_concept(asked).startswith(headline)


def test_an_unknown_concept_suggests_listed_names_and_lists_them_sorted() -> None:
    text = describe_concept("payrols")
    suggested = text.split("Did you mean ")[1].split("?")[0].split(", ")
    assert "payrolls" in suggested
    for name in suggested:  # a suggestion is never a name that itself fails
        assert not describe_concept(name).startswith("No concept")
    known = text.split("Known: ")[1].rstrip(".").split(", ")
    assert known == sorted(known)
    assert set(known) == set(pattern_catalog()) | set(event_catalog()) | set(session_concepts())


def test_no_example_counts_groups_after_a_where() -> None:
    """where drops a group with no matching row: a count per year made that way misses the
    years with none, and an average over the years then divides by too few (25.86 ADX>40
    days a year instead of 20.11). The examples count with count(cond), and the reference
    says why."""
    for example in query_examples():
        query = example.query
        select = query.get("select", [])
        counts_rows = "count()" in ([select] if isinstance(select, str) else select)
        assert not ("where" in query and "group_by" in query and counts_rows), example.question
    text = query_reference(load_instrument("NQ"))
    assert "a group with no matching row does not appear" in text
    assert "count(cond) without where keeps every group" in text


def test_macd_crosses_are_named_for_the_line_they_cross() -> None:
    """The histogram's sign change is the signal-line cross; the zero-line cross is macd()'s."""
    indicators = indicators_reference()
    assert "macd() > 0 and prev(macd()) <= 0" in indicators
    assert "its sign change is the signal-line cross, not the zero line" in indicators
    macd = next(e for e in query_examples() if "MACD" in e.question)
    assert "signal line" in macd.question and "zero" in macd.question
    assert "prev(line) <= 0" in json.dumps(macd.query) and "macd()" in json.dumps(macd.query)


def test_up_days_say_which_definition_they_use() -> None:
    """Traders mean close above the previous close; up_bar() is close above the open."""
    example = next(e for e in query_examples() if "up days" in e.question)
    assert "streak(close > prev(close))" in json.dumps(example.query)
    assert "previous close" in example.question and "up_bar()" in example.question
    assert "close > prev(close)" in describe_concept("up_bar")
    assert "close < prev(close)" in describe_concept("down_bar")


def test_the_join_line_says_how_a_session_reads_on_the_joined_instrument() -> None:
    """A name is each instrument's own hours, a window the same clock hours, written in the
    asking instrument's own hours."""
    for symbol, hours in (("NQ", "09:30-17:00"), ("CL", "09:00-14:30")):
        text = query_reference(load_instrument(symbol))
        assert (
            f"A session NAME is read with each instrument's own hours (RTH is {hours} for "
            f"{symbol}; " in text
        )
        assert f"a window session ('{hours}') gives both the same clock hours." in text


def _yaml_sessions(symbol: str) -> dict[str, tuple[str, str | None]]:
    """Each session's hours and parent, as the instrument's file writes them."""
    with (PROJECT_ROOT / "instruments" / f"{symbol}.yaml").open() as file:
        sessions = yaml.safe_load(file)["sessions"]
    return {n: (f"{s['start']}-{s['end']}", s.get("parent")) for n, s in sessions.items()}


def test_the_join_line_gives_the_other_instruments_hours() -> None:
    """An NQ chat planned NQ's RTH beside CL's "RTH" reading "RTH is 09:30-17:00 for NQ, maybe
    not for another": CL's hours (09:00-14:30), read from its own file, were nowhere in what
    the model reads until the run warned of them."""
    nq, cl = _yaml_sessions("NQ"), _yaml_sessions("CL")
    [line] = [s for s in query_reference(load_instrument("NQ")).splitlines() if "- join:" in s]
    said = line.split("CL: ")[1].split(";")[0]
    for name, (hours, parent) in cl.items():
        # The day's main parts (under the full day ETH), where NQ's differ.
        expected = parent == "ETH" and name in nq and nq[name][0] != hours
        assert (f"{name} {hours}" in said) == expected, name
    assert "RTH 09:00-14:30" in said and "OVERNIGHT 18:00-09:00" in said
    assert "no " + ", ".join(n for n in nq if n not in cl) in line
    assert "ES: the same hours" in line
    assert '{"instrument": "CL", "session": "OVERNIGHT"} reads CL in that session' in line


def test_atr_says_how_to_compare_it_across_price_levels() -> None:
    [line] = [line for line in indicators_reference().splitlines() if "atr(n=14)" in line]
    assert "atr(14) / close * 100" in line and "% of price" in line


@pytest.mark.parametrize(
    ("symbol", "unit"), [("NQ", "points"), ("ES", "points"), ("CL", "dollars")]
)
def test_atr_is_in_the_instrument_s_own_price_unit(symbol: str, unit: str) -> None:
    """CL's prices move in dollars (a barrel's price): the indicator line and the concept
    lookup said "Average True Range in points" to a model answering about CL."""
    with (PROJECT_ROOT / "instruments" / f"{symbol}.yaml").open() as file:
        assert yaml.safe_load(file)["price_unit"] == unit
    instrument = load_instrument(symbol)
    [line] = [s for s in indicators_reference(instrument).splitlines() if "atr(n=14)" in s]
    assert f"Average True Range in {unit} (Wilder)" in line
    assert f"Average True Range in {unit} (Wilder)" in describe_concept("atr", instrument)
    if unit != "points":
        assert "points" not in indicators_reference(instrument)


@pytest.mark.parametrize("symbol", ["NQ", "ES", "CL"])
def test_the_join_example_names_another_instrument_with_data(symbol: str, sample_settings) -> None:
    """An ES chat read '{"instrument": "ES"} adds ES bars … as es_open', ES joined onto
    itself: the example names another instrument, one whose bars are loaded."""
    write_samples(["NQ", "ES", "CL"], sample_settings)
    text = query_reference(load_instrument(symbol), sample_settings)
    [line] = [line for line in text.splitlines() if line.startswith("- join:")]
    other = line.split('{"instrument": "')[1].split('"')[0]
    assert other != symbol
    assert (sample_settings.data_dir / f"{other}.parquet").is_file()
    prefix = other.lower()
    assert f"adds {other} bars of the same timeframe as {prefix}_open, {prefix}_high" in line

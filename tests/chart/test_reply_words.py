"""What a person reads on the chart and in its caption, checked against DuckDB over the
sample's minute bars (the ``days`` fixture), never Barb's engine: the footer's count, the
subtitle's measures in words, a tie's clock, the tie a limit cut."""

from __future__ import annotations

import io

import pandas as pd
from engine_results import figure, run
from matplotlib.figure import Figure
from matplotlib.text import Text

from barb.charts import chart_headline
from barb.export import csv_bytes


def texts(fig: Figure) -> list[str]:
    """Every text drawn, a wrapped one on one line."""
    shown = [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return [t.replace("\n", " ") for t in shown]


def days_of(days: pd.DataFrame, year: int) -> pd.DataFrame:
    index = pd.to_datetime(pd.Series(days.index, index=days.index))
    return days[(index.dt.year == year).to_numpy()]


def test_a_footer_of_a_query_without_where_counts_the_bars_not_a_match(
    sample_settings, days
) -> None:
    """«подошло 259 из 259 (дневные бары)» under "average range by weekday": nothing was
    filtered, and the footer read as a filter that kept every day. A where's footer still
    says what it kept."""
    year = days_of(days, 2024)
    query = {"session": "RTH", "from": "daily", "period": "2024", "group_by": "dayofweek()"}
    result = run({**query, "select": "mean(range)"}, sample_settings)
    shown = texts(figure(result, "ru"))
    assert f"дневные бары: {len(year)}" in shown
    assert not any("подошло" in t for t in shown)
    assert f"daily bars: {len(year)}" in texts(figure(result, "en"))

    wide = year[(year["high"] - year["low"]) > 300]
    result = run({**query, "where": "range > 300", "select": "mean(range)"}, sample_settings)
    said = f"подошло {len(wide)} из {len(year)} (дневные бары)"
    assert any(t.startswith(said) for t in texts(figure(result, "ru")))


def test_the_subtitle_names_the_measure_and_the_sort_in_words(sample_settings, days) -> None:
    """«mean(range) · по дню недели» under «средний диапазон: Ср 349,17 – Вт 381,05» and
    «range · сортировка range по убыванию» under the widest days: the chart's words named
    the measure, its subtitle the query's code. A formula with no words stays as written."""
    year = days_of(days, 2024)
    by_day = run(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "group_by": "dayofweek()",
            "select": "mean(range)",
        },
        sample_settings,
    )
    shown = texts(figure(by_day, "ru"))
    assert "средний диапазон · по дню недели" in shown
    assert not any("mean(range)" in t for t in shown)
    assert "average range · by weekday" in texts(figure(by_day, "en"))

    widest = run(
        {
            "session": "RTH",
            "from": "daily",
            "period": "2024",
            "select": ["range", "close - open"],
            "sort": "range desc",
            "limit": 5,
        },
        sample_settings,
    )
    top = (year["high"] - year["low"]).nlargest(5)
    assert widest.table is not None
    assert widest.table["range"].tolist() == top.tolist()  # the chart of the right rows
    said = "диапазон, close - open · сортировка: диапазон по убыванию · первые 5"
    assert said in " ".join(texts(figure(widest, "ru")))  # on two lines


def test_a_tie_the_limit_cut_names_moscow_s_clock(sample_settings, con) -> None:
    """ "The 5 Moscow hours that most often make the day's high": «Тоже 16, но за пределами
    лимита: 20:00» under «№1 22:00 (МСК)», and the caption's «столько же: 20:00», read as
    New York's 20:00. The counts are DuckDB's: each 2023 trading day's highest hourly bar
    (the earliest of equal highs), its hour on Moscow's clock."""
    hours = con.execute(
        """
        SELECT trading_date, date_trunc('hour', timestamp) AS hour, max(high) AS high
        FROM nq WHERE year(trading_date) = 2023 GROUP BY 1, 2
        """
    ).df()
    hours = hours.sort_values(["trading_date", "hour"])
    top = hours.loc[hours.groupby("trading_date")["high"].idxmax(), "hour"]
    moscow = pd.DatetimeIndex(top).tz_localize("America/New_York").tz_convert("Europe/Moscow")
    counts = pd.Series(moscow.hour).value_counts()
    fifth = counts.sort_values(ascending=False).iloc[4]
    tied = sorted(counts[counts == fifth].index)
    assert len(tied) == 2  # the limit of 5 keeps one of them
    query = {
        "session": "ETH",
        "from": "1h",
        "period": "2023",
        "group_by": "date()",
        "select": "arg_max(hour('MSK'), high) as hh",
        "then": {"group_by": "hh", "select": "count() as days", "sort": "days desc", "limit": 5},
    }
    result = run(query, sample_settings)
    assert result.table is not None
    kept = int(result.table["hh"].iloc[-1])
    [cut] = [h for h in tied if h != kept]
    note = f"Тоже {fifth}, но за пределами лимита: {cut:02d}:00 (МСК)"
    assert note in texts(figure(result, "ru"))
    assert chart_headline(result, "ru").endswith(f"столько же: {cut:02d}:00 (МСК)")
    assert chart_headline(result, "en").endswith(f"tied with {cut:02d}:00 (MSK)")
    # The Russian file as the chart: Moscow's hours as times under a header naming the
    # clock (it read 22 under «hh», beside a note of «20:00 (МСК)»).
    sent = pd.read_csv(io.BytesIO(csv_bytes(result, "ru")), sep=";", dtype=str)
    assert list(sent.columns[:2]) == ["hh (МСК)", "дни"]
    top5 = {f"{h:02d}:00": str(n) for h, n in counts.items() if h != cut and n >= fifth}
    assert dict(zip(sent["hh (МСК)"], sent["дни"], strict=True)) == top5
    assert sent["примечание"].iloc[-1] == note


def test_a_russian_file_names_the_clock_of_its_time_keys(sample_settings, days) -> None:
    """ "Average hourly range by time of day": the chart's axis read «время (ET)», the file's
    header «время» over 09:30, which a Russian reader takes for Moscow's time."""
    query = {"session": "RTH", "from": "1h", "period": "2024-03", "group_by": "time()"}
    result = run({**query, "select": "mean(range)"}, sample_settings)
    sent = pd.read_csv(io.BytesIO(csv_bytes(result, "ru")), sep=";", dtype=str)
    assert sent.columns[0] == "время (ET)"
    assert sent["время (ET)"].tolist() == [f"{h:02d}:30" for h in range(9, 17)]


def test_a_caption_of_ranked_rows_says_the_tie_the_limit_cut(sample_settings, days) -> None:
    """ "The widest days of 2024", limit 31: the chart's note and the CSV said «Тоже 510, но
    за пределами лимита: 2024-08-28», and the caption only «диапазон: №1 2024-02-27 990,75
    пункта», as if the 31 were the whole list. The ranges are DuckDB's."""
    year = days_of(days, 2024)
    ranges = (year["high"] - year["low"]).sort_values(ascending=False, kind="stable")
    values = ranges.to_numpy()
    limit = next(n for n in range(1, len(values)) if values[n - 1] == values[n])
    tied = sorted(str(d)[:10] for d in ranges.index[values == values[limit - 1]])
    assert len(tied) == 2
    query = {"session": "RTH", "from": "daily", "period": "2024", "select": "range"}
    result = run({**query, "sort": "range desc", "limit": limit}, sample_settings)
    place = int((values > values[limit - 1]).sum()) + 1
    value = f"{values[limit - 1]:.2f}"
    first = f"range: #1 {str(ranges.index[0])[:10]} {values[0]:.2f} points"
    cut = f"#{place} {tied[0]} {value} points, tied with {tied[1]}"  # the earlier row is kept
    assert chart_headline(result, "en") == f"{first} · {cut}"
    said = chart_headline(result, "ru")
    assert said.endswith(f"{value.replace('.', ',')} пункта, столько же: {tied[1]}")


def test_a_value_left_off_the_chart_is_named_as_the_file_heads_it(sample_settings) -> None:
    """«+ ещё 1 значение в CSV: close_open» under a Russian chart whose file heads that
    column «close - open»: the note sent the person to a column the file does not have."""
    query = {"session": "RTH", "from": "daily", "period": "2024", "sort": "range desc"}
    result = run({**query, "select": ["range", "close - open"], "limit": 5}, sample_settings)
    notes = {"ru": ("+ ещё 1 значение в CSV: ", ";"), "en": ("+ 1 more value in the CSV: ", ",")}
    for language, (note, sep) in notes.items():
        header = pd.read_csv(io.BytesIO(csv_bytes(result, language)), sep=sep).columns
        [said] = [t for t in texts(figure(result, language)) if t.startswith(note)]
        assert said.removeprefix(note) in header

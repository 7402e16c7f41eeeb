"""What leaves Barb is clean: CSV times on the exchange's clock, named by it, prices on the
tick, plain numbers to 6 significant digits, UTF-8 with a byte order mark, Barb's own words
in the person's language, and the data's source named in the file and on the chart."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import bar_files as bf
import pandas as pd
import pytest

from barb.charts import draw_chart
from barb.data.importer import import_file
from barb.export import csv_bytes
from barb.interpreter import execute
from barb.settings import EngineSettings


@pytest.fixture
def imported(tmp_path: Path, settings: EngineSettings) -> pd.DataFrame:
    bars = bf.week_of_bars()
    import_file(bf.plain_csv(tmp_path / "my bars.csv", bars), "NQ", settings)
    return bars


def rows(data: bytes, delimiter: str = ",") -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig")), delimiter=delimiter))


def test_times_are_the_exchange_clock_and_read_back_to_the_same_instants(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    """p47d D11: ``2025-12-24T09:30:00-05:00`` stayed text in Excel and LibreOffice, while
    the answer and the chart said 2025-12-24 09:30 ET: the file says the same, in a column
    named by the clock, and the instants are those of the bars."""
    result = execute({"session": "ETH", "from": "1h"}, "NQ", settings=settings)
    assert result.error is None
    data = csv_bytes(result)
    first = rows(data)[0]
    assert "timestamp" not in first
    assert first["time_et"] == "2024-03-17 18:00"
    back = pd.read_csv(io.BytesIO(data))
    assert back.columns[0] == "time_et"  # pandas reads past the byte order mark
    instants = pd.to_datetime(back["time_et"]).dt.tz_localize("America/New_York")
    hourly = imported.set_index("timestamp").resample("1h").first().dropna()
    assert instants.tolist()[:5] == hourly.index.tolist()[:5]


def test_prices_are_on_the_tick_and_numbers_plain(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    query = {"session": "RTH", "from": "daily", "map": {"mid": "(high + low) / 2"}}
    result = execute(query, "NQ", settings=settings)
    assert result.error is None
    table = rows(csv_bytes(result))
    assert table[0]["date"] == "2024-03-18"  # a daily bar is named by its date
    for row in table:
        for column in ("open", "high", "low", "close", "range"):
            price = row[column]
            assert float(price) * 4 == int(float(price) * 4)  # NQ's tick is 0.25
            assert len(price.split(".")[1]) == 2
        assert "e" not in row["volume"].lower() and "," not in row["volume"]
    # A computed column keeps its precision, written without an exponent.
    big = execute(
        {"session": "ETH", "from": "daily", "map": {"v": "volume * 1000000.5"}, "select": "v"},
        "NQ",
        settings=settings,
    )
    value = rows(csv_bytes(big))[0]["v"]
    assert "e" not in value.lower() and "," not in value
    # A large number keeps every whole digit and its cents: 6 significant digits are a floor.
    assert value == f"{big.table['v'].iloc[0]:.2f}".rstrip("0").rstrip(".")


def test_the_source_is_named_in_the_csv_and_the_chart(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    result = execute(
        {"session": "RTH", "from": "daily", "select": "mean(range)"}, "NQ", settings=settings
    )
    written = rows(csv_bytes(result))
    source = written[0]["source"]
    assert [row["source"] for row in written[1:]] == [""] * 4  # said once, on the first row
    # The file's dates as a chart's scope writes a period, in any language: not "… to …".
    assert source == "my bars.csv, 2024-03-18 — 2024-03-22"
    assert result.metadata.data_description == source
    fig = draw_chart(result)
    assert fig is not None
    # A footer too wide for the phone-width figure wraps to a second line.
    footers = [t.get_text().replace("\n", " ") for t in fig.texts if "bars" in t.get_text()]
    assert footers == [f"daily bars: 5 · data: {source}"]
    fig = draw_chart(result, language="ru")
    assert fig is not None
    footers = [t.get_text().replace("\n", " ") for t in fig.texts if "бары" in t.get_text()]
    assert footers == [f"дневные бары: 5 · данные: {source}"]


@pytest.mark.slow
def test_the_sample_is_named_synthetic_in_the_csv(sample_settings: EngineSettings) -> None:
    result = execute(
        {"session": "RTH", "from": "daily", "period": "2024-01", "select": "close"},
        "NQ",
        settings=sample_settings,
    )
    assert [row["source"] for row in rows(csv_bytes(result))][:2] == [
        "synthetic sample, not market data",
        "",
    ]
    russian = rows(csv_bytes(result, "ru"), delimiter=";")
    assert russian[0]["источник"] == "синтетические данные, не история рынка"


def test_only_traded_prices_are_rounded(
    tmp_path: Path, imported: pd.DataFrame, settings: EngineSettings
) -> None:
    import_file(bf.plain_csv(tmp_path / "es.csv", imported), "ES", settings, any_level=True)
    joined = execute(
        {"session": "RTH", "from": "1h", "join": {"instrument": "ES"}, "period": "2024-03-18"},
        "NQ",
        settings=settings,
    )
    assert joined.error is None
    first = rows(csv_bytes(joined))[0]
    assert first["es_close"] == f"{joined.table['es_close'].iloc[0]:.2f}"
    grouped = execute(
        {"session": "ETH", "from": "1h", "group_by": "hour()", "select": "mean(range)"},
        "NQ",
        settings=settings,
    )
    name = grouped.table.columns[-1]
    values = [float(r[name]) for r in rows(csv_bytes(grouped))]
    assert values == pytest.approx(grouped.table[name].tolist(), rel=5e-6)
    assert any(v * 4 != int(v * 4) for v in values)  # means are not forced onto the tick


def test_prices_off_the_tick_are_written_as_they_are(
    tmp_path: Path, settings: EngineSettings
) -> None:
    """A back-adjusted series sits off NQ's 0.25 tick: the answer said open 18100.13 and the
    CSV, rounding to the tick, 18100.25."""
    bars = bf.week_of_bars()
    for column in ("open", "high", "low", "close"):
        bars[column] = bars[column] + 0.13
    import_file(bf.plain_csv(tmp_path / "adjusted.csv", bars), "NQ", settings)
    result = execute({"session": "ETH", "from": "daily"}, "NQ", settings=settings)
    assert result.error is None
    # Trading dates by pandas: a bar from 18:00 New York counts for the next day.
    dates = (bars["timestamp"].dt.tz_localize(None) + pd.Timedelta(hours=6)).dt.date
    daily = bars.groupby(dates).agg(open=("open", "first"), high=("high", "max"))
    table = rows(csv_bytes(result))
    assert [row["date"] for row in table] == [str(d) for d in daily.index]
    assert [float(row["open"]) for row in table] == daily["open"].tolist()
    assert [float(row["high"]) for row in table] == daily["high"].tolist()
    assert table[0]["open"] == f"{daily['open'].iloc[0]:.2f}"  # 18002.13, no float noise


def test_statistics_have_6_significant_digits_and_prices_their_ticks(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    """p47d D11: 311.4230769 and -3.787171623 where the chart said 311.42 and -3.79: two
    digits more than the chart, never fewer decimals than NQ's tick (a mean price keeps its
    cents), prices exact."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"ret": "(close / prev(close) - 1) * 100", "mid": "(high + low) / 3"},
    }
    result = execute(query, "NQ", settings=settings)
    assert result.error is None
    table = result.table if result.table is not None else result.source_rows
    written = rows(csv_bytes(result))
    for row, (_, bar) in zip(written, table.iterrows(), strict=True):
        for column in ("open", "high", "low", "close"):
            assert float(row[column]) == bar[column]  # exact
        if pd.isna(bar["ret"]):
            assert row["ret"] == ""
            continue
        assert float(row["ret"]) == float(f"{bar['ret']:.6g}")
        # A price-sized statistic keeps at least the tick's 2 decimals (6 digits would be 1).
        assert row["mid"] == f"{bar['mid']:.2f}".rstrip("0").rstrip(".")


def test_the_file_opens_in_excel_and_speaks_the_chat_language(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    """p47d D11: a Russian chat got `source` and its note in English on every row, and a
    file without a byte order mark, which Excel reads in the machine's code page."""
    result = execute(
        {"session": "RTH", "from": "daily", "map": {"day": "dayname()"}}, "NQ", settings=settings
    )
    data = csv_bytes(result, "ru")
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8's byte order mark, once
    assert data.count(b"\xef\xbb\xbf") == 1
    lines = data.decode("utf-8-sig").splitlines()
    # The query's columns and values are its own; the words Barb adds are Russian.
    # The bars' columns in the chart's words; the query's own "day" as it wrote it.
    assert lines[0] == "дата;открытие;максимум;минимум;закрытие;объём;диапазон;day;источник"
    # Weekdays in the chart's words (its axis reads «Пн» … «Пт»): the file read "Mon".
    assert lines[1].endswith(";Пн;my bars.csv, 2024-03-18 — 2024-03-22")
    assert [line.split(";")[-2] for line in lines[1:]] == ["Пн", "Вт", "Ср", "Чт", "Пт"]
    assert all(line.endswith(";") for line in lines[2:])
    # The English file keeps the engine's names, which a script reading it may know.
    english = rows(csv_bytes(result))
    assert [row["day"] for row in english] == ["Mon", "Tue", "Wed", "Thu", "Fri"]


def test_a_russian_file_names_weekday_groups_as_its_chart_does(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    """A Russian chat's file of weekday groups read "Mon" … "Fri" beside a chart and a
    ``/query`` table of «Пн» … «Пт»: the file names them in the same words, and its numbers
    stay numbers a Russian spreadsheet reads, the English file's."""
    from barb.charts.grouped import group_labels
    from barb.charts.words import words_for

    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"weekday": "dayname()"},
        "group_by": "weekday",
        "select": "mean(range)",
    }
    result = execute(query, "NQ", settings=settings)
    assert result.error is None and result.table is not None
    russian = pd.read_csv(io.BytesIO(csv_bytes(result, "ru")), sep=";", decimal=",")
    english = pd.read_csv(io.BytesIO(csv_bytes(result, "en")))
    chart = group_labels(result.table, ["weekday"], result.query, words_for("ru"))
    assert russian.iloc[:, 0].tolist() == chart == ["Пн", "Вт", "Ср", "Чт", "Пт"]
    assert english["weekday"].tolist() == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    assert russian.iloc[:, 1].tolist() == english["mean_range"].tolist()


@pytest.mark.parametrize(
    ("group_by", "header"), [("hour()", "час (ET)"), ("dayofweek()", "день недели")]
)
def test_a_russian_file_names_numbered_keys_as_its_chart_does(
    imported: pd.DataFrame, settings: EngineSettings, group_by: str, header: str
) -> None:
    """A Russian file read hour 9 and weekday 0 where its chart reads «09:30» (the RTH
    hour's first bar, on the exchange's clock) and «Пн»: the keys are written as the chart's
    axis writes them, the hour's header names the clock as the axis does; the English file
    keeps the engine's numbers."""
    query = {"session": "RTH", "from": "1h", "group_by": group_by, "select": "count()"}
    result = execute(query, "NQ", settings=settings)
    assert result.error is None and result.table is not None
    russian = rows(csv_bytes(result, "ru"), ";")
    fig = draw_chart(result, language="ru")
    assert fig is not None
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    keys = [row[header] for row in russian]
    assert ticks and set(ticks) <= set(keys)  # the axis may thin its labels
    # From the bars themselves: RTH's hourly bars start at 09:30, each hour's on :30.
    minute = imported["timestamp"].dt.hour * 60 + imported["timestamp"].dt.minute
    rth = imported[(minute >= 570) & (minute < 1020)]
    if group_by == "hour()":
        starts = sorted({570 + (m - 570) // 60 * 60 for m in minute[rth.index]})
        assert keys == [f"{m // 60:02d}:{m % 60:02d}" for m in starts]
    else:
        days = sorted(set(rth["timestamp"].dt.dayofweek))
        assert keys == [["Пн", "Вт", "Ср", "Чт", "Пт"][d] for d in days]
    english = rows(csv_bytes(result, "en"))
    assert [int(row[group_by[:-2]]) for row in english] == result.table.iloc[:, 0].tolist()
    # /query's table beside them writes its keys the same way (it read 9 for «09:30»).
    from barb.charts.grouped import key_words
    from barb.charts.words import words_for

    [said] = key_words(result, words_for("ru")).values()
    assert [said[str(v)] for v in result.table.iloc[:, 0]] == keys


BAR_NAMES = ["open", "high", "low", "close", "volume", "range"]


def test_a_russian_file_opens_in_columns_with_numbers_that_are_numbers(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    """p47d D11: Russian-locale Excel splits a line on ";" and reads "," as the decimal mark:
    the Russian chat's comma-separated file opened as one column per line, its "309.4375"
    text. Read as that Excel reads it, the Russian file holds the English file's numbers,
    prices exact, and a text holding ";" stays one field."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {
            "ret": "(close / prev(close) - 1) * 100",
            "mid": "(high + low) / 3",
            "tag": "if(close > open, 'up; kept', 'down, kept')",
        },
    }
    result = execute(query, "NQ", settings=settings)
    assert result.error is None
    english = pd.read_csv(io.BytesIO(csv_bytes(result, "en")), encoding="utf-8-sig")
    data = csv_bytes(result, "ru")
    russian = pd.read_csv(io.BytesIO(data), encoding="utf-8-sig", sep=";", decimal=",")
    # Headed in the chart's words, the query's own names as written.
    said = ["дата", "открытие", "максимум", "минимум", "закрытие", "объём", "диапазон"]
    assert list(russian.columns) == [*said, "ret", "mid", "tag", "источник"]
    assert list(english.columns[:-1]) == ["date", *BAR_NAMES, "ret", "mid", "tag"]
    russian = russian.set_axis([*english.columns[:-1], "источник"], axis=1)
    # Every number the same, read as numbers (not text), and the texts whole.
    pd.testing.assert_frame_equal(russian.iloc[:, :-1], english.iloc[:, :-1])
    numbers = ["open", "high", "low", "close", "volume", "range", "ret", "mid"]
    assert all(pd.api.types.is_numeric_dtype(russian[name]) for name in numbers)
    bars = result.table if result.table is not None else result.source_rows
    for name in ("open", "high", "low", "close"):
        assert russian[name].tolist() == bars[name].tolist()  # exact
    up = (bars["close"] > bars["open"]).tolist()
    assert russian["tag"].tolist() == ["up; kept" if u else "down, kept" for u in up]
    assert any(up) and not all(up)


def test_the_csv_dialect_follows_the_locale_decimal_mark() -> None:
    """Babel's number symbols say which: a comma's locales get ";" (German too, which Barb
    does not speak), a point's ",", an unknown code English's."""
    from barb.export import Dialect, csv_dialect

    comma = Dialect(";", ",", "1", "0")
    assert csv_dialect("ru") == csv_dialect("de") == csv_dialect("pt-BR") == comma
    assert csv_dialect("en") == csv_dialect("en-GB") == csv_dialect("xx") == Dialect(",", ".")


def test_a_query_column_named_like_the_ranking_note_is_written_as_it_is(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    """r47c bug 2: a column of the query's own named ranking_note had its values sent
    through Barb's translations, and the CSV failed (KeyError: False)."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"ranking_note": "close > open"},
        "select": ["open", "close", "ranking_note"],
    }
    table = rows(csv_bytes(execute(query, "NQ", settings=settings)))
    assert len(table) == 5
    for row in table:
        assert row["ranking_note"] == str(float(row["close"]) > float(row["open"]))


def test_a_date_or_time_column_with_gaps_stays_a_date_or_a_minute(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    """r47c bug 3: a missing value (NaT) is neither midnight nor on the minute: a date
    column with one was written as times ("2024-03-19 00:00:00") and named d_et, and a
    time column with one got seconds."""
    daily = {"session": "RTH", "from": "daily", "group_by": "dayname()"}
    pick = "if(dayname() == 'Tue', {}, 0 / 0)"
    dates = csv_bytes(
        execute({**daily, "select": f"arg_max(date(), {pick.format('close')}) as d"}, "NQ",
                settings=settings)
    )  # fmt: skip
    assert [(r["dayname"], r["d"]) for r in rows(dates)] == [
        ("Mon", ""), ("Tue", "2024-03-19"), ("Wed", ""), ("Thu", ""), ("Fri", "")
    ]  # fmt: skip
    query = {
        "session": "RTH",
        "from": "1h",
        "group_by": "date()",
        "select": f"arg_max(timestamp, {pick.format('high')}) as at",
    }
    times = rows(csv_bytes(execute(query, "NQ", settings=settings)))
    # The hour (from 09:30) whose high is Tuesday's highest, from the bars themselves.
    wall = imported.assign(timestamp=imported["timestamp"].dt.tz_localize(None))
    tuesday = wall[wall["timestamp"].between("2024-03-19 09:30", "2024-03-19 15:59")]
    hours = tuesday.groupby((tuesday["timestamp"] - pd.Timedelta(minutes=30)).dt.floor("1h"))
    top = hours["high"].max().idxmax() + pd.Timedelta(minutes=30)
    assert [r["at_et"] for r in times] == ["", f"{top:%Y-%m-%d %H:%M}", "", "", ""]


@pytest.mark.parametrize(("lang", "sep"), [("en", ","), ("ru", ";")])
def test_a_text_holding_a_carriage_return_stays_one_field(
    imported: pd.DataFrame, settings: EngineSettings, lang: str, sep: str
) -> None:
    """r48b nit 5: lines ended "\\n" and the csv module quotes a field holding a character of
    the line ending only: a bare "\\r" went unquoted, and Excel and pandas split its row."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"lab": "if(close > open, 'a', 'c\rd')"},
        "select": ["date()", "lab"],
    }
    result = execute(query, "NQ", settings=settings)
    back = pd.read_csv(io.BytesIO(csv_bytes(result, lang)), encoding="utf-8-sig", sep=sep)
    # Read back cell for cell as the answer's table holds them, both labels there.
    assert back["lab"].tolist() == result.table["lab"].tolist()
    assert {"a", "c\rd"} <= set(back["lab"]) and len(back) == 5


def test_a_condition_is_a_number_in_a_russian_file(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    """r48b nit 6: True/False is text to Russian-locale Excel and LibreOffice (ИСТИНА/ЛОЖЬ
    there): a Russian file writes 1 and 0, read as numbers; the English file keeps True and
    False, which its spreadsheet reads as booleans; an unknown stays empty in both."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"up": "close > prev(close)", "green": "close > open"},
        "select": ["date()", "up", "green"],
    }
    result = execute(query, "NQ", settings=settings)
    table = result.table
    assert pd.isna(table["up"].iloc[0]) and table["green"].nunique() == 2  # no day before
    russian = pd.read_csv(io.BytesIO(csv_bytes(result, "ru")), sep=";", decimal=",")
    english = pd.read_csv(io.BytesIO(csv_bytes(result, "en")), encoding="utf-8-sig")
    for name in ("up", "green"):
        assert pd.api.types.is_numeric_dtype(russian[name])
        want = [None if pd.isna(v) else int(v) for v in table[name]]
        assert [None if pd.isna(v) else int(v) for v in russian[name]] == want
        assert [None if pd.isna(v) else int(v) for v in english[name]] == want
    assert english["green"].dtype == bool


def test_columns_a_join_adds_are_named_in_a_russian_file(
    sample_settings: EngineSettings,
) -> None:
    """The bars behind "average volume of the 09:30 bar on CPI days" in Russian were headed
    «…;объём;диапазон;trading_date;cpi;cpi_minutes»: engine names among Russian words, the
    flag a column of 1s that did not say what 1 is. They are named in words, the values
    unchanged (the minutes read back as the bar's time less the 08:30 release); the English
    file keeps the engine's names, which a script may know."""
    query = {
        "session": "RTH",
        "from": "5m",
        "period": "2024-01:2024-03",
        "join": "cpi",
        "where": "cpi and time() == '09:30'",
        "select": ["mean(volume)", "count()"],
    }
    result = execute(query, "NQ", settings=sample_settings)
    russian = rows(csv_bytes(result, "ru"), delimiter=";")
    assert len(russian) == result.summary.values["count"] == 3
    header = list(russian[0])
    assert {"trading_date", "cpi", "cpi_minutes"}.isdisjoint(header)
    for row in russian:
        at = pd.Timestamp(row["время (ET)"])
        assert row["торговый день"] == at.strftime("%Y-%m-%d")
        assert row["день CPI"] == "да"  # as the chat says it, not 1
        release = at.normalize() + pd.Timedelta(hours=8, minutes=30)
        assert int(row["минут от выхода CPI"]) == (at - release) // pd.Timedelta(minutes=1)
    english = list(rows(csv_bytes(result, "en"))[0])
    assert {"trading_date", "cpi", "cpi_minutes"} <= set(english)


def test_barb_s_note_is_headed_in_words_beside_a_query_s_own_note(
    imported: pd.DataFrame, settings: EngineSettings
) -> None:
    """The English file headed the limit's tie note ``ranking_note``, a name no person
    reads; headed "note", it keeps off a column of the query's own of that name. Five
    days of one bar a weekday: every weekday counts 1, and a limit of 2 cuts three."""
    query = {
        "session": "RTH",
        "from": "daily",
        "group_by": "dayname()",
        "select": "count() as note",
        "sort": "note desc",
        "limit": 2,
    }
    table = rows(csv_bytes(execute(query, "NQ", settings=settings)))
    assert list(table[0])[:3] == ["dayname", "note", "note (Barb)"]
    assert [row["note"] for row in table] == ["1", "1"]  # the query's counts, kept
    kept = {row["dayname"] for row in table}
    cut = [day for day in ("Mon", "Tue", "Wed", "Thu", "Fri") if day not in kept]
    assert table[-1]["note (Barb)"] == f"Also 1, cut by the limit: {', '.join(cut)}"

"""Issue 13's "done when": every layout, every refusal, time zones that cannot slip, and
writes that never lose what was there. Each file is made by the test (``bar_files``), and
answers are checked against pandas over the bars that went into the file."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import threading
from pathlib import Path

import bar_files as bf
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from barb.data import formats, importer, mapped, store
from barb.data.cli import data as data_cli
from barb.data.importer import ImportRefused, check_file, import_file, parse_interval
from barb.data.store import data_path, previous_path, read_bars, read_meta
from barb.data.words import ImportWords
from barb.errors import DataError
from barb.interpreter import execute
from barb.settings import EngineSettings

PRICES = ["open", "high", "low", "close", "volume"]


@pytest.fixture(scope="module")
def bars() -> pd.DataFrame:
    return bf.week_of_bars()


def stored(settings: EngineSettings, symbol: str = "NQ") -> pd.DataFrame:
    frame, _ = read_bars(data_path(symbol, settings))
    return frame


def assert_same_bars(settings: EngineSettings, bars: pd.DataFrame) -> None:
    """The stored bars are the bars that went in: New York wall-clock opens, same OHLCV."""
    frame = stored(settings)
    wall = bars["timestamp"].dt.tz_localize(None)
    assert frame["timestamp"].tolist() == wall.tolist()
    for column in PRICES:
        assert frame[column].tolist() == pytest.approx(bars[column].tolist()), column


# --- every layout -----------------------------------------------------------------------


LAYOUT_FILES = {
    "plain": lambda p, b: bf.plain_csv(p / "bars.csv", b),
    "sierra": lambda p, b: bf.sierra_txt(p / "NQH24.scid_BarData.txt", b),
    "tradingview-unix": lambda p, b: bf.tradingview_csv(p / "CME_MINI_NQ1!, 1.csv", b),
    "tradingview-iso": lambda p, b: bf.tradingview_csv(p / "tv.csv", b, iso=True),
    "ninjatrader": lambda p, b: bf.ninjatrader_txt(p / "NQ 03-24.Last.txt", b),
    "kibot": lambda p, b: bf.kibot_txt(p / "NQ.txt", b),
    "decimal-comma": lambda p, b: bf.european_csv(p / "nq_eu.csv", b),
    "gzip": lambda p, b: bf.gzipped(bf.plain_csv(p / "bars.csv", b)),
    "zip": lambda p, b: bf.zipped(bf.sierra_txt(p / "sierra.txt", b)),
}


@pytest.mark.parametrize("layout", list(LAYOUT_FILES))
def test_each_layout_imports_the_bars_that_went_in(
    layout: str, tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    path = LAYOUT_FILES[layout](tmp_path, bars)
    result = import_file(path, "NQ", settings)
    assert_same_bars(settings, bars)
    assert result.report.ok
    assert result.report.interval_minutes == 1
    assert result.meta.source_file == path.name


def test_ninjatrader_close_stamps_are_moved_to_the_open(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    result = import_file(bf.ninjatrader_txt(tmp_path / "nt.txt", bars), "NQ", settings)
    assert result.report.stamp == "close"
    assert "stamped at their close" in result.report.clock_note
    assert stored(settings)["timestamp"].iloc[0] == pd.Timestamp("2024-03-17 18:00")


def test_close_stamps_are_detected_in_any_layout_or_declared(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    path = bf.plain_csv(tmp_path / "closes.csv", bars, stamp="close")
    checked = check_file(path, "NQ", settings)
    assert checked.report.stamp == "close"
    declared = import_file(path, "NQ", settings, stamp="close")
    assert declared.report.stamp == "close"
    assert_same_bars(settings, bars)


def test_columns_option_reads_any_other_layout(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    odd = pd.DataFrame(
        {
            "Zeit": bars["timestamp"].dt.strftime("%Y-%m-%d %H:%M"),
            "Eröffnung": bars["open"],
            "Hoch": bars["high"],
            "Tief": bars["low"],
            "Schluss": bars["close"],
            "Umsatz": bars["volume"],
        }
    )
    path = tmp_path / "odd.csv"
    odd.to_csv(path, index=False)
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings)
    message = str(refused.value)
    assert "Found: Zeit, Eröffnung, Hoch, Tief, Schluss, Umsatz" in message
    assert "--columns timestamp=" in message
    assert not data_path("NQ", settings).exists()

    import_file(
        path,
        "NQ",
        settings,
        columns="timestamp=Zeit,open=Eröffnung,high=Hoch,low=Tief,close=Schluss,volume=Umsatz",
    )
    assert_same_bars(settings, bars)


def test_columns_option_names_what_is_wrong(tmp_path: Path, settings: EngineSettings) -> None:
    path = tmp_path / "odd.csv"
    path.write_text("T,O,H,L,C,V\n2024-01-02 09:30,1,2,0.5,1.5,3\n")
    with pytest.raises(DataError, match="--columns names Close, which the file does not have"):
        import_file(
            path, "NQ", settings, columns="timestamp=T,open=O,high=H,low=L,close=Close,volume=V"
        )
    with pytest.raises(DataError, match="--columns lacks close"):
        import_file(path, "NQ", settings, columns="timestamp=T,open=O,high=H,low=L,volume=V")
    with pytest.raises(DataError, match="'price' is not a column Barb reads"):
        import_file(path, "NQ", settings, columns="price=C")


def test_headerless_unknown_lines_are_refused_with_the_flag_to_use(
    tmp_path: Path, settings: EngineSettings
) -> None:
    path = tmp_path / "x.txt"
    path.write_text("2024-01-02T09:30|1|2|0.5|1.5|3\n")
    with pytest.raises(DataError, match=r"no header row.*--columns"):
        import_file(path, "NQ", settings)


# --- time zones -------------------------------------------------------------------------


ZONES = ["America/New_York", "America/Chicago", "UTC"]
QUERIES = [
    {"session": "RTH", "from": "daily", "select": "mean(range)"},
    {"session": "ETH", "from": "1h", "group_by": "hour()", "select": "mean(volume)"},
    {"session": "RTH", "from": "daily", "select": "close"},
]


def _answers(settings: EngineSettings) -> list[object]:
    answers = []
    for query in QUERIES:
        result = execute(query, "NQ", settings=settings)
        assert result.error is None, result.error
        answers.append(result.table.to_dict("list") if result.table is not None else None)
        answers.append(result.summary.model_dump() if result.summary else None)
    return answers


def test_chicago_utc_and_new_york_files_give_identical_answers(
    tmp_path: Path, bars: pd.DataFrame
) -> None:
    answers = {}
    for zone in ZONES:
        settings = EngineSettings(data_dir=tmp_path / zone.replace("/", "_"))
        path = bf.plain_csv(tmp_path / f"{zone.replace('/', '_')}.csv", bars, zone)
        result = import_file(path, "NQ", settings)  # no --timezone: found from the break
        assert result.report.timezone == zone
        assert_same_bars(settings, bars)
        answers[zone] = _answers(settings)
    assert answers["America/Chicago"] == answers["America/New_York"]
    assert answers["UTC"] == answers["America/New_York"]

    # And the answer is right: RTH (09:30-17:00 New York) daily range by hand.
    wall = bars.assign(t=bars["timestamp"].dt.tz_localize(None))
    minute = wall["t"].dt.hour * 60 + wall["t"].dt.minute
    rth = wall[(minute >= 9 * 60 + 30) & (minute < 17 * 60)]
    by_day = rth.groupby(rth["t"].dt.date)
    expected = (by_day["high"].max() - by_day["low"].min()).mean()
    settings = EngineSettings(data_dir=tmp_path / "America_New_York")
    got = execute(QUERIES[0], "NQ", settings=settings)
    assert got.summary.value == pytest.approx(expected)


def test_a_contradicting_timezone_is_refused_with_what_was_found(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    path = bf.plain_csv(tmp_path / "chicago.csv", bars, "America/Chicago")
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings, timezone="America/New_York")
    assert str(refused.value).endswith(
        "the daily break is at 16:00–17:00 in this file, which is Chicago time "
        "(America/Chicago), not New York time (America/New_York); pass --timezone "
        "America/Chicago."
    )
    assert not data_path("NQ", settings).exists()
    import_file(path, "NQ", settings, timezone="America/Chicago")
    assert_same_bars(settings, bars)


def test_times_with_offsets_need_no_timezone(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    path = bf.offset_csv(tmp_path / "tokyo.csv", bars, "Asia/Tokyo")
    result = import_file(path, "NQ", settings)
    assert "own zone" in result.report.clock_note
    assert_same_bars(settings, bars)
    with pytest.raises(DataError, match="--timezone does not apply"):
        check_file(path, "NQ", settings, timezone="America/Chicago")


def _cash_session(bars: pd.DataFrame) -> pd.DataFrame:
    minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    return bars[(minute >= 9 * 60 + 30) & (minute < 16 * 60)].reset_index(drop=True)


@pytest.mark.parametrize(
    ("zone", "stamp", "said"),
    [
        (
            bf.NY,
            "open",
            "New York time (America/New_York): so read, the file's days run 09:30–16:00",
        ),
        # Stamped 09:31-16:00: stored a minute late, "the daily break sits at 17:00–18:00".
        (bf.NY, "close", "New York time (America/New_York): so read, the file's days run 09:30"),
        # 08:30-14:59 Chicago: stored an hour early, "Times taken as New York time".
        ("America/Chicago", "open", "Chicago time (America/Chicago): so read, the file's days"),
    ],
)
def test_a_cash_session_file_is_read_from_its_session_bounds(
    zone: str, stamp: str, said: str, tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """A file of 09:30-16:00 bars never touches the closed hours: its zone and stamp are the
    reading under which every day starts and ends on the instrument's session times."""
    rth_only = _cash_session(bars)
    path = bf.plain_csv(tmp_path / "rth.csv", rth_only, zone, stamp)
    result = import_file(path, "NQ", settings)
    assert_same_bars(settings, rth_only)
    assert result.report.clock_note.startswith(f"Times read as {said}")


@pytest.mark.parametrize(
    ("zone", "declared", "said"),
    [
        ("America/Chicago", bf.NY, "the file's days run 08:30–15:00, neither starting"),
        ("America/Denver", bf.NY, "the file's days run 07:30–14:00, neither starting"),
        ("America/Denver", "America/Chicago", "the file's days run 08:30–15:00, neither"),
    ],
)
@pytest.mark.parametrize("stamp", [None, "open"])
def test_a_cash_session_file_declared_in_another_zone_is_refused(
    zone: str,
    declared: str,
    said: str,
    stamp: str | None,
    tmp_path: Path,
    settings: EngineSettings,
    bars: pd.DataFrame,
) -> None:
    """A Kibot cash-session file in Chicago time imported with --timezone America/New_York
    was refused asking for --stamp, and with --stamp open stored every bar an hour early.
    Refused naming the zone its days fit; nothing stored changes; imported in that zone."""
    import_file(bf.plain_csv(tmp_path / "week.csv", bars), "NQ", settings)
    before = data_path("NQ", settings).read_bytes()
    rth_only = _cash_session(bars)
    path = bf.kibot_txt(tmp_path / "rth.txt", rth_only, zone)
    options = {"date_order": "month-first", "stamp": stamp, "mode": "replace"}
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings, timezone=declared, **options)
    message = str(refused.value)
    assert said in message
    name = zone.split("/")[1]
    assert message.endswith(
        f"they run 09:30–16:00, from and to them: the file looks to be in "
        f"that zone; pass --timezone {zone}."
    )
    assert f"read as {name} time ({zone})" in message
    assert data_path("NQ", settings).read_bytes() == before
    import_file(path, "NQ", settings, timezone=zone, **options)
    assert_same_bars(settings, rth_only)


def test_a_new_york_cash_session_file_declared_chicago_is_refused(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """The reverse of the Chicago file declared New York: a New York cash-session file
    declared --timezone America/Chicago runs 10:30-17:00 on the exchange's clock, its last
    bar ending at the 17:00 close, and was stored an hour late without a word. Refused
    naming both readings, in the bot's Russian too; imported right as New York time."""
    declared = "America/Chicago"
    rth_only = _cash_session(bars)
    path = bf.plain_csv(tmp_path / "rth.csv", rth_only)
    with pytest.raises(DataError) as refused:
        check_file(path, "NQ", settings, timezone=declared)
    assert str(refused.value).endswith(
        "read as Chicago time (America/Chicago), as declared, the file's days run "
        "10:30–17:00, which is none of the instrument's sessions; read as New York time "
        "(America/New_York) they "
        "run 09:30–16:00, one of its sessions from start to end: the file looks to be in "
        "that zone; pass --timezone America/New_York."
    )
    with pytest.raises(DataError, match="отправьте файл ещё раз с подписью `--timezone Amer"):
        check_file(path, "NQ", settings, timezone=declared, lang="ru", advice="caption")
    import_file(path, "NQ", settings, timezone=bf.NY)
    assert_same_bars(settings, rth_only)


def test_a_morning_file_declared_in_its_zone_is_taken(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """A New York morning file (09:30-12:59) fits Los Angeles time at both ends (12:30-16:00)
    but no zone reads it as one whole session: its declared zone is taken."""
    minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    morning = bars[(minute >= 570) & (minute < 780)].reset_index(drop=True)
    path = bf.plain_csv(tmp_path / "morning.csv", morning)
    import_file(path, "NQ", settings, timezone=bf.NY)
    assert_same_bars(settings, morning)


def test_a_few_mid_morning_bars_ask_for_the_stamp(tmp_path: Path, settings: EngineSettings) -> None:
    """Bars from 10:00 to 10:09 fit open stamps as well as close stamps: refused, asking
    for --stamp, and imported as declared."""
    bars = bf.week_of_bars()
    minute = bars["timestamp"].dt.hour * 60 + bars["timestamp"].dt.minute
    morning = bars[(minute >= 600) & (minute < 610)].reset_index(drop=True)
    path = bf.plain_csv(tmp_path / "morning.csv", morning, stamp="close")
    with pytest.raises(DataError, match="pass --stamp open or --stamp close"):
        import_file(path, "NQ", settings)
    russian = ImportWords("ru")
    with pytest.raises(DataError, match="укажите --stamp open или --stamp close"):
        check_file(path, "NQ", settings, lang=russian.language)
    import_file(path, "NQ", settings, stamp="close")
    assert_same_bars(settings, morning)


def test_an_overlap_one_bar_off_asks_for_the_stamp_not_a_replace(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """An --append of close-stamped bars read as opens onto the same stored bars was told
    "use --replace", which would store them a minute late."""
    import_file(bf.plain_csv(tmp_path / "week.csv", bars), "NQ", settings)
    before = data_path("NQ", settings).read_bytes()
    rth = bf.plain_csv(tmp_path / "rth.csv", _cash_session(bars), stamp="close")
    with pytest.raises(DataError) as refused:
        import_file(rth, "NQ", settings, stamp="open", mode="append")
    message = str(refused.value)
    first = _cash_session(bars)["timestamp"].iloc[0].tz_localize(None)
    later = first + pd.Timedelta(minutes=1)
    assert f"the file's {later} bar is the stored {first} bar" in message
    assert message.endswith("Nothing was written; pass --stamp close.")
    assert data_path("NQ", settings).read_bytes() == before
    assert import_file(rth, "NQ", settings, stamp="close", mode="append").added == 0


def test_another_instruments_level_is_refused_on_a_first_import(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """ES's prices (a quarter of NQ's) imported as NQ into an empty store with only a note
    after the write; the level is NQ.yaml's anchors, log-linear between 2023-12-29 (16,900)
    and 2024-12-31 (21,200). Refused, naming both levels; --any-level imports it."""
    es = bars.assign(**{c: bars[c] / 4 for c in ("open", "high", "low", "close")})
    path = bf.plain_csv(tmp_path / "es.csv", es)
    ratio = es["close"].median() / stored_level(es)
    middle = es["timestamp"].iloc[len(es) // 2].date()
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings)
    message = str(refused.value)
    assert f"is ×{ratio:.2g} the level NQ had around {middle}" in message
    assert "another instrument's" in message
    assert message.endswith("import it again with --any-level.")
    assert not data_path("NQ", settings).exists()
    result = import_file(path, "NQ", settings, any_level=True)
    assert f"is ×{ratio:.2g} the level NQ had around {middle}" in result.note
    assert stored(settings)["close"].tolist() == pytest.approx(es["close"].tolist())
    # NQ's own level says nothing.
    again = import_file(bf.plain_csv(tmp_path / "nq.csv", bars), "NQ", settings, mode="replace")
    assert "level NQ had" not in again.note
    data_path("NQ", settings).unlink()
    assert import_file(tmp_path / "nq.csv", "NQ", settings).note == ""


@pytest.mark.parametrize("factor", [0.01, 10])
def test_prices_in_another_unit_are_refused_by_the_cli_on_a_first_import(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame, factor: float
) -> None:
    """NQ at 180.77 (points over 100) or tenfold was stored by `barb data import` with only
    a note printed after the write: every answer over it was off a hundredfold. Refused
    before anything is written, with the level found and the one expected (NQ.yaml's
    anchors, as ``stored_level`` computes them); --check refuses it too; --any-level
    writes it. Only the cents case (×100, every price on 100 ticks) was refused before."""
    scaled = bars.assign(
        **{c: (bars[c] * factor).round(6) for c in ("open", "high", "low", "close")}
    )
    path = bf.plain_csv(tmp_path / "nq.csv", scaled)
    median = scaled["close"].median()
    known = f"{round(stored_level(scaled), -1):,.0f}"
    middle = scaled["timestamp"].iloc[len(scaled) // 2].date()
    runner = CliRunner()
    for extra in (["--check"], []):
        result = runner.invoke(data_cli, ["import", str(path), "-i", "NQ", *extra], obj=settings)
        assert result.exit_code == 1, result.output
        assert f"is ×{median / stored_level(scaled):.2g} the level NQ had around {middle}" in (
            result.output
        )
        assert f"about {known}," in result.output
        assert "--any-level" in result.output
        assert not data_path("NQ", settings).exists()
    forced = runner.invoke(data_cli, ["import", str(path), "-i", "NQ", "--any-level"], obj=settings)
    assert forced.exit_code == 0, forced.output
    assert f"NQ: wrote {len(scaled):,} bars" in forced.output
    assert stored(settings)["close"].tolist() == pytest.approx(scaled["close"].tolist())


def test_the_missing_day_sent_alone_is_not_told_to_replace_the_history(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """A week stored without its Wednesday, then Wednesday's file with --append: refused
    with "use --replace to replace the data", which replaced the week with one day. It is
    a gap --append cannot fill: said so, with the way that keeps the week."""
    day = (bars["timestamp"].dt.tz_localize(None) + pd.Timedelta(hours=6)).dt.normalize()
    wednesday = day == pd.Timestamp("2024-03-20")
    import_file(bf.plain_csv(tmp_path / "week.csv", bars[~wednesday]), "NQ", settings)
    before = data_path("NQ", settings).read_bytes()
    path = bf.plain_csv(tmp_path / "wed.csv", bars[wednesday])
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings, mode="append")
    message = str(refused.value)
    first = bars["timestamp"][wednesday].iloc[0].tz_localize(None)
    assert f"the file has a bar at {first}, where the stored data" in message
    assert "cannot fill a gap" in message
    assert "one file holding all the bars with --replace" in message
    assert "use --replace to replace the data" not in message
    assert data_path("NQ", settings).read_bytes() == before
    with pytest.raises(DataError, match="в них пропуск"):
        checked = check_file(path, "NQ", settings, lang="ru")
        importer.plan_write(checked, settings, "append")
    import_file(bf.plain_csv(tmp_path / "all.csv", bars), "NQ", settings, mode="replace")
    assert_same_bars(settings, bars)


def test_another_instruments_later_week_replacing_the_stored_bars_is_said(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """The next week of ES sent as NQ shares no time with the stored NQ week: --append
    refuses it at the seam, and the --replace it falls back to (the bot offers one) wrote
    ES's prices as NQ's without a word. It is held to NQ's known level, as a first import."""
    import_file(bf.plain_csv(tmp_path / "nq.csv", bars), "NQ", settings)
    later = bf.week_of_bars(first_sunday=dt.date(2024, 3, 24), seed=11)
    es = later.assign(**{c: later[c] / 4 for c in ("open", "high", "low", "close")})
    path = bf.plain_csv(tmp_path / "es.csv", es)
    with pytest.raises(DataError, match="are the file's prices in another unit"):
        import_file(path, "NQ", settings, mode="append")
    before = data_path("NQ", settings).read_bytes()
    ratio = es["close"].median() / stored_level(es)
    with pytest.raises(DataError, match=f"is ×{ratio:.2g} the level NQ had around"):
        import_file(path, "NQ", settings, mode="replace")
    assert data_path("NQ", settings).read_bytes() == before
    result = import_file(path, "NQ", settings, mode="replace", any_level=True)
    assert f"is ×{ratio:.2g} the level NQ had around" in result.note
    assert "another instrument's" in result.note
    # Restored, NQ's own next week replacing it says nothing.
    store.restore_previous(data_path("NQ", settings))
    assert stored(settings)["close"].tolist() == pytest.approx(bars["close"].tolist())
    nq = import_file(bf.plain_csv(tmp_path / "nq2.csv", later), "NQ", settings, mode="replace")
    assert nq.note == ""


def unanchored_settings(tmp_path: Path) -> EngineSettings:
    """Settings whose instruments are NQ, ES, CL and RTY: NQ's YAML under another symbol
    without its ``sample`` block, as an operator adds an instrument of their own."""
    import shutil

    import yaml

    folder = tmp_path / "instruments"
    shutil.copytree(Path(__file__).parents[2] / "instruments", folder)
    spec = yaml.safe_load((folder / "NQ.yaml").read_text())
    for key in ("sample", "micro"):
        spec.pop(key, None)
    (folder / "RTY.yaml").write_text(yaml.safe_dump(spec | {"symbol": "RTY"}))
    return EngineSettings(data_dir=tmp_path / "data", instruments_dir=folder)


def test_an_instrument_without_anchors_is_held_to_its_stored_bars_or_said_unchecked(
    tmp_path: Path, bars: pd.DataFrame
) -> None:
    """An instrument without a sample block has no approximate closes: its first import and
    a replace sharing no time with its stored bars were never checked, and ES's prices
    replaced its week without a word. A first import says the prices could not be checked
    (with the median close to look at); a replace is held to the close of the stored bar
    nearest the file's middle, refused far from it and imported with --any-level."""
    settings = unanchored_settings(tmp_path)
    first = import_file(bf.plain_csv(tmp_path / "rty.csv", bars), "RTY", settings)
    median = bars["close"].median()
    assert first.note == (
        "The file's prices were not checked against RTY's level: Barb keeps no approximate "
        "closes for RTY around 2024-03-20 (its YAML's `sample.anchors`) and no stored bars "
        f"within a year of the file; make sure its median close, {median:.10g}, is RTY's, "
        "in its unit."
    )
    before = data_path("RTY", settings).read_bytes()
    later = bf.week_of_bars(first_sunday=dt.date(2024, 4, 7), seed=11)
    es = later.assign(**{c: later[c] / 4 for c in ("open", "high", "low", "close")})
    path = bf.plain_csv(tmp_path / "es.csv", es)
    # Independently: the stored bar nearest the file's middle bar is the stored week's last.
    middle = es["timestamp"].iloc[len(es) // 2].tz_localize(None)
    times = bars["timestamp"].dt.tz_localize(None)
    nearest = int((times - middle).abs().idxmin())
    ratio = es["close"].median() / bars["close"].iloc[nearest]
    said = (
        f"is ×{ratio:.2g} the close of RTY's stored bar nearest it "
        f"({bars['close'].iloc[nearest]:.10g} at {times.iloc[nearest]}"
    )
    for check in (True, False):
        with pytest.raises(DataError) as refused:
            checked = check_file(path, "RTY", settings)
            if check:
                importer.plan_write(checked, settings, "replace")
            else:
                import_file(path, "RTY", settings, mode="replace")
        assert said in str(refused.value)
        assert str(refused.value).endswith("import it again with --any-level.")
    assert data_path("RTY", settings).read_bytes() == before
    result = import_file(path, "RTY", settings, mode="replace", any_level=True)
    assert said in result.note
    assert stored(settings, "RTY")["close"].tolist() == pytest.approx(es["close"].tolist())
    # RTY's own next week replacing it says nothing.
    store.restore_previous(data_path("RTY", settings))
    own = import_file(bf.plain_csv(tmp_path / "own.csv", later), "RTY", settings, mode="replace")
    assert own.note == ""


def stored_level(frame: pd.DataFrame) -> float:
    """NQ's level by NQ.yaml's anchors, log-linear between 2023-12-29 (16,900) and
    2024-12-31 (21,200), at the file's middle bar."""
    days = [dt.date(2023, 12, 29), dt.date(2024, 12, 31)]
    middle = frame["timestamp"].iloc[len(frame) // 2].date()
    return float(
        np.exp(np.interp(middle.toordinal(), [d.toordinal() for d in days], np.log([16900, 21200])))
    )


@pytest.mark.parametrize("zone", ["Asia/Dubai", "Asia/Kolkata", "America/Sao_Paulo"])
def test_a_zone_no_candidate_fits_is_refused_and_imports_when_declared(
    zone: str, tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    path = bf.plain_csv(tmp_path / "local.csv", bars, zone)
    # Where the 17:00-18:00 New York break falls on the file's clock, worked out by hand.
    brk = pd.Timestamp("2024-03-18 17:00", tz=bf.NY).tz_convert(zone)
    end = brk + pd.Timedelta(hours=1)
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings)
    message = str(refused.value)
    assert f"the daily break sits at {brk:%H:%M}–{end:%H:%M} in the file's times" in message
    assert "pass --timezone" in message
    assert not data_path("NQ", settings).exists()
    import_file(path, "NQ", settings, timezone=zone)
    assert_same_bars(settings, bars)


def test_bars_in_the_break_or_on_a_saturday_are_refused_by_line(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    extra_times = ["2024-03-18 17:00", "2024-03-18 17:01", "2024-03-18 17:02", "2024-03-23 10:00"]
    extra = pd.DataFrame(
        {
            "timestamp": pd.DatetimeIndex(extra_times).tz_localize(bf.NY),
            **{c: 18000.0 for c in ("open", "high", "low", "close")},
            "volume": 1,
        }
    )
    dirty = pd.concat([bars, extra]).sort_values("timestamp", ignore_index=True)
    path = bf.plain_csv(tmp_path / "dirty.csv", dirty)
    with pytest.raises(ImportRefused) as refused:
        import_file(path, "NQ", settings)
    report = refused.value.report
    assert report.count("bars in the exchange's closed hours") == 4
    shown = next(c for c in report.errors if c.name.startswith("bars in"))
    # Line = row + 2 (the header is line 1), worked out from the frame written.
    rows = dirty.index[dirty["timestamp"].dt.tz_localize(None).isin(pd.DatetimeIndex(extra_times))]
    assert [f.line for f in shown.shown] == [r + 2 for r in rows]
    assert "2024-03-18 17:00:00 is in the daily break (17:00–18:00)" in shown.shown[0].message
    assert "2024-03-23 10:00:00 is on a Saturday" in shown.shown[-1].message
    assert not data_path("NQ", settings).exists()


# --- intervals --------------------------------------------------------------------------


def test_five_minute_bars_are_refused_unless_declared_and_then_finer_queries_are(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    import_file(bf.plain_csv(tmp_path / "one.csv", bars), "NQ", settings)
    before = data_path("NQ", settings).read_bytes()
    five = bf.week_of_bars(step_minutes=5)
    path = bf.plain_csv(tmp_path / "five.csv", five)
    with pytest.raises(DataError) as refused:
        import_file(path, "NQ", settings, mode="replace")
    assert "these are 5-minute bars" in str(refused.value)
    assert "--interval 5m" in str(refused.value)
    assert data_path("NQ", settings).read_bytes() == before  # untouched
    with pytest.raises(DataError, match=r"--interval says 15-minute bars.*pass --interval 5m"):
        import_file(path, "NQ", settings, mode="replace", interval="15m")

    result = import_file(path, "NQ", settings, mode="replace", interval="5m")
    assert result.meta.interval_minutes == 5
    fine = execute({"from": "1m", "select": "count()"}, "NQ", settings=settings)
    assert fine.error is not None
    assert fine.error.message.startswith("NQ data holds 5-minute bars, so 1m bars cannot")
    hourly = execute({"session": "ETH", "from": "1h", "select": "count()"}, "NQ", settings=settings)
    assert hourly.error is None
    assert hourly.summary.value == 5 * 23  # 23 hours a session, 5 sessions


def _coarser(bars: pd.DataFrame, minutes: int) -> pd.DataFrame:
    """``bars`` (one-minute, New York) as bars of ``minutes``, on the clock's edges."""
    prices = {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}
    grouped = bars.set_index("timestamp").resample(f"{minutes}min").agg(prices)
    return grouped.dropna().reset_index()


def _daily_ranges(bars: pd.DataFrame, start: str, end: str) -> pd.Series:
    """Each trading date's high minus low over the minute bars opening in [start, end)."""
    wall = bars["timestamp"].dt.tz_localize(None)
    clock = wall.dt.strftime("%H:%M")
    inside = bars[(clock >= start) & (clock < end)]
    day = (wall[inside.index] + pd.Timedelta(hours=6)).dt.normalize()
    grouped = inside.groupby(day.to_numpy())
    return grouped["high"].max() - grouped["low"].min()


def test_a_session_starting_inside_hourly_bars_is_refused_not_cut(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """Hourly bars on the hour hold 09:00-10:00 in one bar: RTH (09:30-17:00) took the bars
    that open in it, 10:00 to 16:00, and its daily range silently left out the opening half
    hour. Refused, naming the bar and a window that fits; on half-hour bars RTH is whole."""
    hourly = _coarser(bars, 60)
    import_file(bf.plain_csv(tmp_path / "hourly.csv", hourly), "NQ", settings, interval="1h")
    query = {"session": "RTH", "from": "daily", "select": "mean(range)"}
    refused = execute(query, "NQ", settings=settings)
    assert refused.error is not None and refused.error.error_type == "InvalidSession"
    assert "starts at 09:30, inside the 09:00 bar" in refused.error.message
    assert "'09:00-17:00'" in (refused.error.hint or "")
    # No session given: the default (RTH) is refused too, rather than cut.
    default = execute({"from": "daily", "select": "count()"}, "NQ", settings=settings)
    assert default.error is not None and default.error.error_type == "InvalidSession"
    wide = execute({**query, "session": "09:00-17:00"}, "NQ", settings=settings)
    assert wide.error is None
    assert wide.summary.value == pytest.approx(_daily_ranges(bars, "09:00", "17:00").mean())

    half_hourly = _coarser(bars, 30)
    path = bf.plain_csv(tmp_path / "half.csv", half_hourly)
    import_file(path, "NQ", settings, mode="replace", interval="30m")
    rth = execute(query, "NQ", settings=settings)
    assert rth.error is None
    assert rth.summary.value == pytest.approx(_daily_ranges(bars, "09:30", "17:00").mean())


def _half_hour_hourly(bars: pd.DataFrame, first_at: str = "18:00") -> pd.DataFrame:
    """``bars`` as hourly bars on the half hour (09:30, 10:30 …), as a vendor aligning them
    on the cash open writes them: each session's first bar, which trades only from the
    18:00 open to 18:30, stamped ``first_at`` (18:00, or 17:30 where its hour starts)."""
    prices = {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}
    hourly = bars.set_index("timestamp").resample("60min", offset="30min").agg(prices)
    hourly = hourly.dropna().reset_index()
    if first_at == "18:00":
        first = hourly["timestamp"].dt.strftime("%H:%M") == "17:30"
        hourly.loc[first, "timestamp"] += pd.Timedelta(minutes=30)
    return hourly


def _session_ranges(bars: pd.DataFrame, start: str, end: str) -> pd.Series:
    """Each trading date's high minus low over the minute bars opening in [start, end),
    a window that may run over midnight (ETH's 18:00-17:00)."""
    wall = bars["timestamp"].dt.tz_localize(None)
    clock = wall.dt.strftime("%H:%M")
    inside = (clock >= start) & (clock < end) if start < end else (clock >= start) | (clock < end)
    day = (wall[inside] + pd.Timedelta(hours=6)).dt.normalize()
    grouped = bars[inside].groupby(day.to_numpy())
    return grouped["high"].max() - grouped["low"].min()


@pytest.mark.parametrize("first_at", ["18:00", "17:30"])
def test_sessions_on_half_hour_hourly_bars_are_whole_unless_a_bar_is_cut(
    first_at: str, tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """Hourly bars on the half hour: ETH (18:00-17:00) starts inside the 17:30-18:30 bar and
    ends inside the 16:30-17:30 one, but nothing trades in the 17:00-18:00 break, so each
    holds only ETH's minutes; they were refused as "inside the 17:30 bar" all the same, and
    RTH (to 17:00) with them. Their daily ranges are the minute bars'; CASH (to 16:00) cuts
    the 15:30 bar and is refused; ETH's hourly bars, counted from 18:00, would sit between
    the data's, and are refused too. Stamped 17:30, in the daily break, each session's first
    bar was refused ("the file's times fit none of the zones Barb tries"): it is stored at
    18:00, where its trades start."""
    hourly = _half_hour_hourly(bars, first_at)
    path = bf.plain_csv(tmp_path / "half.csv", hourly)
    result = import_file(path, "NQ", settings, interval="1h")
    written = pd.read_csv(path, parse_dates=["timestamp"])
    opens = written["timestamp"].mask(written["timestamp"].dt.strftime("%H:%M") == "17:30")
    opens = opens.fillna(written["timestamp"] + pd.Timedelta(minutes=30))
    assert stored(settings)["timestamp"].tolist() == opens.tolist()
    assert stored(settings)["high"].tolist() == written["high"].tolist()
    moved = [note for note in result.report.notes if "open in the daily break" in note]
    assert len(moved) == (first_at == "17:30")
    for session, start, end in (
        ("ETH", "18:00", "17:00"),
        ("RTH", "09:30", "17:00"),
        ("OVERNIGHT", "18:00", "09:30"),
    ):
        query = {"session": session, "from": "daily", "select": "mean(range)"}
        result = execute(query, "NQ", settings=settings)
        assert result.error is None, (session, result.error)
        assert result.summary.value == pytest.approx(_session_ranges(bars, start, end).mean())
    cash = execute(
        {"session": "CASH", "from": "daily", "select": "mean(range)"}, "NQ", settings=settings
    )
    assert cash.error is not None and cash.error.error_type == "InvalidSession"
    assert "ends at 16:00, inside the 15:30 bar" in cash.error.message
    hours = execute({"session": "ETH", "from": "1h", "select": "count()"}, "NQ", settings=settings)
    assert hours.error is not None and hours.error.error_type == "InvalidSession"
    assert "counted from its 18:00 start, between the data's bars" in hours.error.message
    rth_hours = execute(
        {"session": "RTH", "from": "1h", "select": "count()"}, "NQ", settings=settings
    )
    assert rth_hours.error is None
    assert rth_hours.summary.value == 5 * 8  # 09:30 … 16:30, five days


@pytest.mark.parametrize(
    ("written", "minutes"),
    [("1m", 1), ("1min", 1), ("1MIN", 1), ("5m", 5), ("60m", 60), ("1h", 60), ("1H", 60),
     ("2h", 120), ("4h", 240)],
)  # fmt: skip
def test_interval_spellings_read_as_from_reads_them(written: str, minutes: int) -> None:
    assert parse_interval(written) == minutes


@pytest.mark.parametrize(
    ("written", "refusal"),
    [("1M", "ambiguous"), ("5M", "ambiguous"), ("60M", "ambiguous"),
     ("1d", "not a bar length"), ("monthly", "not a bar length")],
)  # fmt: skip
def test_an_interval_that_is_no_intraday_bar_length_is_refused(written: str, refusal: str) -> None:
    """--interval 1M, a month in TradingView and pandas, was read as 1-minute bars: refused
    as `from` refuses it, naming both readings."""
    with pytest.raises(DataError) as refused:
        parse_interval(written)
    assert refusal in str(refused.value)
    if refusal == "ambiguous":
        said = str(refused.value)
        assert f"'{written}' is ambiguous: \"{written.lower()}\" is" in said
        assert '"monthly" is one bar per month' in said
        assert f"{parse_interval(written.lower())}-minute bars write" in said


def test_the_cli_refuses_1M_before_reading_the_file(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    path = bf.plain_csv(tmp_path / "bars.csv", bars)
    runner = CliRunner()
    said = runner.invoke(
        data_cli, ["import", str(path), "-i", "NQ", "--interval", "1M"], obj=settings
    )
    assert said.exit_code == 1
    assert "'1M' is ambiguous" in said.output and "write 1m" in said.output
    assert not data_path("NQ", settings).exists()


# --- never lose what was there ------------------------------------------------------------


def test_a_second_import_needs_replace_and_restore_brings_back_the_previous_file(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    first = import_file(bf.plain_csv(tmp_path / "a.csv", bars), "NQ", settings)
    target = data_path("NQ", settings)
    original = target.read_bytes()
    other = bars.assign(close=bars["close"], high=bars["high"] + 1)
    second = bf.plain_csv(tmp_path / "b.csv", other)
    with pytest.raises(DataError) as refused:
        import_file(second, "NQ", settings)
    message = str(refused.value)
    assert "NQ already has data imported from a.csv" in message
    assert "--replace" in message and "--append" in message
    assert target.read_bytes() == original

    import_file(second, "NQ", settings, mode="replace")
    assert stored(settings)["high"].tolist() == other["high"].tolist()
    assert previous_path(target).read_bytes() == original

    runner = CliRunner()
    info = runner.invoke(data_cli, ["info", "NQ"], obj=settings)
    assert "imported from b.csv" in info.output
    assert "previous file kept: imported (imported from a.csv" in info.output
    restored = runner.invoke(data_cli, ["restore", "NQ"], obj=settings)
    assert restored.exit_code == 0, restored.output
    assert "restored imported data (imported from a.csv" in restored.output
    assert target.read_bytes() == original
    # Its Arrow copy is made now, as an import makes it, not by the first question's worker.
    copy = mapped.open_mapped(mapped.mapped_path(target, settings), mapped.fingerprint(target))
    assert copy is not None
    assert copy[0]["high"].tolist() == bars["high"].tolist()
    assert read_meta(target).created_at == first.meta.created_at
    # A second restore undoes the first.
    assert runner.invoke(data_cli, ["restore", "NQ"], obj=settings).exit_code == 0
    assert stored(settings)["high"].tolist() == other["high"].tolist()


def test_a_second_replace_says_which_kept_data_it_deletes(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """One generation is kept: history, then --replace twice, and the history was gone for
    good while each step said only "The previous file is kept"."""
    day = bars["timestamp"].dt.tz_localize(None)
    monday = bars[day < pd.Timestamp("2024-03-18 17:00")]
    tuesday = bars[
        (day >= pd.Timestamp("2024-03-18 18:00")) & (day < pd.Timestamp("2024-03-19 17:00"))
    ]
    runner = CliRunner()

    def replace(name: str, frame: pd.DataFrame) -> str:
        path = bf.plain_csv(tmp_path / name, frame)
        done = runner.invoke(data_cli, ["import", str(path), "-i", "NQ", "--replace"], obj=settings)
        assert done.exit_code == 0, done.output
        return done.output

    assert "deleted" not in replace("week.csv", bars)
    assert "deleted" not in replace("monday.csv", monday)  # the week is kept
    check = runner.invoke(
        data_cli,
        [
            "import",
            str(bf.plain_csv(tmp_path / "t.csv", tuesday)),
            "-i",
            "NQ",
            "--replace",
            "--check",
        ],
        obj=settings,
    )
    # The trading dates of the week, read by pandas: bars from 18:00 count for the next day.
    dates = (day + pd.Timedelta(hours=6)).dt.date
    sentence = f"The data kept from before it ({len(bars):,} bars, {dates.min()} to {dates.max()})"
    assert f"{sentence} would be deleted." in check.output
    assert f"{sentence} is deleted." in replace("tuesday.csv", tuesday)


def test_replacing_with_prices_far_from_the_stored_ones_says_so(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """An ES file (5,100) or a tenfold file replaced NQ's 18,000 for the same dates without
    a word, where --append refuses it at the seam. Far from NQ's known level too, it is
    refused as a first import is (the bot offered it as a replace, and ES's prices were
    written as NQ's with only a note); imported with --any-level, the note says so."""
    import_file(bf.plain_csv(tmp_path / "nq.csv", bars), "NQ", settings)
    corrected = bars.copy()
    corrected.loc[10, "volume"] += 1
    same_level = import_file(
        bf.plain_csv(tmp_path / "fixed.csv", corrected), "NQ", settings, mode="replace"
    )
    assert same_level.note == ""  # no word where nothing is wrong
    other = bars.iloc[: len(bars) // 2].copy()
    for column in ("open", "high", "low", "close"):
        other[column] = other[column] * 0.28  # ES-like prices for the same minutes
    es = bf.plain_csv(tmp_path / "es.csv", other)
    stored = data_path("NQ", settings).read_bytes()
    with pytest.raises(DataError, match=r"is ×0\.28 the level NQ had around 2024-03-18"):
        import_file(es, "NQ", settings, mode="replace")
    assert data_path("NQ", settings).read_bytes() == stored  # nothing written
    result = import_file(es, "NQ", settings, mode="replace", any_level=True)
    ratio = (other["close"] / bars["close"].iloc[: len(other)]).median()
    wall = bars["timestamp"].dt.tz_localize(None)
    assert result.note == (
        f"At {wall.iloc[0]} the replaced data closed at {bars['close'].iloc[0]:g} and the file "
        f"at {other['close'].iloc[0]:g} (×{ratio:.3g}, the median over the {len(other):,} bars "
        "both hold): is the file another instrument's, or in another unit? `barb data restore "
        "NQ` brings the replaced data back."
    )
    assert_same_bars(settings, other)


def test_a_replace_at_the_known_level_mends_stored_prices_in_another_unit(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """Stored prices tenfold (imported with --any-level), replaced by the right ones: the
    file is far from the stored prices but at NQ's known level, so it is written, said."""
    tenfold = bars.copy()
    for column in ("open", "high", "low", "close"):
        tenfold[column] = tenfold[column] * 10
    import_file(bf.plain_csv(tmp_path / "x10.csv", tenfold), "NQ", settings, any_level=True)

    result = import_file(bf.plain_csv(tmp_path / "nq.csv", bars), "NQ", settings, mode="replace")

    assert "(×0.1, the median over the 6,900 bars both hold)" in result.note
    assert_same_bars(settings, bars)


def test_restore_without_a_previous_file_says_so(settings: EngineSettings) -> None:
    result = CliRunner().invoke(data_cli, ["restore", "NQ"], obj=settings)
    assert result.exit_code == 1
    assert "there is no previous file to restore" in result.output


class Killed(BaseException):
    """SIGKILL, as far as the code under test can tell: nothing after it runs."""


def kill_restore_between_its_renames(
    settings: EngineSettings, monkeypatch: pytest.MonkeyPatch
) -> tuple[bytes, bytes]:
    """NQ holding C with P kept, then a restore killed after its rename of P over C and
    before that of its swap (the only copy of C) over the kept file's name; (P, C) bytes."""
    target = data_path("NQ", settings)
    kept, current = previous_path(target).read_bytes(), target.read_bytes()
    real_replace = os.replace

    def replace(source: object, destination: object) -> None:
        if str(source).endswith(".swap"):
            raise Killed
        real_replace(source, destination)

    monkeypatch.setattr(store.os, "replace", replace)
    with pytest.raises(Killed):
        store.restore_previous(target)
    monkeypatch.setattr(store.os, "replace", real_replace)
    [swap] = target.parent.glob(".NQ.parquet.*.swap")
    assert target.read_bytes() == kept and swap.read_bytes() == current
    assert not previous_path(target).exists()
    return kept, current


def test_a_restore_killed_between_its_renames_loses_nothing(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed between its two renames, a restore left the data from before it only in
    ``.NQ.parquet.<pid>.swap``; the next import removed that as a killed write's temporary
    file (and said "Removed the temporary file…"), and the data was gone. The next holder of
    the write lock now finishes the restore: the swap becomes the kept file."""
    day = bars["timestamp"].dt.tz_localize(None)
    monday = bars[day < pd.Timestamp("2024-03-18 17:00")]
    import_file(bf.plain_csv(tmp_path / "mon.csv", monday), "NQ", settings)
    import_file(bf.plain_csv(tmp_path / "week.csv", bars), "NQ", settings, mode="append")
    target = data_path("NQ", settings)
    monday_bytes, week_bytes = kill_restore_between_its_renames(settings, monkeypatch)

    # An import with nothing new writes nothing; its cleanup used to delete the week.
    again = import_file(bf.plain_csv(tmp_path / "again.csv", monday), "NQ", settings, mode="append")
    assert again.added == 0 and again.cleaned == ""
    assert target.read_bytes() == monday_bytes  # the restore asked for is done
    assert previous_path(target).read_bytes() == week_bytes  # and the week kept for undoing
    assert not list(target.parent.glob(".NQ.parquet.*.swap"))
    # The restore after it undoes it, as after any restore.
    assert store.restore_previous(target).rows == len(bars)
    assert_same_bars(settings, bars)


def test_a_killed_restore_run_again_is_finished_not_undone(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run again, the restore said "there is no previous file to restore", with the data
    from before it hidden in the swap file."""
    day = bars["timestamp"].dt.tz_localize(None)
    monday = bars[day < pd.Timestamp("2024-03-18 17:00")]
    import_file(bf.plain_csv(tmp_path / "mon.csv", monday), "NQ", settings)
    import_file(bf.plain_csv(tmp_path / "week.csv", bars), "NQ", settings, mode="append")
    target = data_path("NQ", settings)
    monday_bytes, week_bytes = kill_restore_between_its_renames(settings, monkeypatch)
    restored = CliRunner().invoke(data_cli, ["restore", "NQ"], obj=settings)
    assert restored.exit_code == 0, restored.output
    assert "NQ: restored imported data (imported from mon.csv" in restored.output
    assert f"{len(monday):,} bars" in restored.output
    assert target.read_bytes() == monday_bytes
    assert previous_path(target).read_bytes() == week_bytes


def test_a_swap_file_is_removed_only_when_it_holds_nothing_else(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """A restore killed before its first rename leaves a second name of the data: removed.
    A swap beside a kept file that holds other bars may be their only copy: left, and
    logged."""
    day = bars["timestamp"].dt.tz_localize(None)
    monday = bars[day < pd.Timestamp("2024-03-18 17:00")]
    import_file(bf.plain_csv(tmp_path / "mon.csv", monday), "NQ", settings)
    import_file(bf.plain_csv(tmp_path / "week.csv", bars), "NQ", settings, mode="append")
    target = data_path("NQ", settings)
    link = target.with_name(".NQ.parquet.111.swap")
    os.link(target, link)
    copy = target.with_name(".NQ.parquet.222.swap")
    copy.write_bytes(previous_path(target).read_bytes())
    other = target.with_name(".NQ.parquet.333.swap")
    other.write_bytes(b"PAR1 bars of some other write")
    assert store.finish_killed_restores(target) == [
        (link.name, "removed"),
        (copy.name, "removed"),
        (other.name, "left"),
    ]
    assert not link.exists() and not copy.exists() and other.exists()
    assert_same_bars(settings, bars)
    assert read_meta(previous_path(target)).rows == len(monday)


def test_append_adds_new_dates_and_refuses_an_overlap_that_disagrees(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    day = bars["timestamp"].dt.tz_localize(None)
    first_three = bars[day < pd.Timestamp("2024-03-20 17:00")]
    from_third = bars[day >= pd.Timestamp("2024-03-19 18:00")]  # one day of overlap
    import_file(bf.plain_csv(tmp_path / "mon-wed.csv", first_three), "NQ", settings)
    before = data_path("NQ", settings).read_bytes()

    wrong = from_third.copy()
    wrong.loc[wrong.index[10], "volume"] += 1  # a bar of the overlap that disagrees
    with pytest.raises(DataError, match="overlaps the stored data and disagrees with it"):
        import_file(bf.plain_csv(tmp_path / "bad.csv", wrong), "NQ", settings, mode="append")
    assert data_path("NQ", settings).read_bytes() == before

    result = import_file(
        bf.plain_csv(tmp_path / "wed-fri.csv", from_third), "NQ", settings, mode="append"
    )
    assert result.added == (day >= pd.Timestamp("2024-03-20 17:00")).sum()
    assert_same_bars(settings, bars)
    assert previous_path(data_path("NQ", settings)).read_bytes() == before

    again = import_file(
        bf.plain_csv(tmp_path / "same.csv", from_third), "NQ", settings, mode="append"
    )
    assert again.added == 0


def test_append_after_a_hole_says_how_long_it_is(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """Bars of 2031 appended to data ending 2024-03-22 left seven years without a bar, and
    nothing said so."""
    day = bars["timestamp"].dt.tz_localize(None)
    monday = bars[day < pd.Timestamp("2024-03-18 17:00")]
    import_file(bf.plain_csv(tmp_path / "mon.csv", monday), "NQ", settings)
    tuesday = bars[
        (day >= pd.Timestamp("2024-03-18 18:00")) & (day < pd.Timestamp("2024-03-19 17:00"))
    ]
    next_day = import_file(
        bf.plain_csv(tmp_path / "tue.csv", tuesday), "NQ", settings, mode="append"
    )
    assert next_day.note == ""  # no word where nothing is wrong
    later = bf.week_of_bars(first_sunday=dt.date(2024, 4, 7), days=1)  # the same walk
    result = import_file(bf.plain_csv(tmp_path / "april.csv", later), "NQ", settings, mode="append")
    last = tuesday["timestamp"].iloc[-1].tz_localize(None)
    first = later["timestamp"].iloc[0].tz_localize(None)
    assert result.note == (
        f"The stored data ends at {last} and the file's new bars start at {first}: "
        f"{(first - last).days} days with no bars between them."
    )
    assert_same_bars(settings, pd.concat([monday, tuesday, later]))


def test_appending_earlier_history_says_it_comes_before_the_stored_data(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    day = bars["timestamp"].dt.tz_localize(None)
    early, late = (
        bars[day < pd.Timestamp("2024-03-19 17:00")],
        bars[day >= pd.Timestamp("2024-03-20 18:00")],
    )
    import_file(bf.plain_csv(tmp_path / "late.csv", late), "NQ", settings)
    before = data_path("NQ", settings).read_bytes()
    with pytest.raises(DataError) as refused:
        import_file(bf.plain_csv(tmp_path / "early.csv", early), "NQ", settings, mode="append")
    message = str(refused.value)
    assert (
        f"the file's bars ({day[early.index[0]]} to {day[early.index[-1]]}) come before the "
        f"stored data ({day[late.index[0]]} to {day[late.index[-1]]})"
    ) in message
    assert "--append adds only bars after the stored ones" in message
    assert "overlaps" not in message and "has no bar" not in message
    with pytest.raises(DataError, match=f"the file starts at {day.iloc[0]}, before the stored"):
        import_file(bf.plain_csv(tmp_path / "all.csv", bars), "NQ", settings, mode="append")
    assert data_path("NQ", settings).read_bytes() == before


def test_append_refuses_a_price_jump_where_new_bars_meet_stored_ones(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """A file in another unit is whole in itself; only the seam with stored bars shows it.
    (Tenfold here: a whole file in cents is refused on its own, see the next test.)"""
    day = bars["timestamp"].dt.tz_localize(None)
    early = bars[day < pd.Timestamp("2024-03-19 17:00")]
    late = bars[day >= pd.Timestamp("2024-03-19 18:00")]
    tenfold = late.copy()
    for column in ("open", "high", "low", "close"):
        tenfold[column] = tenfold[column] * 10
    import_file(bf.plain_csv(tmp_path / "early.csv", early), "NQ", settings)
    before = data_path("NQ", settings).read_bytes()
    with pytest.raises(DataError) as refused:
        import_file(bf.plain_csv(tmp_path / "x10.csv", tenfold), "NQ", settings, mode="append")
    stored_close, new_open = early["close"].iloc[-1], tenfold["open"].iloc[0]
    assert (
        f"opens at {new_open:.10g}, but the stored data's last bar ({day[early.index[-1]]}) "
        f"closes at {stored_close:.10g}"
    ) in str(refused.value)
    assert "another unit" in str(refused.value)
    assert data_path("NQ", settings).read_bytes() == before

    # The other way round: points onto tenfold prices (stored as if a split made them).
    import_file(
        bf.plain_csv(tmp_path / "early_x10.csv", tenfold.iloc[:100]),
        "NQ",
        settings,
        mode="replace",
        any_level=True,
    )
    rest = late.iloc[100:]
    with pytest.raises(DataError, match=r"\(×0\.1\)"):
        import_file(bf.plain_csv(tmp_path / "rest.csv", rest), "NQ", settings, mode="append")


@pytest.mark.parametrize("symbol", ["NQ", "CL"])
def test_a_whole_file_in_cents_is_refused_before_anything_is_written(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame, symbol: str
) -> None:
    """Whole cents sit on NQ's 0.25 tick and CL's 0.01 tick alike, so the tick cannot catch
    them; that every price is a multiple of 100 ticks does."""
    tick = {"NQ": 0.25, "CL": 0.01}[symbol]
    day = bars["timestamp"].dt.tz_localize(None)
    points = bars[day.dt.hour.between(9, 15)].copy()
    for column in ("open", "high", "low", "close"):
        points[column] = (points[column] / 0.25).round() * tick * (4 if symbol == "CL" else 1)
    cents = points.copy()
    for column in ("open", "high", "low", "close"):
        cents[column] = (cents[column] * 100).round()
    path = bf.plain_csv(tmp_path / "cents.csv", cents)
    for check in (True, False):
        with pytest.raises(DataError) as refused:
            (check_file if check else import_file)(path, symbol, settings)
        first = cents["open"].iloc[0]
        assert (
            f"every price in the file is a whole multiple of {100 * tick:g} (100 ticks of "
            f"{tick:g}), as if written in cents: the first open {first:.10g} would be "
            f"{first / 100:.10g} in points"
        ) in str(refused.value)
        assert str(refused.value).endswith(
            "nothing was written. If the prices are right as they are, import it again "
            "with --any-level."
        )
    with pytest.raises(DataError, match=r"send the file again with the caption `--any-level`"):
        check_file(path, symbol, settings, advice="caption")
    assert not data_path(symbol, settings).exists()
    # The same bars in points import.
    check_file(bf.plain_csv(tmp_path / "points.csv", points), symbol, settings)
    # Prices that are right as written (the level check's way past it, which the cents
    # check lacked): imported as written, and said.
    result = import_file(path, symbol, settings, any_level=True)
    assert "as if written in cents" in result.report.text()
    assert "imported as written, as --any-level says" in result.report.text()
    assert stored(settings, symbol)["close"].tolist() == cents["close"].tolist()
    if symbol == "NQ":  # and the level note says ×102, not ×1e+02
        ratio = cents["close"].median() / stored_level(cents)
        assert f"is ×{round(ratio)} the level NQ had around" in result.note


def test_append_to_the_synthetic_sample_is_refused(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame, nq_summer: pd.DataFrame
) -> None:
    from barb.data.store import make_meta, write_bars

    meta = make_meta(
        nq_summer, instrument="NQ", timezone=bf.NY, source="synthetic", description="s"
    )
    write_bars(nq_summer, meta, data_path("NQ", settings))
    with pytest.raises(DataError, match="already has the synthetic sample"):
        import_file(bf.plain_csv(tmp_path / "a.csv", bars), "NQ", settings)
    with pytest.raises(DataError, match="holds the synthetic sample"):
        import_file(bf.plain_csv(tmp_path / "a.csv", bars), "NQ", settings, mode="append")


def test_queries_see_a_new_import_without_a_restart(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    query = {"session": "ETH", "from": "daily", "select": "max(high)"}
    import_file(bf.plain_csv(tmp_path / "a.csv", bars), "NQ", settings)
    assert execute(query, "NQ", settings=settings).summary.value == bars["high"].max()
    higher = bars.assign(high=bars["high"] + 100)
    import_file(bf.plain_csv(tmp_path / "b.csv", higher), "NQ", settings, mode="replace")
    assert execute(query, "NQ", settings=settings).summary.value == bars["high"].max() + 100


def test_two_imports_at_once_run_one_after_the_other(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each import read the stored file and wrote it back with its own bars: two appends at
    once both said "wrote", and the one that finished first was lost. The second one now
    waits for the first and appends to what it wrote."""
    day = bars["timestamp"].dt.tz_localize(None)
    monday = bars[day < pd.Timestamp("2024-03-18 17:00")]
    tuesday = bars[
        (day >= pd.Timestamp("2024-03-18 18:00")) & (day < pd.Timestamp("2024-03-19 17:00"))
    ]
    tue_wed = bars[
        (day >= pd.Timestamp("2024-03-18 18:00")) & (day < pd.Timestamp("2024-03-20 17:00"))
    ]
    import_file(bf.plain_csv(tmp_path / "mon.csv", monday), "NQ", settings)
    files = {
        "first": bf.plain_csv(tmp_path / "tue.csv", tuesday),
        "second": bf.plain_csv(tmp_path / "tue_wed.csv", tue_wed),
    }
    # The first import stops just before it writes; the second then runs until it either
    # finishes (no lock) or waits for the lock.
    writing, go_on, second_held = threading.Event(), threading.Event(), threading.Event()
    write_bars, flock = importer.write_bars, fcntl.flock

    def paused_write(*args: object, **kwargs: object) -> None:
        if threading.current_thread().name == "first":
            writing.set()
            go_on.wait(60)
        write_bars(*args, **kwargs)

    def watched_flock(fd: int, operation: int) -> None:
        if threading.current_thread().name == "second" and operation == fcntl.LOCK_EX:
            second_held.set()
        flock(fd, operation)

    monkeypatch.setattr(importer, "write_bars", paused_write)
    monkeypatch.setattr(fcntl, "flock", watched_flock)
    results: dict[str, object] = {}

    def run(name: str) -> None:
        try:
            results[name] = import_file(files[name], "NQ", settings, mode="append")
        except Exception as exc:  # the test reads it below
            results[name] = exc
        finally:
            if name == "second":
                second_held.set()

    threads = {name: threading.Thread(target=run, args=(name,), name=name) for name in files}
    threads["first"].start()
    assert writing.wait(60)
    threads["second"].start()
    assert second_held.wait(60)
    go_on.set()
    for thread in threads.values():
        thread.join(60)

    first, second = results["first"], results["second"]
    assert isinstance(first, importer.ImportResult) and first.added == len(tuesday)
    wednesday = len(tue_wed) - len(tuesday)
    assert isinstance(second, importer.ImportResult) and second.added == wednesday
    assert_same_bars(settings, bars[day < pd.Timestamp("2024-03-20 17:00")])


def test_an_import_removes_what_a_killed_import_left_and_only_that(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """A SIGKILL mid-write left ``.NQ.parquet.<rand>.tmp`` or ``.NQ.arrow.<rand>.tmp`` beside
    the data for good (370 MB for the Arrow copy of the sample). The next import removes
    them under its lock and says so; a temporary file being written (its writer holds its
    flock: a query process mapping the data) stays, and nothing is said when nothing was
    left."""
    day = bars["timestamp"].dt.tz_localize(None)
    monday = bars[day < pd.Timestamp("2024-03-18 17:00")]
    import_file(bf.plain_csv(tmp_path / "mon.csv", monday), "NQ", settings)
    target = data_path("NQ", settings)
    before = target.read_bytes()
    arrow = mapped.mapped_path(target, settings)
    killed = {
        target.with_name(".NQ.parquet.k3j9x1.tmp"): b"PAR1" + b"\0" * 2_000_000,  # cut short
        arrow.with_name(f".{arrow.name}.q7w2e5.tmp"): b"ARROW1",
    }
    for path, content in killed.items():
        path.write_bytes(content)
    other = target.with_name(".ES.parquet.a1b2c3.tmp")  # another instrument's: not this one's
    other.write_bytes(b"x")
    fd, live = store.locked_temporary(arrow)
    try:
        # The file cannot be read: refused before the lock, nothing removed, nothing written.
        bad = monday.copy()
        bad.loc[bad.index[5], "high"] = bad.loc[bad.index[5], "low"] - 1
        with pytest.raises(ImportRefused):
            import_file(bf.plain_csv(tmp_path / "bad.csv", bad), "NQ", settings, mode="append")
        assert all(path.exists() for path in killed)
        result = import_file(
            bf.plain_csv(tmp_path / "same.csv", monday), "NQ", settings, mode="append"
        )
        assert live.exists()  # still being written
    finally:
        os.close(fd)
        live.unlink()
    assert [path.name for path in killed if path.exists()] == [] and other.exists()
    assert result.added == 0 and target.read_bytes() == before  # stored bars untouched
    assert_same_bars(settings, monday)
    assert result.cleaned == (
        "Removed the temporary files killed writes left: .NQ.parquet.k3j9x1.tmp (2.0 MB), "
        f".{arrow.name}.q7w2e5.tmp (0.0 MB)."
    )
    again = import_file(bf.plain_csv(tmp_path / "again.csv", monday), "NQ", settings, mode="append")
    assert again.cleaned == ""


def test_a_file_cut_inside_its_last_number_is_reported_and_a_good_one_is_not(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """A file cut inside its last volume (no final line end: "…,348" became "…,3") imported
    volume 3 without a word. Rule: a file that does not end with a line end has its last line
    reported when its last field is shorter than on each of the 100 lines before it; the
    many writers that leave out the final line end give no report otherwise."""
    bars = bars.copy()
    bars.loc[bars.index[-101:], "volume"] = [*range(300, 400), 348]  # the end of a busy hour
    text = bf.plain_csv(tmp_path / "full.csv", bars).read_text()
    volumes = bars["volume"].astype(int).astype(str)
    last = volumes.iloc[-1]
    shortest = volumes.iloc[-101:-1].str.len().min()
    cut = tmp_path / "cut.csv"
    cut.write_text(text.rstrip("\n")[: -(len(last) - 1)])  # the last volume's first digit
    report = check_file(cut, "NQ", settings).report
    assert report.ok  # reported, not refused
    assert report.count("cut last line") == 1
    [finding] = [f for c in report.warnings if c.name == "cut last line" for f in c.shown]
    assert finding.line == len(bars) + 1  # the header is line 1
    assert finding.message == (
        f"the file ends inside this line (no line end after it), and its volume {last[0]} is "
        f"shorter than on each of the 100 lines before ({shortest} characters or more): was "
        "the file cut? The bar is imported as written; re-export the file if it was."
    )
    # Whole files, with or without the final line end: nothing to say.
    for name, content in (("ended.csv", text), ("unended.csv", text.rstrip("\n"))):
        (tmp_path / name).write_text(content)
        assert check_file(tmp_path / name, "NQ", settings).report.count("cut last line") == 0
    # A short last volume after a line end is a quiet bar, not a cut.
    quiet = bars.copy()
    quiet.loc[quiet.index[-1], "volume"] = 3
    quiet_file = bf.plain_csv(tmp_path / "quiet.csv", quiet)
    assert check_file(quiet_file, "NQ", settings).report.count("cut last line") == 0


def test_a_file_cut_to_an_empty_last_field_is_refused_and_the_note_says_so(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """A file cut right after its last comma ("…,18084.75,") is refused for the missing
    volume, yet its note said "The bar is imported as written" under "Not imported", named
    the value as "volume  is shorter" (nothing between two spaces) and, in Russian, «от 1
    знаков»."""
    bars = bars.copy()
    bars.loc[bars.index[-101:], "volume"] = [*range(300, 400), 348]
    text = bf.plain_csv(tmp_path / "full.csv", bars).read_text().rstrip("\n")
    cut = tmp_path / "cut.csv"
    cut.write_text(text[: -len("348")])  # ends with the comma before the volume
    assert cut.read_text().endswith(",")

    def note(lang: str) -> tuple[bool, str]:
        report = check_file(cut, "NQ", settings, lang=lang).report
        [finding] = [f for c in report.warnings if c.name == "cut last line" for f in c.shown]
        assert finding.line == len(bars) + 1
        return report.ok, finding.message

    assert note("en") == (
        False,
        "the file ends inside this line (no line end after it), and its volume is empty, "
        "though it is filled on each of the 100 lines before: was the file cut? Re-export "
        "the file if it was.",
    )
    assert note("ru") == (
        False,
        "файл кончается внутри этой строки (после неё нет конца строки), и поле volume в ней "
        "пустое, хотя в каждой из 100 строк перед ней оно заполнено: файл обрезан? Если "
        "обрезан, выгрузите файл заново.",
    )
    # Cut inside the number, the file is imported, and the Russian count agrees with it.
    cut.write_text(text[: -len("48")])
    report = check_file(cut, "NQ", settings, lang="ru").report
    assert report.ok
    [finding] = [f for c in report.warnings if c.name == "cut last line" for f in c.shown]
    assert finding.message == (
        "файл кончается внутри этой строки (после неё нет конца строки), и её volume 3 короче, "
        "чем в каждой из 100 строк перед ней (от 3 знаков): файл обрезан? Бар импортируется "
        "как записан; если обрезан, выгрузите файл заново."
    )
    said = ImportWords("ru")
    assert [said("import.cut_digits", plural_of=d, digits=d) for d in (1, 3, 5, 21)] == [
        "от 1 знака",
        "от 3 знаков",
        "от 5 знаков",
        "от 21 знака",
    ]


def test_the_result_says_whether_the_replaced_file_was_kept(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """The bot said "the previous data is kept" after a first import too, when nothing was."""
    monday = bf.plain_csv(tmp_path / "mon.csv", bars.iloc[:1380])
    first = import_file(monday, "NQ", settings, mode="replace")
    assert not first.kept and not previous_path(first.path).exists()
    week = bf.plain_csv(tmp_path / "week.csv", bars)
    again = import_file(week, "NQ", settings, mode="replace")
    assert again.kept and read_meta(previous_path(again.path)).rows == 1380


def test_bot_uploads_of_the_next_days_add_to_the_stored_bars(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """Every Import of an upload replaced the data: an admin sending each day's new bars
    was left with the last day, and the history was deleted by the second upload."""
    from bot.data_uploads import DataUploads

    day = bars["timestamp"].dt.tz_localize(None)
    days = [
        bars[
            (day >= pd.Timestamp(f"2024-03-{d - 1} 18:00"))
            & (day < pd.Timestamp(f"2024-03-{d} 17:00"))
        ]
        for d in (18, 19, 20)
    ]
    desk = DataUploads(settings)

    def upload(name: str, frame: pd.DataFrame):  # type: ignore[no-untyped-def]
        offer = desk.new_offer(name, "NQ", user_id=1, chat_id=1)
        desk.path(offer).write_bytes(bf.plain_csv(tmp_path / name, frame).read_bytes())
        return offer, desk.check(offer)

    offer, checked = upload("monday.csv", days[0])
    assert checked.plan == ""  # nothing stored yet
    desk.accept(offer)
    offer, checked = upload("tuesday.csv", days[1])
    assert (
        f"Import adds the file's {len(days[1]):,} new bars to the stored NQ data "
        f"({len(days[0]):,} bars, 2024-03-18 to 2024-03-18)."
    ) == checked.plan
    assert desk.accept(offer).added == len(days[1])
    offer, checked = upload("wednesday.csv", days[2])
    desk.accept(offer)
    assert_same_bars(settings, pd.concat(days))

    offer, checked = upload("again.csv", days[2])
    assert not checked.importable
    assert checked.error == (
        f"every bar of again.csv is already in the stored NQ data ({sum(map(len, days)):,} "
        "bars, 2024-03-18 to 2024-03-20); there is nothing to import."
    )
    fixed = days[1].copy()
    fixed.loc[fixed.index[5], "volume"] += 1  # a corrected file disagrees: it replaces
    offer, checked = upload("fixed.csv", fixed)
    assert (
        f"Import replaces the stored NQ data ({sum(map(len, days)):,} bars, 2024-03-18 to "
        "2024-03-20); `barb data restore NQ` brings it back until the next import. The data "
        f"kept from before ({len(days[0]) + len(days[1]):,} bars, 2024-03-18 to 2024-03-19) "
        "is then deleted."
    ) == checked.plan
    desk.accept(offer)
    assert_same_bars(settings, fixed)


def test_an_upload_running_past_the_stored_bars_that_cannot_be_appended_says_why(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """ES's next week sent to the bot as NQ's: --append refuses it at the seam, and the
    offer said only "Import replaces the stored NQ data (6,900 bars, …)", where the admin
    sending each week's bars expected an append. The offer says why it is no append (and
    the report, that the prices are far from NQ's level), in the admin's language. Far from
    NQ's known level, it is refused unless the caption says --any-level."""
    from bot.data_uploads import DataUploads
    from bot.upload_caption import UploadOptions

    import_file(bf.plain_csv(tmp_path / "nq.csv", bars), "NQ", settings)
    later = bf.week_of_bars(first_sunday=dt.date(2024, 3, 24), seed=11)
    es = later.assign(**{c: later[c] / 4 for c in ("open", "high", "low", "close")})
    desk = DataUploads(settings)
    first, last = es.iloc[0], bars.iloc[-1]
    ratio = first["open"] / last["close"]
    level = es["close"].median() / stored_level(es)
    for lang, said, refused in [
        (
            "en",
            "The file cannot be added to them: the file's first new bar ({t}) opens at {o}",
            f"is ×{level:.2g} the level NQ had around",
        ),
        (
            "ru",
            "Добавить файл к ним нельзя: первый новый бар файла ({t}) открывается на {o}",
            f"— ×{level:.2g} от уровня, на котором NQ был около",
        ),
    ]:
        offer = desk.new_offer("es.csv", "NQ", user_id=1, chat_id=1)
        desk.path(offer).write_bytes(bf.plain_csv(tmp_path / "es.csv", es).read_bytes())
        checked = desk.check(offer, lang)
        assert not checked.importable and checked.error is not None
        assert refused in checked.error and "`--any-level`" in checked.error
        desk.discard(offer)
        forced = UploadOptions(any_level=True)
        offer = desk.new_offer("es.csv", "NQ", user_id=1, chat_id=1, options=forced)
        desk.path(offer).write_bytes(bf.plain_csv(tmp_path / "es.csv", es).read_bytes())
        checked = desk.check(offer, lang)
        assert checked.importable and checked.offer.mode == "replace"
        opened = f"{first['open']:.10g}"
        assert said.format(t=first["timestamp"].tz_localize(None), o=opened) in checked.plan
        assert f"(×{ratio:.3g})" in checked.plan
        assert checked.plan.endswith("?")  # the refusal's question, not "Nothing was written"
        assert any("NQ" in note and "×0.25" in note for note in checked.report.notes)
        desk.discard(offer)


def test_an_offered_append_is_not_done_as_a_replace_after_the_stored_data_changed(
    settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """Thursday's and Friday's files were both offered as "Import adds the file's 1,380 new
    bars"; Friday's was pressed first, and Thursday's press then replaced the 5,520 stored
    bars by its 1,380: the mode was chosen again at the press, where Thursday no longer
    continued the data, and a failed append became a replace without a word."""
    from bot.data_uploads import DataUploads

    desk = DataUploads(settings)
    day = len(bars) // 5  # 1,380 bars from 18:00 to 17:00
    monday_to_wednesday, thursday, friday = (
        bars.iloc[: 3 * day],
        bars.iloc[3 * day : 4 * day],
        bars.iloc[4 * day :],
    )

    def upload(name: str, frame: pd.DataFrame):  # type: ignore[no-untyped-def]
        offer = desk.new_offer(name, "NQ", user_id=1, chat_id=1)
        bf.plain_csv(desk.path(offer), frame.reset_index(drop=True))
        return offer, desk.check(offer)

    desk.accept(upload("mon-wed.csv", monday_to_wednesday)[0])
    (thu, said_thu), (fri, said_fri) = upload("thu.csv", thursday), upload("fri.csv", friday)
    for said in (said_thu, said_fri):
        assert said.plan == (
            f"Import adds the file's {day:,} new bars to the stored NQ data "
            f"({3 * day:,} bars, 2024-03-18 to 2024-03-20)."
        )
    assert desk.accept(fri).added == day
    with pytest.raises(DataError) as refused:
        desk.accept(thu, "ru")
    assert str(refused.value) == (
        "хранящиеся данные NQ изменились после проверки этого файла, и импорт может сделать "
        "не то, что обещал; ничего не записано: отправьте файл ещё раз, чтобы увидеть, что "
        "он сделает теперь."
    )
    assert_same_bars(settings, pd.concat([monday_to_wednesday, friday]))  # 5,520 bars kept
    assert desk.get(thu.id) is None  # the refused offer is let go

    # Sent again, Thursday is offered as what Import now does, and done as offered.
    offer, said = upload("thu.csv", thursday)
    assert said.plan.startswith(
        f"Import replaces the stored NQ data ({4 * day:,} bars, 2024-03-18 to 2024-03-22)"
    )
    assert desk.accept(offer).added == day
    assert_same_bars(settings, thursday)


def test_an_offer_is_imported_once_and_says_so_until_let_go(
    settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """The bot stopped while an Import wrote: the data was written and the offer deleted, so
    the press, handled again at the next start, read "send it again". What Import wrote now
    stays in the offer's record (read by the next process too) until the reply is stored,
    and a second Import of it writes nothing. The next day's file, appended, says it deletes
    the data kept from before the last import, as a replace did (``barb data restore``
    keeps one generation, and the import says which one it deletes)."""
    from bot.data_uploads import DataUploads

    day = len(bars) // 5  # 1,380 bars from 18:00 to 17:00
    desk = DataUploads(settings)

    def upload(name: str, frame: pd.DataFrame):  # type: ignore[no-untyped-def]
        offer = desk.new_offer(name, "NQ", user_id=1, chat_id=1)
        bf.plain_csv(desk.path(offer), frame.reset_index(drop=True))
        return offer, desk.check(offer)

    monday, _ = upload("mon.csv", bars.iloc[:day])
    desk.accept(monday)
    desk.discard(monday)
    target = data_path("NQ", settings)
    week, _ = upload("week.csv", bars.iloc[: 4 * day])
    imported = desk.accept(week)
    written = target.read_bytes()
    assert (imported.added, imported.kept, imported.meta.rows) == (3 * day, True, 4 * day)
    assert DataUploads(settings).get(week.id).imported == imported  # what a restart reads
    assert desk.accept(week) == imported  # pressed again: the same, and nothing written
    assert target.read_bytes() == written
    assert read_meta(previous_path(target)).rows == day  # Monday, kept from before the week

    _, said = upload("fri.csv", bars.iloc[4 * day :])
    assert said.plan == (
        f"Import adds the file's {day:,} new bars to the stored NQ data ({4 * day:,} bars, "
        f"2024-03-18 to 2024-03-21). The data kept from before ({day:,} bars, 2024-03-18 to "
        "2024-03-18) is then deleted."
    )
    desk.discard(week)
    assert desk.get(week.id) is None


def test_offers_nobody_pressed_for_a_day_expire_at_the_next_upload(
    settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """Unpressed uploads (up to 20 MB each) stayed under .uploads for good. An offer
    untouched for longer than a plan's lifetime now goes at the next upload (or start); so
    does one staged by the version before, which has no ``saved_at`` and no mode (its
    Import is refused with "send it again", as it was)."""
    from bot.data_uploads import OFFER_LIFETIME, DataUploads
    from bot.store.housekeeping import PLAN_LIFETIME

    assert OFFER_LIFETIME == PLAN_LIFETIME
    desk = DataUploads(settings)
    now = dt.datetime.now(dt.UTC)
    stale, recent, before, today = (
        desk.new_offer(f"{name}.csv", "NQ", user_id=1, chat_id=1)
        for name in ("stale", "recent", "before", "today")
    )
    bf.plain_csv(desk.path(stale), bars.iloc[:100])

    def record(offer, **fields: object) -> None:  # type: ignore[no-untyped-def]
        (desk.root / offer.id / "offer.json").write_text(
            json.dumps(json.loads(offer.model_dump_json()) | fields)
        )

    record(stale, saved_at=(now - dt.timedelta(hours=25)).isoformat())
    record(recent, saved_at=(now - dt.timedelta(hours=23)).isoformat())
    for offer, created in ((before, "2020-01-01T00:00:00Z"), (today, now.isoformat())):
        record(offer, created_at=created, saved_at=None, mode=None, stored=None)
    cut = desk.root / "0123456789ab"  # its record cut short: its folder's time counts
    cut.mkdir()
    (cut / "offer.json").write_text('{"id": "0123')
    os.utime(cut, (0, 0))
    assert desk.get(stale.id).expired() and desk.get(before.id).expired()
    assert not desk.get(recent.id).expired() and not desk.get(today.id).expired()
    with pytest.raises(DataError, match="no longer waiting to be imported; send it again"):
        desk.accept(today)

    fresh = desk.new_offer("new.csv", "NQ", user_id=1, chat_id=1)
    assert sorted(p.name for p in desk.root.iterdir()) == sorted([recent.id, fresh.id])


def test_an_import_not_yet_said_outlives_a_day_down(
    settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """The bot stopped mid-import and started again over a day later: ``expire`` (run at the
    start, before the stored press is handled again) deleted the record of what Import
    wrote, and the press read "This file is no longer waiting to be imported; send it
    again." of 6,900 imported bars. A record whose import is not said yet now stays until
    it is said; then it expires as any offer does."""
    from bot.data_uploads import DataUploads

    desk = DataUploads(settings)
    offer = desk.new_offer("week.csv", "NQ", user_id=1, chat_id=1)
    bf.plain_csv(desk.path(offer), bars)
    desk.check(offer)
    imported = desk.accept(offer)
    record = desk.root / offer.id / "offer.json"

    def saved_hours_ago(hours: int) -> None:
        fields = json.loads(record.read_text())
        fields["saved_at"] = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=hours)).isoformat()
        record.write_text(json.dumps(fields))

    saved_hours_ago(25)
    assert desk.get(offer.id).expired()
    assert desk.expire() == []
    assert desk.get(offer.id).imported == imported == desk.accept(offer)  # the press, again
    assert imported.added == len(stored(settings)) == len(bars)

    desk.keep_outcome(offer)  # the reply is stored
    saved_hours_ago(25)
    assert desk.expire() == [offer.id]


@pytest.mark.parametrize("killed", ["before the rename", "after the rename"])
def test_an_import_killed_around_the_rename_is_said_as_imported_once(
    settings: EngineSettings, bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, killed: str
) -> None:
    """The bot killed just after the new data file was in place (before recording it): the
    press, handled again at the next start, found the version its own write produced and
    read "the stored NQ data changed after this file was checked …; nothing was written:
    send the file again", of 1,380 bars that were imported. What Import is about to write,
    with the version it gives the data, is now recorded before the rename: found stored, it
    is said as imported; not found (killed before the rename), the file is imported then."""
    from bot.data_uploads import DataUploads

    day = len(bars) // 5
    desk = DataUploads(settings)

    def upload(name: str, frame: pd.DataFrame):  # type: ignore[no-untyped-def]
        offer = desk.new_offer(name, "NQ", user_id=1, chat_id=1)
        bf.plain_csv(desk.path(offer), frame.reset_index(drop=True))
        desk.check(offer)
        return offer

    desk.accept(upload("mon.csv", bars.iloc[:day]))
    target = data_path("NQ", settings)
    tuesday = upload("tue.csv", bars.iloc[day : 2 * day])
    real_write = importer.write_bars

    def kill(*args: object, **kwargs: object) -> None:
        if killed == "after the rename":
            real_write(*args, **kwargs)  # type: ignore[arg-type]
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(importer, "write_bars", kill)
        patch.setattr(DataUploads, "discard", lambda self, offer: None)  # no cleanup runs
        with pytest.raises(Killed):
            desk.accept(tuesday)
    written = target.read_bytes()

    imported = DataUploads(settings).accept(tuesday)  # the press, at the next start
    assert (imported.added, imported.kept, imported.meta.rows) == (day, True, 2 * day)
    assert_same_bars(settings, bars.iloc[: 2 * day])
    assert read_meta(previous_path(target)).source_file == "mon.csv"  # kept for restore
    if killed == "after the rename":
        assert target.read_bytes() == written  # not written a second time
    assert DataUploads(settings).get(tuesday.id).imported == imported
    assert [p.name for p in (desk.root / tuesday.id).iterdir()] == ["offer.json"]


def test_a_check_killed_leaves_no_staged_copy_past_the_next_start(
    settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """The bot killed while it checked an upload: the update, handled again at the next
    start, made a new offer, and the killed one's staged copy (up to 20 MB) stayed for a day
    (for good before offers expired). A new offer's folder is locked until its check ends;
    one never checked whose lock nobody holds is removed at the next start or upload, while
    one being checked (here, or by another replica) is left alone."""
    from bot.data_uploads import DataUploads, Offer

    desk = DataUploads(settings)
    checking = desk.new_offer("now.csv", "NQ", user_id=1, chat_id=1)
    bf.plain_csv(desk.path(checking), bars.iloc[:100])
    # What a process killed in its check leaves: a record with no mode and the staged file;
    # the kernel released its lock.
    killed = Offer(id="0123456789ab", symbol="NQ", file_name="killed.csv", user_id=1, chat_id=1)
    (desk.root / killed.id).mkdir()
    (desk.root / killed.id / "offer.json").write_text(killed.model_dump_json())
    bf.plain_csv(desk.path(killed), bars.iloc[:100])

    assert DataUploads(settings).expire() == [killed.id]  # another process starting
    assert [p.name for p in desk.root.iterdir()] == [checking.id]
    assert desk.check(checking).importable
    assert DataUploads(settings).expire() == []  # checked: it waits for its press
    assert desk.get(checking.id).mode == "replace"


# --- the validation report ----------------------------------------------------------------


def test_bad_prices_are_reported_and_one_does_not_hide_the_others(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """A zero bar imported without a word and switched the bad-print check off for the whole
    file; a high of 1e12 with a normal close was never looked at."""
    odd = bars.head(1000).copy().reset_index(drop=True)
    odd.loc[100, ["open", "high", "low", "close"]] = 0.0  # a zero print
    odd.loc[300, ["open", "high", "low", "close"]] /= 10  # a misplaced decimal point
    odd.loc[500, "high"] = 1e12  # a wild high, the close as usual
    odd.loc[700, "low"] = odd.loc[700, "low"] / 2
    report = import_file(bf.plain_csv(tmp_path / "odd.csv", odd), "NQ", settings).report

    prices = odd[["open", "high", "low", "close"]]
    body_top = prices[["open", "close"]].max(axis=1)
    body_bottom = prices[["open", "close"]].min(axis=1)
    far = (prices["high"] > body_top * np.exp(0.10)) | (prices["low"] < body_bottom * np.exp(-0.10))
    far &= (prices > 0).all(axis=1)
    assert report.count("prices at or below zero") == int((prices <= 0).any(axis=1).sum()) == 1
    assert report.count("far highs or lows") == int(far.sum()) == 2
    assert report.count("jumps") == 1  # the tenfold print, no longer hidden by the zero bar
    shown = {c.name: [f.line for f in c.shown] for c in report.warnings}
    assert shown["prices at or below zero"] == [102]
    assert shown["far highs or lows"] == [502, 702]
    assert shown["jumps"] == [302]
    assert stored(settings)["high"].max() == odd["high"].max()  # reported, not refused


def test_an_infinite_price_or_a_volume_beyond_int64_is_refused(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """'inf' read as a price (the day's high then read NaN in queries), and a volume of
    1e20 was stored as -9223372036854775808."""
    lines = bf.plain_csv(tmp_path / "bars.csv", bars.head(50)).read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[11].split(",")
    cells[header.index("high")] = "inf"
    lines[11] = ",".join(cells)
    cells = lines[21].split(",")
    cells[header.index("volume")] = "99999999999999999999"
    lines[21] = ",".join(cells)
    path = tmp_path / "odd.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportRefused) as refused:
        import_file(path, "NQ", settings)
    assert str(refused.value).endswith(
        "line 12: high inf is not a price. (1 more problem in the report)"
    )
    text = refused.value.report.text()
    assert "line 22: volume 1e+20 is beyond what Barb can store (9.22e+18)." in text
    assert not data_path("NQ", settings).exists()


def test_bars_after_now_are_reported(tmp_path: Path, settings: EngineSettings) -> None:
    """A file of 2031 imported in 2026 without a word."""
    later = bf.week_of_bars(first_sunday=dt.date(2090, 3, 19), days=1)
    assert later["timestamp"].iloc[0].day_name() == "Sunday"
    report = check_file(bf.plain_csv(tmp_path / "later.csv", later), "NQ", settings).report
    assert report.ok
    assert report.count("bars after now") == len(later)
    assert "line 2: 2090-03-19 18:00:00 is after now (" in report.text()
    this_week = check_file(bf.plain_csv(tmp_path / "b.csv", bf.week_of_bars()), "NQ", settings)
    assert this_week.report.count("bars after now") == 0


def test_out_of_memory_is_one_sentence_and_writes_nothing(
    tmp_path: Path,
    settings: EngineSettings,
    bars: pd.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 350 MB CSV needs about 1.6 GB; short of it the import ended in pyarrow's
    ArrowMemoryError traceback."""
    path = bf.plain_csv(tmp_path / "bars.csv", bars)

    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(formats, "read_csv", no_memory)
    done = CliRunner().invoke(data_cli, ["import", str(path), "-i", "NQ"], obj=settings)
    assert done.exit_code == 1
    assert done.output.startswith(f"Error: {path}: not enough memory to read it (")
    assert "nothing was written" in done.output and len(done.output.splitlines()) == 1
    assert not data_path("NQ", settings).exists()

    # Short of memory only for the Arrow copy, made after the Parquet file is in place: the
    # import is done (the copy is made at the first load), and says so.
    monkeypatch.undo()
    monkeypatch.setattr(mapped, "write_mapped", no_memory)
    done = CliRunner().invoke(data_cli, ["import", str(path), "-i", "NQ"], obj=settings)
    assert done.exit_code == 0, done.output
    assert f"NQ: wrote {len(bars):,} bars" in done.output
    assert_same_bars(settings, bars)


def test_report_counts_every_problem_and_names_lines(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    bad = bars.head(200).copy()
    bad.loc[5, "high"] = bad.loc[5, "low"] - 1  # OHLC inconsistent: file line 7
    bad.loc[50, "timestamp"] = bad.loc[49, "timestamp"]  # duplicate: line 52
    bad.loc[100, "high"] = bad.loc[100, "low"] - 1  # line 102
    path = bf.plain_csv(tmp_path / "bad.csv", bad)
    checked = check_file(path, "NQ", settings)
    assert not checked.report.ok
    assert checked.report.count("OHLC inconsistent") == 2
    assert checked.report.count("duplicates") == 1
    text = checked.report.text()
    assert "line 7: high" in text and "line 102: high" in text and "line 52: duplicate" in text
    with pytest.raises(ImportRefused) as refused:
        import_file(path, "NQ", settings)
    assert refused.value.line == 7
    assert "(2 more problems in the report)" in str(refused.value)
    assert not data_path("NQ", settings).exists()


def test_report_flags_jumps_gaps_and_missing_dates_without_refusing(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    day = bars["timestamp"].dt.tz_localize(None)
    hole = (day >= pd.Timestamp("2024-03-19 10:00")) & (day < pd.Timestamp("2024-03-19 11:00"))
    thursday = (day >= pd.Timestamp("2024-03-20 18:00")) & (day < pd.Timestamp("2024-03-21 17:00"))
    odd = bars[~(hole | thursday)]
    odd = odd.reset_index(drop=True)
    spike = 300
    for column in ("open", "high", "low", "close"):
        odd.loc[spike, column] = odd.loc[spike, column] * 10  # a misplaced decimal point
    result = import_file(bf.plain_csv(tmp_path / "odd.csv", odd), "NQ", settings)
    report = result.report
    assert report.ok
    assert report.count("jumps") == 1  # the bad print, not the way back from it
    assert report.warnings[0].shown[0].line == spike + 2
    assert report.missing_dates == [dt.date(2024, 3, 21)]
    assert report.gap_count == 1
    assert report.gaps == ["2024-03-19 09:59:00 to 2024-03-19 11:00:00"]
    assert report.sessions["ETH"] == 1.0
    text = report.text()
    assert "Suspicious: jumps: 1" in text
    assert "Trading dates of the exchange calendar with no bars: 1 (2024-03-21)" in text


def test_cli_prints_the_report_and_check_writes_nothing(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    path = bf.plain_csv(tmp_path / "chicago.csv", bars, "America/Chicago")
    runner = CliRunner()
    checked = runner.invoke(data_cli, ["import", str(path), "-i", "NQ", "--check"], obj=settings)
    assert checked.exit_code == 0, checked.output
    assert "Times read as Chicago time (America/Chicago)" in checked.output
    assert not data_path("NQ", settings).exists()
    done = runner.invoke(data_cli, ["import", str(path), "-i", "NQ"], obj=settings)
    assert done.exit_code == 0, done.output
    assert "NQ: wrote 6,900 bars" in done.output
    again = runner.invoke(data_cli, ["import", str(path), "-i", "NQ"], obj=settings)
    assert again.exit_code == 1
    assert "already has data imported from chicago.csv" in again.output


def test_check_refuses_what_the_import_would_and_writes_nothing(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    day = bars["timestamp"].dt.tz_localize(None)
    first_three = bars[day < pd.Timestamp("2024-03-20 17:00")]
    from_third = bars[day >= pd.Timestamp("2024-03-19 18:00")]
    import_file(bf.plain_csv(tmp_path / "mon-wed.csv", first_three), "NQ", settings)
    before = data_path("NQ", settings).read_bytes()
    wrong = from_third.copy()
    wrong.loc[wrong.index[10], "close"] += 0.25
    bad = bf.plain_csv(tmp_path / "bad.csv", wrong)
    good = bf.plain_csv(tmp_path / "good.csv", from_third)
    fives = bf.plain_csv(tmp_path / "fives.csv", bf.week_of_bars(step_minutes=5))
    runner = CliRunner()
    cases = [
        ([str(good)], "already has data imported from mon-wed.csv"),
        ([str(bad), "--append"], "overlaps the stored data and disagrees with it"),
        ([str(fives), "--append", "--interval", "5m"], "the stored bars are 1-minute bars"),
    ]
    for args, refusal in cases:
        real = runner.invoke(data_cli, ["import", *args, "-i", "NQ"], obj=settings)
        checked = runner.invoke(data_cli, ["import", *args, "-i", "NQ", "--check"], obj=settings)
        assert real.exit_code == checked.exit_code == 1, (args, checked.output)
        assert refusal in real.output and refusal in checked.output
        # The report, then the refusal: it ended "No problems that stop the import." above
        # the refusal, which contradicted it.
        for run in (real, checked):
            assert "Times read as New York time" in run.output
            assert "No problems that stop the import." not in run.output
            assert run.output.rstrip().splitlines()[-1].startswith("Error: ")
        assert data_path("NQ", settings).read_bytes() == before
    ok = runner.invoke(
        data_cli, ["import", str(good), "-i", "NQ", "--append", "--check"], obj=settings
    )
    assert ok.exit_code == 0, ok.output
    new_bars = (day >= pd.Timestamp("2024-03-20 17:00")).sum()
    assert f"the import would write {new_bars:,} bars; nothing was written" in ok.output
    assert data_path("NQ", settings).read_bytes() == before


def test_a_file_too_big_for_the_free_memory_is_refused_before_it_is_read(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2 GB file was read whole (about 4.2 bytes of memory per byte of CSV, 8.5 GB) until
    the kernel killed the import: the person read "Killed". With less memory free than the
    read takes (``READ_FACTOR``), it is refused before reading, in one sentence with the
    way through; the stored data stays as it was."""
    import_file(bf.plain_csv(tmp_path / "first.csv", bars.iloc[:1000]), "NQ", settings)
    before = data_path("NQ", settings).read_bytes()
    path = bf.plain_csv(tmp_path / "big.csv", bars)
    size = path.stat().st_size
    monkeypatch.setattr(importer, "available_memory", lambda: 2 * size)
    runner = CliRunner()
    result = runner.invoke(data_cli, ["import", str(path), "-i", "NQ", "--replace"], obj=settings)
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {path}: the file is {round(size / 1e6)} MB, and reading it takes about "
        f"{round(2.75 * size / 1e6)} MB of memory, while {round(2 * size / 1e6)} MB are free; "
        "nothing was read or written. Import it in parts: the first with --replace, the "
        "others with --append.\n"
    )
    with pytest.raises(DataError, match="Send it in parts, each file starting where"):
        check_file(path, "NQ", settings, advice="caption")
    # Read as its numbers, the file takes about 2 bytes a byte (bench/import_memory.py): it
    # was refused with 4 times its size free, which it fits in; so do a file of decimal
    # commas and one of times with their offset, now read batch by batch too (they took
    # 5, and were refused). A file still held as text while read (IB's times naming EST or
    # EDT) needs 5.5.
    monkeypatch.setattr(importer, "available_memory", lambda: 4 * size)
    assert check_file(path, "NQ", settings).frame is not None
    european = tmp_path / "eu.csv"
    bars.assign(timestamp=bars["timestamp"].dt.strftime("%d.%m.%Y %H:%M")).to_csv(
        european, sep=";", decimal=",", index=False
    )
    monkeypatch.setattr(importer, "available_memory", lambda: 4 * european.stat().st_size)
    assert check_file(european, "NQ", settings).frame is not None
    offsets = tmp_path / "offsets.csv"
    bars.assign(timestamp=bars["timestamp"].map(lambda t: t.isoformat())).to_csv(
        offsets, index=False
    )
    monkeypatch.setattr(importer, "available_memory", lambda: 4 * offsets.stat().st_size)
    assert check_file(offsets, "NQ", settings).frame is not None
    ib = tmp_path / "ib.csv"
    bars.assign(
        timestamp=bars["timestamp"].dt.strftime("%Y%m%d %H:%M:%S EDT"), average=1, barCount=1
    ).rename(columns={"timestamp": "date"}).to_csv(ib, index=False)
    monkeypatch.setattr(importer, "available_memory", lambda: 4 * ib.stat().st_size)
    with pytest.raises(DataError, match="reading it takes about"):
        check_file(ib, "NQ", settings)
    assert data_path("NQ", settings).read_bytes() == before
    assert data_path("NQ", settings).read_bytes() == before
    monkeypatch.setattr(importer, "available_memory", lambda: 5 * size)
    import_file(path, "NQ", settings, mode="replace")
    assert_same_bars(settings, bars)


def test_a_replace_run_again_keeps_the_data_from_before_it(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    """The same --replace run twice (a command run again from the shell's history) wrote
    the same bars again and deleted the file kept from before the first run, the only way
    back to that data, for a copy of the bars just written. The second run writes nothing
    and says so; restore still brings the data before the first."""
    import_file(bf.plain_csv(tmp_path / "old.csv", bars.iloc[:2000]), "NQ", settings)
    path = bf.plain_csv(tmp_path / "new.csv", bars)
    runner = CliRunner()
    args = ["import", str(path), "-i", "NQ", "--replace"]
    first = runner.invoke(data_cli, args, obj=settings)
    assert first.exit_code == 0, first.output
    written = data_path("NQ", settings).read_bytes()
    kept = previous_path(data_path("NQ", settings)).read_bytes()
    again = runner.invoke(data_cli, args, obj=settings)
    assert again.exit_code == 0, again.output
    assert again.output.rstrip().endswith(
        "NQ: the stored data already holds exactly the file's bars; "
        f"{data_path('NQ', settings)} is unchanged, and so is the file kept from before."
    )
    assert "is deleted" not in again.output
    assert data_path("NQ", settings).read_bytes() == written
    assert previous_path(data_path("NQ", settings)).read_bytes() == kept
    store.restore_previous(data_path("NQ", settings))
    assert len(stored(settings)) == 2000
    # A file that differs in one volume is a replace like any other.
    store.restore_previous(data_path("NQ", settings))
    other = bars.copy()
    other.loc[5, "volume"] += 1
    changed = import_file(bf.plain_csv(tmp_path / "v.csv", other), "NQ", settings, mode="replace")
    assert changed.added == len(bars) and changed.kept


def test_daily_bars_are_refused_with_the_lengths_barb_takes(
    tmp_path: Path, settings: EngineSettings
) -> None:
    days = pd.bdate_range("2024-01-02", periods=30)
    text = "timestamp,open,high,low,close,volume\n" + "".join(
        f"{d:%Y-%m-%d} 18:00:00,100,101,99,100.5,1000\n" for d in days
    )
    path = tmp_path / "daily.csv"
    path.write_text(text)
    with pytest.raises(DataError, match="Barb imports intraday bars of 1, 5, 15, 30, 60"):
        import_file(path, "NQ", settings, interval="1h")
    assert not data_path("NQ", settings).exists()


def test_a_fast_real_move_is_not_a_bad_print(
    tmp_path: Path, settings: EngineSettings, bars: pd.DataFrame
) -> None:
    moved = bars.copy()
    k = 3000
    for column in ("open", "high", "low", "close"):  # a 3% drop that stays: news, not a print
        moved.loc[k:, column] = moved.loc[k:, column] - 540
    moved.loc[k, "open"] = moved.loc[k - 1, "close"]
    moved.loc[k, "high"] = moved.loc[k, "open"]
    result = check_file(bf.plain_csv(tmp_path / "news.csv", moved), "NQ", settings)
    assert result.report.ok and result.report.count("jumps") == 0

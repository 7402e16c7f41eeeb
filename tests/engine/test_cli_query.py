"""`barb query`: the summary and rows on success, the error value and exit 1 on failure."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from barb.cli import main


@pytest.fixture
def run(engine_settings, monkeypatch):
    monkeypatch.setenv("BARB_DATA_DIR", str(engine_settings.data_dir))
    monkeypatch.setattr("barb.interpreter.default_settings", lambda: engine_settings)

    def invoke(*args: str):
        return CliRunner().invoke(main, ["query", *args])

    return invoke


def test_prints_the_summary_and_rows(run) -> None:
    out = run('{"session": "RTH", "from": "daily", "select": "mean(range)"}')
    assert out.exit_code == 0, out.output
    assert "Result: mean_range = " in out.output
    assert "rows behind the number" in out.output
    assert "SYNTHETIC" in out.output


def test_json_flag_prints_the_whole_result(run) -> None:
    out = run('{"session": "RTH", "from": "daily", "select": "count()"}', "--json")
    payload = json.loads(out.output)
    assert payload["summary"]["type"] == "scalar"
    assert payload["metadata"]["session"] == "RTH"
    assert len(payload["source_rows"]) == payload["summary"]["value"]
    # and the text the model reads, which names the number
    assert f"{payload['summary']['value']}" in payload["summary_text"]


def test_query_error_exits_1_with_the_error_value(run) -> None:
    out = run('{"session": "RTH", "where": "rnage > 5"}')
    assert out.exit_code == 1
    payload = json.loads(out.output)
    assert payload["error_type"] == "UnknownColumn"
    assert "Traceback" not in out.output


def test_bad_json_exits_1_without_traceback(run) -> None:
    out = run("{session: RTH")
    assert out.exit_code == 1
    assert json.loads(out.output)["error_type"] == "InvalidJSON"


def test_a_key_written_twice_is_an_error_not_the_last_one(run) -> None:
    """JSON keeps the last of two "where"s: a condition the person confirmed was dropped
    with nothing said (p31a Q18). Nested objects too (a map's column written twice)."""
    out = run('{"session": "RTH", "where": "not holiday()", "where": "close > open"}')
    assert out.exit_code == 1
    error = json.loads(out.output)
    assert error["error_type"] == "InvalidJSON"
    assert error["message"] == 'The query names "where" twice; JSON keeps only the last one.'
    assert "joined with and" in error["hint"]
    nested = run('{"map": {"r": "range", "r": "close - open"}, "select": "mean(r)"}')
    assert nested.exit_code == 1 and '"r" twice' in json.loads(nested.output)["message"]


def test_writes_csv_and_chart(run, tmp_path) -> None:
    csv, png = tmp_path / "out.csv", tmp_path / "out.png"
    query = '{"session": "RTH", "from": "daily", "map": {"weekday": "dayname()"}, '
    query += '"group_by": "weekday", "select": "mean(range)"}'
    out = run(query, "--csv", str(csv), "--chart", str(png))
    assert out.exit_code == 0, out.output
    lines = csv.read_text(encoding="utf-8-sig").splitlines()
    assert lines[0] == "weekday,mean_range,source"
    assert len(lines) == 6
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_lang_writes_the_csv_a_chat_in_that_language_gets(run, tmp_path, engine_settings) -> None:
    """p47d D11: `barb query --csv` wrote English always. --lang ru writes the bot's file for
    a Russian chat (its words, ';' and decimal commas), the same bytes; English by default."""
    from barb.export import csv_bytes
    from barb.interpreter import execute

    query = {"session": "RTH", "from": "daily", "map": {"day": "dayname()"}}
    query |= {"group_by": "day", "select": "mean(range)"}
    russian, english = tmp_path / "ru.csv", tmp_path / "en.csv"
    out = run(json.dumps(query), "--csv", str(russian), "--lang", "ru")
    assert out.exit_code == 0, out.output
    bot = csv_bytes(execute(query, "NQ", settings=engine_settings), "ru")
    assert russian.read_bytes() == bot
    lines = russian.read_text(encoding="utf-8-sig").splitlines()
    # Headed in the chart's words (a Russian file read "day;mean_range"), the English file
    # in the engine's names.
    assert lines[0] == "день недели;средний диапазон;источник"
    assert "," in lines[1].split(";")[1]  # the mean, with a decimal comma
    assert run(json.dumps(query), "--csv", str(english)).exit_code == 0
    assert english.read_text(encoding="utf-8-sig").splitlines()[0] == "day,mean_range,source"
    assert "--lang [en|ru]" in run("--help").output


def test_a_query_past_the_time_limit_is_stopped_with_an_error_value(run, monkeypatch) -> None:
    """The bot's limit (BARB_QUERY_TIMEOUT_S) applies to `barb query` too, by an alarm."""
    from barb.script.limits import default_limits

    monkeypatch.setenv("BARB_QUERY_TIMEOUT_S", "0.001")
    default_limits.cache_clear()
    try:
        # Minutes of rolling statistics over three months of 1m bars: far more than 1 ms.
        heavy = {"from": "1m", "map": {"s": "rolling_std(close, 500)"}, "select": "mean(s)"}
        out = run(json.dumps(heavy))
    finally:
        monkeypatch.delenv("BARB_QUERY_TIMEOUT_S")
        default_limits.cache_clear()
    assert out.exit_code == 1, out.output
    error = json.loads(out.output)
    assert error["error_type"] == "QueryTimeout"
    assert error["message"] == "The query took longer than 0.001 seconds and was stopped."
    assert error["hint"] == "try a shorter period or a longer timeframe"
    # The next query in the same process runs as usual: the alarm is gone.
    assert run('{"session": "RTH", "from": "daily", "select": "count()"}').exit_code == 0


def test_the_command_starts_without_the_assistant_s_libraries() -> None:
    """``barb query`` and ``barb data`` took 4.0 s to start, loading Telegram, SQLAlchemy and
    Alembic for commands they never run; the assistant's commands are imported when run."""
    probe = (
        "import sys; from bot.cli import main; "
        "heavy = [m for m in ('telegram', 'sqlalchemy', 'alembic', 'openai', 'anthropic') "
        "if m in sys.modules]; "
        "assert not heavy, heavy; "
        "assert {'bot', 'chat', 'db', 'eval', 'worker', 'query', 'data'} <= "
        "set(main.list_commands(None)); "
        "assert main.get_command(None, 'db').name == 'db'; "
        "assert 'sqlalchemy' in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_streak_s_first_row_reads_n_a_and_whole_runs_as_whole_numbers(run) -> None:
    """The rows behind max(run) read "run NaN" on the data's first day (no bar before it,
    so no run) beside runs of "1.0", "2.0": the summary says "n/a" and whole numbers. Each
    run is checked against the closes the same table shows."""
    query = {
        "session": "RTH",
        "from": "daily",
        "map": {"run": "streak(close > prev(close))"},
        "select": "max(run)",
    }
    out = run(json.dumps(query))
    assert out.exit_code == 0, out.output
    table = out.output.split("rows behind the number")[1].splitlines()[1:]
    header, rows = table[0].split(), [line.split() for line in table[1:] if line.strip()]
    closes = [float(row[header.index("close")]) for row in rows]
    runs = [row[header.index("run")] for row in rows]
    assert "NaN" not in out.output and runs[0] == "n/a"
    expected, streak = [], 0
    for before, close in itertools.pairwise(closes):
        streak = streak + 1 if close > before else 0
        expected.append(str(streak))
    assert runs[1:] == expected


MEAN_RANGE = '{"session": "RTH", "from": "daily", "select": "mean(range)"}'


def test_a_full_disk_under_the_csv_is_one_error_value_not_a_traceback(run) -> None:
    """``/dev/full`` answers every write with ENOSPC, as a full disk does. Before: the
    summary, then a traceback ending in "OSError: [Errno 28] No space left on device"."""
    out = run(MEAN_RANGE, "--csv", "/dev/full")
    assert out.exit_code == 1
    assert "Result: mean_range = " in out.output  # the numbers were printed first
    error = json.loads(out.output[out.output.index("\n{") :])
    assert error["error_type"] == "WriteFailed"
    assert error["message"] == (
        "Could not write the CSV to /dev/full: No space left on device. "
        "The result above is complete."
    )
    assert "Traceback" not in out.output and out.exception.__class__ is SystemExit


def test_a_csv_cut_short_by_the_disk_is_removed_not_left_looking_whole(
    engine_settings, tmp_path
) -> None:
    """The real ``barb query`` with a file size limit of 300 bytes (``RLIMIT_FSIZE``: the
    write fails part way, as when the disk fills during it). Before: a traceback and a CSV
    of its first 300 bytes left on disk, a file that reads as a shorter result."""
    import resource

    out = tmp_path / "out.csv"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))

    done = subprocess.run(
        [
            *(sys.executable, "-c", "from barb.cli import main; main()"),
            *("query", MEAN_RANGE, "--csv", str(out)),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "BARB_DATA_DIR": str(engine_settings.data_dir)},
        preexec_fn=small_files,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Result: mean_range = " in done.stdout
    assert f"Could not write the CSV to {out}: File too large." in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert not out.exists()

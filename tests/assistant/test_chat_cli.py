"""`barb chat` in a terminal: confirm gate as Run? [Y/n], proof files, the same database."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

from click.testing import CliRunner

from bot.assistant.replies import Proof
from bot.chat_cli import save_proof
from bot.cli import main

SCRIPT = """
- tool: get_query_reference
- text: I'll compute the average RTH range by weekday.
  tool: execute_query
  args:
    query: {"session": "RTH", "from": "daily", "map": {"weekday": "dayname()"},
            "group_by": "weekday", "select": "mean(range)"}
- text: Friday has the widest range.
- tool: ask_user_clarification
  args: {question_text: "RTH or ETH?", suggested_replies: ["RTH", "ETH"]}
- text: RTH it is.
"""


def test_chat_runs_a_question_end_to_end(tmp_path, sample_settings) -> None:
    """In a process of its own, as a person would run it (it owns its event loop)."""
    db_file = tmp_path / "chat.db"
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    out = tmp_path / "out"
    env = {**os.environ, "BARB_DATABASE_URL": f"sqlite+aiosqlite:///{db_file}"}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from bot.cli import main; main()",
            "chat",
            "--script",
            str(script),
            "--out",
            str(out),
        ],
        input="average range by weekday?\ny\naverage range\n1\n:prefs\n:quit\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    output = result.stdout
    assert result.returncode == 0, result.stderr
    assert "Plan:\nCompute: average range, by weekday" in output
    assert "Run? [Y/n]" in output
    assert "Barb: Friday has the widest range." in output
    assert "1. RTH" in output and "Barb: RTH it is." in output
    assert "(no preferences remembered)" in output
    pngs, csvs = list(out.glob("*.png")), list(out.glob("*.csv"))
    assert len(pngs) == 1 and pngs[0].read_bytes()[:4] == b"\x89PNG"
    assert csvs[0].read_text(encoding="utf-8-sig").startswith("weekday,mean_range")
    # The conversation is in the same database the bot uses.
    with sqlite3.connect(db_file) as db:
        rows = db.execute("SELECT count(*) FROM messages WHERE chat_id = 0").fetchone()[0]
    assert rows >= 6


def test_chat_without_a_key_says_what_to_set(monkeypatch) -> None:
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "BARB_LLM_PROVIDER",
    ):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(main, ["chat"])
    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY" in result.output and "OPENAI_BASE_URL" in result.output
    assert "barb query" in result.output
    assert "Traceback" not in result.output


def a_proof() -> Proof:
    """A chart of 5,000 bytes and a CSV of a few: a 300-byte file size limit cuts the chart
    part way and lets the CSV through."""
    return Proof(
        query={},
        plan="",
        summary_text="Result: mean_range = 312.5",
        chart_png=b"\x89PNG" + bytes(5_000),
        chart_name="chart.png",
        csv=b"mean_range\n312.5\n",
        csv_name="result.csv",
    )


def test_a_full_disk_under_the_chart_is_one_line_and_the_chat_goes_on(tmp_path) -> None:
    """``/dev/full`` answers every write with ENOSPC, as a full disk does. Before: a
    traceback ("OSError: [Errno 28] No space left on device") ended ``barb chat`` before
    the model's answer was shown."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "chart.png").symlink_to("/dev/full")
    lines = save_proof(a_proof(), out)
    assert lines == [
        "\n[Result: mean_range = 312.5]",
        f"  chart: not written to {out / 'chart.png'}: No space left on device. "
        "The answer is complete without it.",
        f"  csv:   {out / 'result.csv'}",
    ]
    assert (out / "result.csv").read_bytes() == b"mean_range\n312.5\n"


def test_a_chart_cut_short_by_the_disk_is_removed_not_left_half_written(tmp_path) -> None:
    """The real write under a file size limit of 300 bytes (``RLIMIT_FSIZE``, in a process
    of its own): it fails part way, as when the disk fills during it. Before: a traceback
    and a PNG of its first 300 bytes left in the output directory."""
    import resource

    out = tmp_path / "out"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))

    code = (
        "import sys; from pathlib import Path; "
        "from tests.assistant.test_chat_cli import a_proof; "
        "from bot.chat_cli import save_proof; "
        "print(*save_proof(a_proof(), Path(sys.argv[1])), sep='\\n')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        capture_output=True,
        text=True,
        preexec_fn=small_files,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"  chart: not written to {out / 'chart.png'}: File too large." in done.stdout
    assert not (out / "chart.png").exists()
    assert (out / "result.csv").read_bytes() == b"mean_range\n312.5\n"

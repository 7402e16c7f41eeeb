"""`barb chat` in a terminal: confirm gate as Run? [Y/n], proof files, the same database."""

from __future__ import annotations

import asyncio

from click.testing import CliRunner

from bot.cli import main
from bot.store.db import open_store
from bot.store.settings import StoreSettings

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


def test_chat_runs_a_question_end_to_end(tmp_path, monkeypatch, sample_settings) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}"
    monkeypatch.setenv("BARB_DATABASE_URL", db)
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        ["chat", "--script", str(script), "--out", str(out)],
        input="average range by weekday?\ny\naverage range\n1\n:prefs\n:quit\n",
    )
    assert result.exit_code == 0, result.output
    assert "Plan:\nCompute: average range, by weekday" in result.output
    assert "Run? [Y/n]" in result.output
    assert "Barb: Friday has the widest range." in result.output
    assert "1. RTH" in result.output and "Barb: RTH it is." in result.output
    assert "(no preferences remembered)" in result.output
    pngs, csvs = list(out.glob("*.png")), list(out.glob("*.csv"))
    assert len(pngs) == 1 and pngs[0].read_bytes()[:4] == b"\x89PNG"
    assert csvs[0].read_text().startswith("weekday,mean_range")

    async def transcript_rows() -> int:
        store = await open_store(StoreSettings(database_url=db))
        try:
            return len(await store.transcript.recent(0, 10))
        finally:
            await store.close()

    assert asyncio.run(transcript_rows()) >= 6


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

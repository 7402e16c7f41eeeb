"""`barb eval` against a real provider adapter: the official OpenAI SDK talking to a fake
OpenAI-compatible server on 127.0.0.1 (what a local vLLM or llama.cpp server looks like)."""

from __future__ import annotations

import json

import pytest
from cli_thread import invoke_cli
from llm_fake_api import OPENAI_PATH, FakeAPIServer, openai_completion
from minute_bars import daily

pytestmark = pytest.mark.slow

QUERY = {"session": "RTH", "from": "daily", "select": "mean(range)"}


def test_eval_runs_a_real_adapter_and_prices_it(eval_settings, tmp_path, monkeypatch) -> None:
    expected = float(daily("NQ", "RTH")["range"].mean())
    questions = tmp_path / "one.yaml"
    questions.write_text(
        f"""
- id: mean_range
  lang: ru
  question: Какой средний дневной диапазон NQ в RTH?
  query: {json.dumps(QUERY)}
  expected: [{expected}]
""",
        encoding="utf-8",
    )
    server = FakeAPIServer().start()
    try:
        server.queue(
            OPENAI_PATH,
            openai_completion(
                "Посчитаю средний диапазон.",
                tool_calls=[("call_a", "execute_query", json.dumps({"query": QUERY}))],
                prompt_tokens=1200,
                completion_tokens=40,
            ),
            openai_completion(
                f"Средний диапазон — {expected:.1f} пункта".replace(".", ",")
                + " (синтетические данные).",
                prompt_tokens=1500,
                completion_tokens=30,
            ),
        )
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        outcome = invoke_cli(
            [
                "eval",
                "--provider",
                "openai",
                "--model",
                "gpt-4o-mini",
                "--questions",
                str(questions),
                "--out",
                str(tmp_path / "out"),
            ],
        )
    finally:
        server.stop()

    assert outcome.exit_code == 0, outcome.output
    assert "Score: 1/1 passed (100.0%) with openai gpt-4o-mini" in outcome.output
    report = json.loads((tmp_path / "out" / "eval_report.json").read_text(encoding="utf-8"))
    [result] = report["results"]
    assert result["status"] == "pass" and result["seen"] and result["said"]
    assert (result["input_tokens"], result["output_tokens"]) == (2700, 70)
    assert result["cost_usd"] > 0
    # The model got the real prompt and tools, then the engine's summary (never raw rows).
    first, second = server.requests_to(OPENAI_PATH)
    assert "execute_query" in {tool["function"]["name"] for tool in first.body["tools"]}
    tool_message = second.body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"].startswith("Result: mean_range = ")

"""How `barb eval` scores a model: through the real assistant, engine and store, with models
scripted to be right, to guess, to misreport, to ask back, and to break."""

from __future__ import annotations

import json

import pytest
from minute_bars import daily, in_year

from bot.eval import features
from bot.eval.features import Feature
from bot.eval.question_set import EvalQuestion
from bot.eval.reference_model import ReferenceProvider
from bot.eval.report import EvalReport, markdown, write_reports
from bot.eval.runner import EvalRunner
from bot.llm.messages import Usage
from bot.llm.pricing import PriceTable
from bot.llm.scripted import ScriptedProvider, text, tool_call, turn

RANGE_2024 = {"session": "RTH", "from": "daily", "period": "2024", "select": "mean(range)"}


@pytest.fixture(scope="module")
def expected(eval_settings) -> float:
    """NQ's mean RTH range in 2024, from the minute bars by hand."""
    return float(in_year(daily("NQ", "RTH"), 2024)["range"].mean())


@pytest.fixture
def question(expected):
    def build(qid: str = "q", lang: str = "en", **extra) -> EvalQuestion:
        fields = {
            "id": qid,
            "lang": lang,
            "question": "Average RTH range of NQ in 2024?",
            "query": RANGE_2024,
            "expected": [expected],
            "tolerance": 0.002,
        }
        return EvalQuestion.model_validate(fields | extra)

    return build


def asked(query: dict) -> dict:
    """The query as the model wrote it: the assistant may fill in the chat's instrument."""
    return {k: v for k, v in query.items() if k != "instrument" or v != "NQ"}


def say_what_you_saw(request) -> str:
    return "It was " + request.last_message.tool_results[0].content.split("=")[1].split()[0]


async def run(provider, questions, eval_settings):
    runner = EvalRunner(provider, engine_settings=eval_settings)
    return await runner.run(questions)


async def test_a_grounded_correct_answer_passes_with_its_costs(
    eval_settings, question, expected
) -> None:
    provider = ScriptedProvider(
        [
            turn("Running it.", tool_call("execute_query", query=RANGE_2024)),
            say_what_you_saw,
        ],
        model="claude-sonnet-4-5",
        usage=Usage(input_tokens=1000, output_tokens=100),
        prices=PriceTable.default(),
    )
    [result] = await run(provider, [question()], eval_settings)
    assert result.status == "pass", result
    assert result.seen and result.said
    assert result.got == [pytest.approx(expected, rel=1e-4)]
    assert result.tool_calls == 1 and result.model_calls == 2
    assert (result.input_tokens, result.output_tokens) == (2000, 200)
    assert result.cost_usd is not None and result.cost_usd > 0
    assert [asked(q) for q in result.queries] == [RANGE_2024]


async def test_a_right_number_without_a_query_is_a_guess(eval_settings, question, expected) -> None:
    provider = ScriptedProvider([text(f"It was about {expected:.1f} points.")])
    [result] = await run(provider, [question()], eval_settings)
    assert result.status == "fail"
    assert result.said and not result.seen
    assert result.tool_calls == 0


async def test_a_misreported_result_fails_as_seen_not_said(
    eval_settings, question, expected
) -> None:
    provider = ScriptedProvider(
        [turn(tool_call("execute_query", query=RANGE_2024)), text("It was 129.6 points.")]
    )
    [result] = await run(provider, [question()], eval_settings)
    assert result.status == "fail"
    assert result.seen and not result.said
    assert result.got == [None]
    report = EvalReport(
        provider="scripted",
        model="m",
        questions_file="x",
        started_at="2026-01-01T00:00:00Z",
        results=[result],
    )
    assert "fail (seen, not said)" in markdown(report)
    assert "It was 129.6 points." in markdown(report)


async def test_russian_decimal_comma_and_a_clarification(eval_settings, question, expected) -> None:
    provider = ScriptedProvider(
        [
            tool_call(
                "ask_user_clarification",
                question_text="Какую сессию взять?",
                suggested_replies=["RTH", "ETH"],
            ),
            turn(tool_call("execute_query", query=RANGE_2024)),
            text(f"Средний диапазон — {expected:.1f} пункта.".replace(".", ",", 1)),
        ]
    )
    [result] = await run(provider, [question(lang="ru")], eval_settings)
    assert result.status == "pass", result
    # The clarification was answered, in the question's language.
    [answer] = [r for m in provider.requests[1].messages for r in m.tool_results]
    assert "обычное понимание" in answer.content


async def test_a_broken_question_does_not_end_the_run(eval_settings, question, expected) -> None:
    def explode(request):
        raise RuntimeError("bug in a provider adapter")

    provider = ScriptedProvider(
        [
            explode,
            turn(tool_call("execute_query", query=RANGE_2024)),
            say_what_you_saw,
        ]
    )
    first, second = await run(provider, [question("a"), question("b")], eval_settings)
    assert first.status == "error" and "RuntimeError" in first.note
    assert second.status == "pass"


async def test_follow_up_is_scored_on_its_last_turn(eval_settings, question, expected) -> None:
    follow_up = EvalQuestion.model_validate(
        {
            "id": "f",
            "lang": "en",
            "turns": [
                {"question": "Average RTH range of NQ in 2024?", "query": RANGE_2024},
                {"question": "And in 2023?", "query": {**RANGE_2024, "period": "2023"}},
            ],
            "expected": [expected],
            "tolerance": 0.005,
        }
    )
    # The reference model answers the last turn about 2023, so 2024's number is not there.
    [result] = await run(ReferenceProvider(), [follow_up], eval_settings)
    assert result.status == "fail" and not result.seen
    assert result.tool_calls == 2
    assert [asked(q) for q in result.queries] == [{**RANGE_2024, "period": "2023"}]


async def test_questions_needing_a_missing_feature_are_skipped(
    eval_settings, question, monkeypatch, tmp_path
) -> None:
    missing = Feature("warp_drive", "not in any engine", {"session": "NOPE"})
    monkeypatch.setitem(features.FEATURES, "warp_drive", missing)
    questions = [question("a"), question("b", requires=["warp_drive"])]
    results = await run(ReferenceProvider(), questions, eval_settings)
    assert [r.status for r in results] == ["pass", "skipped"]
    assert "warp_drive" in results[1].note
    report = EvalReport(
        provider="scripted",
        model="scripted-reference",
        questions_file="x",
        started_at="2026-01-01T00:00:00Z",
        results=results,
    )
    assert report.summary_line().startswith("Score: 1/1 passed (100.0%)")
    assert "1 skipped until the engine has warp_drive" in report.summary_line()
    json_path, md_path = write_reports(report, tmp_path / "out")
    saved = json.loads(json_path.read_text(encoding="utf-8"))
    assert saved["totals"]["skipped"] == 1 and saved["totals"]["passed"] == 1
    assert [r["status"] for r in saved["results"]] == ["pass", "skipped"]
    assert "| b | en |" in md_path.read_text(encoding="utf-8")

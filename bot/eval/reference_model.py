"""The scripted model of the CI run: it asks each question's reference query and reports
the result it was given, the way a careful model would. So the whole set runs through the
real assistant loop, confirm gate, worker runner and result summaries with no key."""

from __future__ import annotations

from bot.eval.question_set import EvalQuestion
from bot.llm.messages import Message, ModelRequest
from bot.llm.scripted import ScriptedProvider, Turn, text, tool_call, turn

_PLAN = {
    "en": "I'll run the query for this.",
    "ru": "Посчитаю это запросом.",
}
_ANSWER = {
    "en": "On the synthetic sample:",
    "ru": "На синтетических данных:",
}


def _report(language: str):
    def answer(request: ModelRequest) -> Message:
        last = request.last_message
        seen = "\n".join(result.content for result in last.tool_results)
        return text(f"{_ANSWER[language]}\n{seen}")

    return answer


def reference_turns(question: EvalQuestion) -> list[Turn]:
    """Two model turns per person's turn: call execute_query, then report what came back."""
    turns: list[Turn] = []
    for step in question.turns:
        plan = _PLAN[question.lang]
        turns.append(turn(plan, tool_call("execute_query", query=step.query, explanation=plan)))
        turns.append(_report(question.lang))
    return turns


class ReferenceProvider(ScriptedProvider):
    """The reference model: the runner gives it each question's script before asking it."""

    def __init__(self, turns: list[Turn] | None = None) -> None:
        super().__init__(turns or [], model="scripted-reference")

    def for_question(self, question: EvalQuestion) -> ReferenceProvider:
        """A fresh one with ``question``'s script: a question that goes astray cannot leave
        turns behind for the next."""
        return ReferenceProvider(reference_turns(question))

"""Run the eval: each question through the real assistant, confirmations accepted, scored.

Each question gets a fresh chat on a throwaway store, with the question's instrument. A
question passes when every expected number is in the results the model saw (it was
computed, not guessed) and in the model's final text (it was said), each within the
question's tolerance.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from barb.settings import EngineSettings
from bot.assistant.orchestrator import Assistant, AssistantSettings
from bot.assistant.replies import Asker, Reply
from bot.eval.features import available
from bot.eval.numbers import find, numbers_in
from bot.eval.question_set import EvalQuestion
from bot.eval.reference_model import ReferenceProvider
from bot.llm.messages import Message, ModelResponse, ToolSpec, Usage
from bot.llm.provider import LLMProvider
from bot.pool.runner import InlineRunner
from bot.store.db import open_store
from bot.store.settings import StoreSettings

log = logging.getLogger(__name__)

Status = Literal["pass", "fail", "skipped", "error"]

# A model that asks the person to clarify gets this answer, at most this many times.
_CLARIFY_ANSWER = {
    "en": "Use the most usual reading of my question and compute it.",
    "ru": "Возьми самое обычное понимание вопроса и посчитай.",
}
_MAX_CLARIFICATIONS = 2


class QuestionResult(BaseModel):
    """One question's outcome: what was expected, what the model saw and said, its cost."""

    id: str
    lang: str
    instrument: str
    question: str
    tags: list[str]
    expected: list[float]
    tolerance: float
    status: Status
    # Every expected number found in the results the model saw / in its final text.
    seen: bool = False
    said: bool = False
    # Per expected number: the closest matching number of the final text, or None.
    got: list[float | None] = Field(default_factory=list)
    answer: str | None = None
    queries: list[dict[str, Any]] = Field(default_factory=list)
    model_calls: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    seconds: float = 0.0
    note: str | None = None
    # Engine features this question needs that the engine does not have (when skipped).
    missing_features: list[str] = Field(default_factory=list)


class MeteredProvider:
    """Passes calls through and counts what they cost, per question."""

    def __init__(self, inner: LLMProvider):
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.responses: list[ModelResponse] = []

    async def complete(
        self,
        *,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        max_tokens: int = 1024,
    ) -> ModelResponse:
        response = await self.inner.complete(
            system=system, messages=messages, tools=tools, max_tokens=max_tokens
        )
        self.responses.append(response)
        return response

    def take(self) -> list[ModelResponse]:
        """The responses since the last call, and forget them."""
        taken, self.responses = self.responses, []
        return taken


def score(
    question: EvalQuestion, seen_texts: Sequence[str], answer: str | None
) -> tuple[bool, bool, list[float | None]]:
    """(all expected in what the model saw, all expected in its answer, matches in the answer)."""
    seen_numbers = [n for text in seen_texts for n in numbers_in(text)]
    said_numbers = numbers_in(answer)
    tol = question.tolerance
    seen = all(find(e, seen_numbers, tol) is not None for e in question.expected)
    got = [find(e, said_numbers, tol) for e in question.expected]
    return seen, all(g is not None for g in got), got


class EvalRunner:
    """Runs questions one after another on one assistant.

    With a ``ReferenceProvider`` each question gets its own reference script (the CI run);
    any other provider is the model under evaluation.
    """

    def __init__(
        self,
        provider: LLMProvider,
        *,
        store_dir: Path | None = None,
        engine_settings: EngineSettings | None = None,
        assistant_settings: AssistantSettings | None = None,
    ):
        self.reference = provider if isinstance(provider, ReferenceProvider) else None
        self.provider = MeteredProvider(provider)
        self.store_dir = store_dir
        self.engine_settings = engine_settings
        self.assistant_settings = assistant_settings or AssistantSettings()

    async def run(
        self,
        questions: Sequence[EvalQuestion],
        progress: Callable[[QuestionResult], None] | None = None,
    ) -> list[QuestionResult]:
        needed = {name for q in questions for name in q.requires}
        present = available(needed, self.engine_settings)
        with tempfile.TemporaryDirectory(prefix="barb-eval-", dir=self.store_dir) as tmp:
            store = await open_store(
                StoreSettings(database_url=f"sqlite+aiosqlite:///{Path(tmp) / 'eval.db'}")
            )
            try:
                assistant = Assistant(
                    self.provider,
                    store,
                    InlineRunner(),
                    settings=self.assistant_settings,
                    engine_settings=self.engine_settings,
                )
                results = []
                for number, question in enumerate(questions, start=1):
                    missing = [name for name in question.requires if not present[name]]
                    asker = Asker(chat_id=number, user_id=1)
                    if missing:
                        result = self._skipped(question, missing)
                    else:
                        try:
                            result = await self._ask(assistant, asker, question)
                        except Exception as exc:  # one broken question must not end the run
                            log.exception("eval question %s failed", question.id)
                            result = self._errored(question, exc)
                    results.append(result)
                    if progress is not None:
                        progress(result)
                return results
            finally:
                await store.close()

    async def _ask(
        self, assistant: Assistant, asker: Asker, question: EvalQuestion
    ) -> QuestionResult:
        await assistant.store.chats.ensure(asker.chat_id, asker.chat_type)
        await assistant.store.chats.set_instrument(asker.chat_id, question.instrument)
        # Charts are the proof for people; the score needs only the numbers.
        await assistant.store.chats.update_settings(asker.chat_id, charts=False)
        if self.reference is not None:
            self.provider.inner = self.reference.for_question(question)
        self.provider.take()
        started = time.perf_counter()
        reply = Reply()
        for step in question.turns:
            reply = await self._conversation(assistant, asker, question, step.question)
        # Scored on the last turn: what its queries returned, and what the model then said.
        seen = [proof.summary_text for proof in reply.proofs]
        queries = [proof.query for proof in reply.proofs]
        seconds = time.perf_counter() - started
        responses = self.provider.take()
        usage = sum((r.usage for r in responses), Usage())
        costs = [r.cost_usd for r in responses]
        said_text = reply.text if not reply.failed else None
        in_results, in_answer, got = score(question, seen, said_text)
        return QuestionResult(
            **self._identity(question),
            status="pass" if in_results and in_answer else "fail",
            seen=in_results,
            said=in_answer,
            got=got,
            answer=reply.text,
            queries=queries,
            model_calls=len(responses),
            tool_calls=sum(len(r.message.tool_calls) for r in responses),
            input_tokens=usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
            seconds=round(seconds, 3),
            note=self._note(reply),
        )

    def _note(self, reply: Reply) -> str | None:
        if reply.failed:
            return "the assistant gave up (see answer)"
        inner = self.provider.inner
        if isinstance(inner, ReferenceProvider) and inner.remaining:
            return f"{inner.remaining} reference turn(s) were never played"
        return None

    async def _conversation(
        self, assistant: Assistant, asker: Asker, question: EvalQuestion, text: str
    ) -> Reply:
        """One message of the person, followed to the final answer; the proofs of every
        query it ran are gathered into the returned reply."""
        reply = await assistant.ask(asker, text)
        proofs = list(reply.proofs)
        clarifications = 0
        while reply.pending is not None:
            if reply.pending.kind == "confirm":
                reply = await assistant.resume(reply.pending.id, asker.user_id, run=True)
            elif clarifications < _MAX_CLARIFICATIONS:
                clarifications += 1
                reply = await assistant.ask(asker, _CLARIFY_ANSWER[question.lang])
            else:
                break
            proofs.extend(reply.proofs)
        return reply.model_copy(update={"proofs": proofs})

    @staticmethod
    def _identity(question: EvalQuestion) -> dict[str, Any]:
        return {
            "id": question.id,
            "lang": question.lang,
            "instrument": question.instrument,
            "question": question.question,
            "tags": question.tags,
            "expected": question.expected,
            "tolerance": question.tolerance,
        }

    def _errored(self, question: EvalQuestion, exc: Exception) -> QuestionResult:
        self.provider.take()
        return QuestionResult(
            **self._identity(question), status="error", note=f"{type(exc).__name__}: {exc}"[:300]
        )

    def _skipped(self, question: EvalQuestion, missing: list[str]) -> QuestionResult:
        return QuestionResult(
            **self._identity(question),
            status="skipped",
            note="needs " + ", ".join(missing) + " (not in this engine yet)",
            missing_features=missing,
        )

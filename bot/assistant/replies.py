"""What the loop hands back to a front end: text, a pending action, the proof. No Telegram."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from bot.pool.jobs import QueryOutcome
from bot.store.records import RunOutcome


class Asker(BaseModel):
    """Who asked, and where."""

    chat_id: int
    user_id: int
    chat_type: Literal["private", "group", "supergroup", "channel"] = "private"
    # Telegram's language_code of the person, a hint when a message has no letters.
    language_code: str | None = None
    # Where the answer goes in a group: a reply to the question's message, in its forum topic.
    reply_to: int | None = None
    thread_id: int | None = None
    # The message the person's own message replies to (Telegram's reply_to_message), if
    # any: a reply to one of Barb's answers follows that answer's question and data,
    # whoever asked it, rather than the asker's own last ("and for ES?" under Bob's answer).
    replied_to: int | None = None
    # The person's message that asked, in any chat (``reply_to`` is set in groups only, where
    # answers quote it): a later reply to it follows this question (``Reply.asked``).
    message_id: int | None = None
    # The other messages of a question the app split in parts (``split_questions``), after
    # ``message_id``: a reply to any of them follows this question too (``Reply.asked_parts``).
    parts: list[int] = Field(default_factory=list)


class Proof(BaseModel):
    """One executed query and what proves it: the plan, the summary, chart and CSV."""

    query: dict[str, Any]
    plan: str
    summary_text: str
    rows: int = 0
    chart_png: bytes | None = Field(default=None, repr=False)
    chart_name: str | None = None
    headline: str | None = None
    csv: bytes | None = Field(default=None, repr=False)
    csv_name: str | None = None
    csv_rows: int = 0  # the file's rows, which its button and caption count
    csv_cut_from: int = 0  # the rows it holds the first of, when cut; 0 when whole
    warnings: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # The chart's words for the columns the engine named ("mean_range": «средний диапазон»,
    # ``QueryOutcome.names``): the model's answer says them, not the engine's names.
    names: dict[str, str] = Field(default_factory=dict)
    # Its place among every query its question showed, in every reply (None: its reply's
    # place): its kept CSV is asked for by it. A first run's answer and the answer after a
    # corrected plan were both proof 0, and the second's CSV button sent the first's file.
    number: int | None = None
    #: The key of the job that computed it (``QueryJob.key``; None: a job without one): the
    #: runner lets that job's answer go once the reply is stored (``QueryRunner.answered``).
    job: str | None = None

    @classmethod
    def from_outcome(cls, query: dict[str, Any], plan: str, outcome: QueryOutcome) -> Proof:
        return cls(
            query=query,
            plan=plan,
            summary_text=outcome.summary_text,
            rows=outcome.rows,
            chart_png=outcome.chart_png,
            chart_name=outcome.chart_name,
            headline=outcome.headline,
            csv=outcome.csv,
            csv_name=outcome.csv_name,
            csv_rows=outcome.csv_rows,
            csv_cut_from=outcome.csv_cut_from,
            warnings=outcome.warnings,
            metadata=outcome.result.get("metadata", {}),
            names=outcome.names,
        )


class PlanView(BaseModel):
    """What the person is shown for a pending action, stored with it: a plan to confirm
    (Run/Cancel) or a question with suggested replies."""

    kind: Literal["confirm", "clarify"]
    text: str
    #: Every query the plan covers, rendered in plain words, in order.
    plan: str | None = None
    #: The first query as it will run (instrument included); all of them in ``queries``.
    query: dict[str, Any] | None = None
    queries: list[dict[str, Any]] = Field(default_factory=list)
    #: After a query error: the parts of what is computed that the fix changed.
    changed: list[str] = Field(default_factory=list)
    options: list[str] = Field(default_factory=list)
    answer_format: str | None = None


class PendingView(PlanView):
    """A pending action as a front end shows it: the view and the id its buttons carry."""

    id: str


class Reply(BaseModel):
    question_id: str | None = None
    text: str | None = None
    pending: PendingView | None = None
    proofs: list[Proof] = Field(default_factory=list)
    # True when the answer is an apology (provider down, limit reached…), not an analysis.
    failed: bool = False
    # A run's answer: how its plan ends. "failed": a query the plan showed gave no result
    # (an error, a timeout), and the plan says so; "reopened": it failed on Barb's side
    # before anything was shown, and the plan waits for Run again.
    plan_outcome: RunOutcome = "done"
    language: Literal["en", "ru"] = "en"
    #: The person's message that asked the question (``Asker.message_id``), stored with each
    #: of its messages: a reply to that message, in a private chat as in a group, follows
    #: this question (``OutboxRepository.question_of``).
    asked: int | None = None
    #: The question's other parts when the app split it (``Asker.parts``), stored with
    #: ``asked``: a reply to the second part followed the last data instead.
    asked_parts: list[int] = Field(default_factory=list)

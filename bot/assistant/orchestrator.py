"""One orchestrator with the full context, dumb tools, and a confirm gate (seeds 000 and 004).

A question runs as a bounded loop: the model reads the system prompt, the last turns of the
chat and the current question, and either answers or calls tools. Reference tools answer at
once; ``execute_query`` stops the loop before running (the confirm gate) and
``ask_user_clarification`` stops it to ask the person. A stop is stored as a pending action
holding the whole loop state, so Run, Cancel or an answer resumes it, even after a restart.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import json
import logging
import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from barb.data.store import DataMeta, data_path, read_meta
from barb.errors import BarbError
from barb.i18n import LANGUAGES, N_, decimal
from barb.instruments import Instrument, load_instrument
from barb.settings import EngineSettings, default_settings
from bot.assistant.gate import (
    Press,
    Taken,
    Unreadable,
    Verdict,
    parse_query_text,
    verdict_on,
)
from bot.assistant.plan import pinned, render_plan
from bot.assistant.plan_view import plan_view
from bot.assistant.prompts import Prompts, Variant
from bot.assistant.query_changes import runs_as_confirmed
from bot.assistant.query_errors import query_error_text, unreadable_text
from bot.assistant.replies import Asker, PendingView, PlanView, Proof, Reply
from bot.assistant.result_text import Shown, in_words, person_text
from bot.assistant.tools import (
    TOOLS,
    AskClarificationArgs,
    ExecuteQueryArgs,
    ToolArgumentError,
    ToolContext,
    ToolKind,
    kind_of,
    parse_args,
    tool_specs,
)
from bot.llm.errors import (
    AuthenticationFailed,
    BadResponse,
    ConfigError,
    LLMError,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    RequestRejected,
)
from bot.llm.messages import Message, ModelResponse, ToolCall, ToolResult
from bot.llm.provider import LLMProvider
from bot.llm.response_checks import check_response
from bot.pool.jobs import CHECK_FAILED, QueryJob, QueryOutcome, run_key
from bot.pool.runner import QueryRunner
from bot.store.housekeeping import PLAN_LIFETIME
from bot.store.records import Chat, NewMessage, PendingAction, StoredMessage, new_question_id
from bot.store.repository import Store
from bot.texts import Language, detect_language, has_words, language_for, t

log = logging.getLogger(__name__)

# Runner outcomes that end the question at once (the query itself is not at fault): what
# the person is told, and the note the model's transcript keeps.
_STOPPED = {
    "QueryTimeout": (N_("query_timeout"), "Stopped: the query took too long."),
    "WorkerDied": (
        N_("query_broke"),
        "Stopped: the query could not be run (Barb's fault, not the query's).",
    ),
    # The system killed the query's worker, most likely short of memory: the same query
    # would most likely be killed again, so no Run button comes back for it.
    "WorkerKilled": (
        N_("query_killed"),
        "Stopped: the system killed the query's worker, most likely short of memory.",
    ),
}
# Of those, the failures of Barb's side (a worker, the pool, the queue), which the same
# query may well survive a minute later: a plan stopped by one gets its Run button back.
_TRY_AGAIN = {"WorkerDied"}
# Failures of a check (``_refused``) that say nothing about the query: its plan is shown,
# and the run will meet them, or not.
_NOT_THE_QUERYS = {*_STOPPED, "OutOfMemory"}


@dataclass(frozen=True)
class Stopped:
    """The runner gave up on a query (``_STOPPED``): its error value."""

    error: dict[str, Any]

    @property
    def worth_pressing_again(self) -> bool:
        return self.error["error_type"] in _TRY_AGAIN

    def sentence(self, lang: Language) -> str:
        """One sentence for the person: the same for Run, the assistant's own run, /query."""
        key, _ = _STOPPED[self.error["error_type"]]
        return t(key, lang, ref=self.error.get("reference", "?"))

    @property
    def note(self) -> str:
        return _STOPPED[self.error["error_type"]][1]


#: A malformed model response is asked for again once; a second one ends the question.
MALFORMED_ATTEMPTS = 2


@functools.lru_cache(maxsize=16)
def _cached_meta(path: Path, mtime_ns: int) -> DataMeta:
    """A data file's metadata, read once per version of the file."""
    return read_meta(path)


class AssistantSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BARB_", env_file=".env", extra="ignore")

    history_turns: int = Field(default=5, ge=0, description="Earlier questions shown")
    max_model_calls: int = Field(default=8, ge=2, description="Model calls per question")
    max_tool_calls: int = Field(default=10, ge=1, description="Tool calls per question")
    max_query_errors: int = Field(
        default=2, ge=1, description="Failed queries per question; the last one is explained"
    )
    prompt_variant: str | None = Field(default=None, description="Overrides variants.yaml")
    daily_token_budget: int | None = Field(default=None, ge=1, description="Per person, UTC day")
    max_tokens: int = Field(default=1024, ge=64)
    # The checks (a plan's all at once) queue behind runs in a busy pool: a plan unchecked
    # by then is shown, and meets a refusal only after its Run, as before checks existed. A
    # worker's first check of an instrument loads it (4.5 s on a loaded two-core machine).
    check_wait_s: float = Field(
        default=15.0, gt=0, description="Seconds a plan waits for its query checks"
    )


#: How a query run without a plan is named in its job's key (``run_key``), in place of the
#: call id the model gives it anew at every attempt.
AT_ONCE = "at-once"


class QueryRun(BaseModel):
    """One query run: as it ran (instrument included), the outcome, and its proof if ok."""

    query: dict[str, Any]
    outcome: QueryOutcome
    proof: Proof | None = None


class LoopState(BaseModel):
    """Everything needed to continue a question later; stored in pending actions as JSON."""

    question_id: str
    asker: Asker
    language: Language
    messages: list[Message]
    # The chat's instrument when the question was asked: a query that names none runs on it,
    # even if /instrument changes before Run is pressed ("" in states stored before this).
    instrument: str = ""
    model_calls: int = 0
    tool_calls: int = 0
    query_errors: int = 0
    # Calls whose queries the person saw in a plan and ran: Run covers exactly those.
    approved: list[str] = Field(default_factory=list)
    # Those queries as their plan showed them, by call id, a period counted from the data's
    # end pinned to the dates shown (``plan.pinned``): what Run runs, however much data
    # arrives before it is pressed ({} in states stored before this: the calls' own).
    planned: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # The last query that failed, as it ran: a fix is compared with it (``query_changes``).
    failed_query: dict[str, Any] | None = None
    # Fixes that were the confirmed query, at most written differently, run at once (their
    # call ids): the answer says so.
    fixes: list[str] = Field(default_factory=list)
    # After the last allowed failure the model must answer in words, without tools.
    words_only: bool = False
    # Data rows to store with the tool results (by call id): what the person was shown.
    shown: dict[str, dict[str, Any]] = Field(default_factory=dict)


class Paused(BaseModel):
    """Where a question stopped: the assistant message's calls, answered up to ``index``."""

    state: LoopState
    call_index: int
    results: list[ToolResult]
    # The calls whose queries the plan shows: what Run approves.
    covers: list[str] = Field(default_factory=list)


class PendingPayload(BaseModel):
    """What is stored for a pending action: where the loop stopped and what was shown."""

    paused: Paused
    view: PlanView


def pending_payload(action: PendingAction) -> PendingPayload:
    return PendingPayload.model_validate(action.payload)


def question_asked(action: PendingAction | None) -> int | None:
    """The message (in a group) whose question the action was planned or asked for, to
    reply to: a press has none of its own. None in a private chat, or for no action."""
    if action is None:
        return None
    return pending_payload(action).paused.state.asker.reply_to


def asked_in(action: PendingAction) -> int | None:
    """The forum topic the action's question was asked in (None: no topic). Each topic is a
    conversation of its own: a message in another one neither answers the action nor
    replaces it."""
    return pending_payload(action).paused.state.asker.thread_id


def asked_message(action: PendingAction) -> int | None:
    """The Telegram message id of the action's question, None if unknown: ids grow within a
    chat, so it orders one person's questions however many replicas handle them."""
    return pending_payload(action).paused.state.asker.message_id


def _asked_before(action: PendingAction, message_id: int | None) -> bool:
    """Whether the action's question came before message ``message_id`` (unknown on either
    side: yes). A message another replica handles late (its update was slow to come) neither
    answers nor replaces the plan of a question the person asked after it."""
    asked = asked_message(action)
    return asked is None or message_id is None or asked <= message_id


def option_text(action: PendingAction | None, option: int | None) -> str | None:
    """The suggested reply number ``option`` of a clarification, or None if it has no such
    reply: ``option_text(asked, 1)`` is "Biggest gain" for "Best by what?" offering
    ["Widest range", "Biggest gain"]."""
    if action is None or action.kind != "clarify" or option is None:
        return None
    options = pending_payload(action).view.options
    return options[option] if 0 <= option < len(options) else None


class Assistant:
    """Front-end-neutral: ``ask`` a question, ``resume`` a pending action."""

    def __init__(
        self,
        provider: LLMProvider,
        store: Store,
        runner: QueryRunner,
        *,
        settings: AssistantSettings | None = None,
        prompts: Prompts | None = None,
        engine_settings: EngineSettings | None = None,
    ):
        self.provider = provider
        self.store = store
        self.runner = runner
        self.settings = settings or AssistantSettings()
        self.prompts = prompts or Prompts()
        self.engine_settings = engine_settings or default_settings()
        self.variant: Variant = self.prompts.variant_for_model(
            provider.model, self.settings.prompt_variant
        )
        self.tools = tool_specs(self.variant)

    # --- entry points -----------------------------------------------------------------------

    async def ask(
        self,
        asker: Asker,
        text: str,
        *,
        chat: Chat | None = None,
        clarification: str | None = None,
        question_id: str | None = None,
    ) -> Reply:
        """A new message from a person: answers a pending clarification, or starts a question.
        ``chat``, if the caller has it, saves reading it again. ``question_id``: the id the
        question was recorded in flight under, the same at every attempt at it (else a new
        one): the queries it runs at once are named by it on the queue workers (``_execute``).

        ``clarification``: the clarification a suggested reply's press claimed (``take``)
        for this text, which it answers. Only that one: a clarification another message
        claimed is never continued with this text. A claim lost on the way (a typed reply
        and a press at once) leaves the text a new question: every message is answered.
        Example: "Biggest gain, please" typed as "Widest range" is pressed; the press
        answers "Best by what?", the typed text is asked after it, as a question of its own.
        """
        if chat is None or chat.id != asker.chat_id:
            chat = await self.store.chats.ensure(asker.chat_id, asker.chat_type)
        language = language_for(chat.settings.language, text, asker.language_code)
        if chat.settings.language not in LANGUAGES and not has_words(text):
            language = await self._conversation_language(asker, language)
        if clarification is not None:
            claimed = await self._claimed(clarification, asker.user_id)
            if claimed is not None:
                return await self.continue_claimed(claimed, chat=chat, answer=text)
        # Only this person's: in a group, another member's plan is not theirs to end; and
        # only this topic's: Alice's question in topic 88 was taken as her reply to "Best
        # by what?" asked in topic 77.
        waiting = [
            action
            for action in await self.store.pending.open_for_chat(
                asker.chat_id, user_id=asker.user_id
            )
            if asked_in(action) == asker.thread_id and _asked_before(action, asker.message_id)
        ]
        for action in waiting:
            # A running clarification is another message's (a press's) to answer.
            if action.kind == "clarify" and action.status == "pending":
                claim = await self.store.pending.claim(action.id, asker.user_id)
                if claim.won and claim.action is not None:
                    return await self.continue_claimed(claim.action, chat=chat, answer=text)
        if any(action.status == "pending" for action in waiting):
            ids = [action.id for action in waiting]
            await self._decline(asker.chat_id, asker.user_id, ids)
        budget = await self._over_budget(asker, language)
        if budget is not None:
            return budget
        state = LoopState(
            question_id=question_id or new_question_id(),
            asker=asker,
            language=language,
            messages=[Message.user(text)],
            instrument=chat.instrument,
        )
        return await self._loop(chat, state)

    async def take(
        self,
        action_id: str,
        user_id: int,
        press: Press,
        *,
        work: Mapping[str, Any] | None = None,
        update_id: int | None = None,
    ) -> Taken:
        """The confirm gate's one decision on a press: may it go ahead?

        Run claims the plan (pending → running), Cancel cancels it, each with ``work``
        recorded in flight in the same transaction (and the press's ``update_id`` handled
        from then on); an option claims the clarification the same way, with ``work`` the
        question its reply asks (``ask`` then continues the claimed clarification). Each is
        one conditional write, so a double press, or two devices, cannot both win: two fast
        taps on a suggested reply ask once. Any other verdict computes nothing, and says
        why: the plan runs (``RUNNING``), ran (``DONE``), was cancelled or superseded
        (``DROPPED``), or is gone or expired (``STALE``).
        """
        if press is not Press.CANCEL:
            claim = await self.store.pending.claim(
                action_id,
                user_id,
                max_age=PLAN_LIFETIME if press is Press.RUN else None,
                work=work,
                update_id=update_id,
                kind="run" if press is Press.RUN else "question",
            )
            action = claim.action
            if claim.won and action is not None:
                return Taken(verdict=Verdict.OK, action=action, work_id=claim.work_id)
            if (
                press is Press.RUN
                and action is not None
                and action.status == "pending"
                and action.user_id == user_id
            ):
                # Past its lifetime, not yet expired by housekeeping: it is now.
                await self.keep_expired(await self.store.pending.expire(PLAN_LIFETIME))
                return Taken(verdict=Verdict.STALE, action=action)
            return Taken(verdict=verdict_on(action, user_id), action=action)
        action = await self.store.pending.get(action_id)
        verdict = verdict_on(action, user_id)
        if verdict is not Verdict.OK or action is None:
            return Taken(verdict=verdict, action=action)
        cancel = await self.store.pending.cancel(action_id, user_id, work=work, update_id=update_id)
        if not cancel.won:  # Run won the race
            return Taken(verdict=verdict_on(cancel.action, user_id))
        return Taken(verdict=Verdict.OK, action=action, work_id=cancel.work_id)

    async def press(
        self, action_id: str, user_id: int, press: Press, *, option: int | None = None
    ) -> Reply:
        """A press, start to end (``barb chat``): Run runs the frozen plan, Cancel tells the
        model, an option answers the clarification. A press that may not go ahead gets one
        sentence saying why, and computes nothing."""
        answer = None
        if press is Press.OPTION:
            # Checked before the press claims the clarification: a reply it does not have
            # leaves it open.
            answer = option_text(await self.store.pending.get(action_id), option)
            if answer is None:
                return Reply()
        taken = await self.take(action_id, user_id, press)
        if taken.verdict is not Verdict.OK or taken.action is None:
            lang = plan_language(taken.action)
            return Reply(text=t(taken.verdict.text_key(press), lang), failed=True, language=lang)
        if press is Press.CANCEL:
            return await self.cancelled(taken.action)
        return await self.continue_claimed(taken.action, answer=answer)

    async def resume(
        self,
        action_id: str,
        user_id: int,
        *,
        run: bool | None = None,
        answer: str | None = None,
    ) -> Reply:
        """Continue a pending action: ``run=True`` (Run), ``run=False`` (Cancel) or ``answer``.

        The action is claimed (or cancelled) first, so a double press is harmless: a press
        that did not win, or an action no longer open, gives an empty Reply.
        """
        if run is False:
            taken = await self.take(action_id, user_id, Press.CANCEL)
            if taken.verdict is not Verdict.OK or taken.action is None:
                return Reply()  # not theirs, unknown, or Run won the race
            return await self.cancelled(taken.action)
        claim = await self.store.pending.claim(action_id, user_id)
        if not claim.won or claim.action is None:
            return Reply()
        return await self.continue_claimed(claim.action, answer=answer)

    async def cancelled(self, action: PendingAction) -> Reply:
        """A cancelled plan: the model is told and answers briefly, without tools."""
        paused = pending_payload(action).paused
        asker = paused.state.asker
        chat = await self.store.chats.ensure(asker.chat_id, asker.chat_type)
        return await self._cancelled(chat, paused)

    async def continue_claimed(
        self, action: PendingAction, *, chat: Chat | None = None, answer: str | None = None
    ) -> Reply:
        """Continue an action the caller has claimed: run the confirmed queries, or take the
        clarification's ``answer``. ``chat``, if the caller has it, saves reading it again.

        A clarification is done once its answer is taken; if the model then fails before
        anything was shown, it waits for its reply again (``pending``), nothing of the
        attempt kept, so that the person told to try again can press the reply again (p40b
        F33: "This question was already answered."). A plan stays ``running`` until its
        answer is ready, then is done (or pending again, for Run to be pressed again): a
        press meanwhile is told the answer is on its way, not that the plan is out of date.
        """
        paused = pending_payload(action).paused
        asker = paused.state.asker
        if chat is None or chat.id != asker.chat_id:
            chat = await self.store.chats.ensure(asker.chat_id, asker.chat_type)
        state = paused.state
        call = self._calls(state)[paused.call_index]
        if action.kind != "confirm":
            result = ToolResult(
                call_id=call.id,
                name=call.name,
                content=self.prompts.loop_text("clarification_answer", answer=answer or ""),
            )
            # Done first, as before the model is asked: a press again is told it was
            # answered. A turn stopped meanwhile declines it (``decline_claimed``); one cut
            # by a shutdown is continued at the next start (the press's work names it).
            await self.store.pending.resolve(action.id, "done")
            try:
                return await self._go_on(chat, state, paused, result, [], keep_failed=False)
            except LLMError as exc:
                await self.store.pending.reopen(action.id)
                # Not offered again under a later question's plan (``_passed_over``): the
                # next message would be taken as its reply.
                await self._passed_over(action)
                return self._reply(state, llm_failure_text(exc, state.language), [], failed=True)
        # Run approves exactly the queries the plan showed (older rows: the one call).
        covers = paused.covers or [call.id]
        state.approved = [*state.approved, *covers]
        proofs: list[Proof] = []
        executed = await self._execute(chat, state, call, proofs)
        if isinstance(executed, Stopped):
            if executed.worth_pressing_again and not proofs:
                # Nothing was shown yet: the plan waits for Run again, as it was stored
                # (the question goes on; nothing of this attempt is kept).
                await self.store.pending.reopen(action.id)
                reply = self._reply(state, executed.sentence(state.language), [], failed=True)
                if await self._passed_over(action):
                    # Another replica answered a later question meanwhile: Run again would
                    # run a plan the person has moved on from.
                    return reply.model_copy(update={"plan_outcome": "failed"})
                return reply.model_copy(update={"plan_outcome": "reopened"})
            reply = await self._stopped(state, paused.call_index, paused.results, proofs, executed)
        else:
            reply = await self._go_on(chat, state, paused, executed, proofs)
        # Before the answer is stored and sent, so that it is never below a plan still
        # "running"; a kill before this runs the plan again at the next start, as before.
        await self.store.pending.resolve(action.id, "done")
        # A query shows its data once it gave a result: one that did not, failed.
        failed = any(call_id not in state.shown for call_id in covers)
        return reply.model_copy(update={"plan_outcome": "failed" if failed else "done"})

    async def _go_on(
        self,
        chat: Chat,
        state: LoopState,
        paused: Paused,
        result: ToolResult,
        proofs: list[Proof],
        *,
        keep_failed: bool = True,
    ) -> Reply:
        """The paused call answered with ``result``: the rest of its message's calls, then
        the loop (``keep_failed`` as for ``_loop``)."""
        outcome = await self._continue_calls(
            chat, state, paused.call_index + 1, [*paused.results, result], proofs
        )
        if isinstance(outcome, Reply):
            return outcome
        return await self._loop(chat, state, proofs, keep_failed=keep_failed)

    async def decline_pending(
        self, chat_id: int, user_id: int, *, thread_id: int | None | Literal["any"] = "any"
    ) -> list[PendingAction]:
        """A new message instead of a button press (or /cancel, /reset): the person's waiting
        question ends, unrun, and the model is told; other members' plans in a group stay,
        and, for a message in a forum topic (``thread_id``), the person's plans in other
        topics. The actions declined."""
        ids = None
        if thread_id != "any":
            waiting = await self.store.pending.open_for_chat(chat_id, user_id=user_id)
            ids = [action.id for action in waiting if asked_in(action) == thread_id]
        return await self._decline(chat_id, user_id, ids)

    async def _decline(
        self, chat_id: int, user_id: int, ids: list[str] | None
    ) -> list[PendingAction]:
        """Decline the person's pending actions (only ``ids``, if given), the model told."""
        actions = await self.store.pending.decline_for_chat(chat_id, user_id=user_id, ids=ids)
        for action in actions:
            await self._save_declined(action)
        return actions

    async def _passed_over(self, action: PendingAction) -> bool:
        """Decline ``action``, handed back to its person, if they asked a later question in
        its conversation meanwhile (another replica handled it while this one ran the plan;
        on one replica the chat's lock makes that question wait and decline it). After the
        hand-back, so that a later plan placed from now on declines it itself."""
        asked, thread = asked_message(action), asked_in(action)
        if asked is None:
            return False
        later = [
            other
            for other in await self.store.pending.recent_for_chat(action.chat_id)
            if other.user_id == action.user_id
            and asked_in(other) == thread
            and (asked_message(other) or 0) > asked
        ]
        return bool(later) and bool(
            await self._decline(action.chat_id, action.user_id, [action.id])
        )

    async def decline_claimed(self, action_id: str) -> bool:
        """A clarification claimed for a reply whose turn ended before the model answered it
        (/cancel or /reset stopped it, or it failed): declined, and the model told, as for
        ``decline_pending``, never left claimed for a later message to answer. False if it
        was no longer claimed (ended meanwhile). Example: "Widest range" pressed while
        another question holds the chat, then /cancel: "Best by what?" is declined."""
        action = await self.store.pending.get(action_id)
        if action is None or action.kind != "clarify":
            return False
        # "done" too: a clarification is done once the model is asked (``continue_claimed``),
        # and this turn ended before the model's answer came.
        if not await self.store.pending.resolve(action_id, "declined", was=("running", "done")):
            return False
        await self._save_declined(action)
        return True

    async def unsent(self, chat_id: int, reply: Reply, clarification: str | None = None) -> None:
        """``reply`` will never be shown (its turn was stopped once the model had answered):
        the transcript forgets its question, as if it had been stopped a moment earlier, and
        ``clarification`` (the one it answered) is declined. Example: "Widest range" pressed
        for "Best by what?", the answer ready and waiting to be sent, then /cancel: the next
        question's model neither sees an answer the person never read nor the question as
        answered. A reply that is a plan or a clarifying question stored nothing yet: its
        action, never shown, is declined by the /cancel (``decline_pending``)."""
        if reply.pending is not None:
            return
        if reply.question_id is not None:
            await self.store.transcript.forget_question(chat_id, reply.question_id)
        if clarification is not None:
            await self.decline_claimed(clarification)

    async def keep_expired(self, actions: Sequence[PendingAction]) -> None:
        """Plans and clarifying questions nobody answered within their lifetime (expired by
        housekeeping, or when Run is pressed too late): the transcript keeps each question,
        its calls answered "expired", as for a declined one. Before, it forgot them: "run
        it" the next day was asked as if no plan had been shown."""
        for action in actions:
            try:
                await self._save_declined(action, note_key="expired")
            except Exception:  # one bad payload must not keep the others out
                log.exception("expired action %s not kept in the transcript", action.id)

    async def _save_declined(self, action: PendingAction, *, note_key: str = "declined") -> None:
        """The transcript keeps a declined action's question, its calls answered "declined"
        (or ``note_key``'s note)."""
        paused = pending_payload(action).paused
        state = paused.state
        note = self.prompts.loop_text(note_key)
        results = self._close_remaining(state, paused.call_index, paused.results, note)
        # Each query the plan showed goes with its note, as it would have run (instrument
        # included): the next question ("and for ES?", typed instead of Run) reads it.
        closed = len(paused.results)
        results[closed:] = [
            result.model_copy(update={"content": f"{note} {_planned_text(state.planned[id_])}"})
            if (id_ := result.call_id) in state.planned
            else result
            for result in results[closed:]
        ]
        state.messages.append(Message.tool(*results))
        await self._save(state)

    async def _claimed(self, action_id: str, user_id: int) -> PendingAction | None:
        """The clarification ``action_id`` as claimed for ``user_id``'s reply: running (its
        press claimed it), or pending and claimed now (a press resumed after a restart,
        handed back by the recovery); None if it is no longer theirs to answer."""
        action = await self.store.pending.get(action_id)
        if action is None or action.kind != "clarify" or action.user_id != user_id:
            return None
        if action.status == "running":
            return action
        claim = await self.store.pending.claim(action_id, user_id)
        return claim.action if claim.won else None

    # --- the loop ---------------------------------------------------------------------------

    async def _loop(
        self,
        chat: Chat,
        state: LoopState,
        proofs: list[Proof] | None = None,
        *,
        keep_failed: bool = True,
        blank: str = N_("blank_answer"),
    ) -> Reply:
        """The model and its tools until an answer in words, a pause (a plan, a clarifying
        question) or a stop. A model failure ends the question with one sentence, the
        question kept in the transcript; with ``keep_failed=False`` and nothing shown yet,
        the ``LLMError`` is raised instead and nothing is kept: the caller hands the
        question back (a clarification's reply, to be pressed again). ``blank``: what an
        answer with no words says (``_blank_reply``)."""
        proofs = proofs if proofs is not None else []
        # The question's instrument, not the chat's now: after /instrument ES between an NQ
        # plan and its Run, the model read NQ's result told "Current instrument: ES" (ES's
        # sessions and point value, for dollars per contract of NQ's points).
        instrument = load_instrument(state.instrument or chat.instrument, self.engine_settings)
        meta = self.data_meta(instrument)
        # Read once per turn: earlier questions, preferences and the last data shown do not
        # change while this question runs (a preference saved now counts from the next one).
        context = await self._context(chat, state)
        history = await self._history(state.asker, state.question_id)
        try:
            while True:
                if state.model_calls >= self.settings.max_model_calls:
                    await self._save(state)
                    text = t("too_many_steps", state.language, steps=self.settings.max_model_calls)
                    return self._reply(state, text, proofs, failed=True)
                response = await self._complete(chat, state, instrument, meta, context, history)
                message = response.message
                state.messages.append(message)
                if not message.tool_calls:
                    await self._save(state)
                    if (message.text or "").strip():
                        return self._reply(state, message.text, proofs)
                    return self._blank_reply(state, proofs, blank)
                if state.words_only:
                    return await self._tool_loop_ended(state, proofs)
                outcome = await self._continue_calls(chat, state, 0, [], proofs)
                if isinstance(outcome, Reply):
                    return outcome
        except LLMError as exc:
            ref = uuid.uuid4().hex[:8]
            log.warning("LLM call failed (ref %s): %s", ref, type(exc).__name__, exc_info=exc)
            if not keep_failed and not proofs:
                raise
            await self._save(state)
            text = llm_failure_text(exc, state.language, after_numbers=bool(proofs))
            return self._reply(state, text, proofs, failed=True)

    async def _complete(
        self,
        chat: Chat,
        state: LoopState,
        instrument: Instrument,
        meta: DataMeta | None,
        context: list[str],
        history: list[Message],
    ) -> ModelResponse:
        system = self.prompts.system_prompt(self.variant, instrument, meta, context)
        tools = [] if state.words_only else self.tools
        state.model_calls += 1
        for attempt in range(1, MALFORMED_ATTEMPTS + 1):
            try:
                response = await self.provider.complete(
                    system=system,
                    messages=[*history, *state.messages],
                    tools=tools,
                    max_tokens=self.settings.max_tokens,
                )
                await self._record_usage(chat, state, response)
                # Checked against every tool of the variant, not only those offered now: a
                # known tool called when told to answer in words is the loop's to handle.
                return check_response(response, (tool.name for tool in self.tools))
            except BadResponse as exc:
                if attempt == MALFORMED_ATTEMPTS:
                    raise
                # Nothing of it is kept: the same request again, as if it never came.
                log.warning("Malformed model response, asking once more: %s", exc)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _record_usage(self, chat: Chat, state: LoopState, response: ModelResponse) -> None:
        usage = response.usage
        await self.store.usage.record(
            chat.id,
            state.asker.user_id,
            response.model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            cost_usd=response.cost_usd,
        )

    async def _continue_calls(
        self,
        chat: Chat,
        state: LoopState,
        start: int,
        results: list[ToolResult],
        proofs: list[Proof],
    ) -> Reply | None:
        """Answer the last assistant message's calls from ``start``; a Reply if it stops.

        Before a plan is shown, every query it would show is checked (``_refused``): if the
        engine refuses one without reading any data, none is shown, and the model gets the
        error at once to correct it; the person sees only a plan that can run."""
        calls = self._calls(state)
        refused: dict[str, str] | None = None  # checked once, at the first plan to show
        # The refusals of one message are one failed attempt: two queries with the same typo
        # had used up the default budget (2) at once, and the model never got to correct them.
        attempt_counted = False
        for index in range(start, len(calls)):
            call = calls[index]
            state.tool_calls += 1
            if state.tool_calls > self.settings.max_tool_calls:
                results.append(self._error(call, self.prompts.loop_text("tool_limit")))
                state.words_only = True
                continue
            kind = kind_of(call.name)
            try:
                args = parse_args(call.name, call.arguments)
            except ToolArgumentError as exc:
                results.append(self._error(call, str(exc)))
                continue
            if (
                kind is ToolKind.EXECUTE
                and chat.settings.confirm_queries
                and call.id not in state.approved
            ):
                assert isinstance(args, ExecuteQueryArgs)
                if refused is None:
                    refused = await self._refused(chat, state, index)
                if refused:
                    error = refused.get(call.id)
                    if error is None:
                        results.append(self._error(call, self.prompts.loop_text("held_back")))
                    else:
                        results.append(
                            self._query_failed(
                                state, call, error, retry="refused", count=not attempt_counted
                            )
                        )
                        attempt_counted = True
                    continue
                query = self._as_planned(args.query, state.instrument or chat.instrument)
                if not self._fix_runs_at_once(state, call, query):
                    return await self._pause(chat, state, index, results, proofs, "confirm", args)
                state.planned[call.id] = query
            if kind is ToolKind.CLARIFY:
                assert isinstance(args, AskClarificationArgs)
                return await self._pause(chat, state, index, results, proofs, "clarify", args)
            if kind is ToolKind.EXECUTE:
                result = await self._execute(chat, state, call, proofs)
                if isinstance(result, Stopped):
                    return await self._stopped(state, index, results, proofs, result)
                results.append(result)
            else:
                results.append(await self._run_tool(chat, state, call, args))
        state.messages.append(Message.tool(*results))
        return None

    # --- tools ------------------------------------------------------------------------------

    async def _run_tool(
        self, chat: Chat, state: LoopState, call: ToolCall, args: Any
    ) -> ToolResult:
        """A tool that answers at once (reference, memory): its declared ``run``."""
        tool = TOOLS[call.name]
        assert tool.run is not None, f"{call.name} pauses the loop; it has no run"
        context = ToolContext(
            instrument=load_instrument(state.instrument or chat.instrument, self.engine_settings),
            user_id=state.asker.user_id,
            store=self.store,
            prompts=self.prompts,
            settings=self.engine_settings,
        )
        content = await tool.run(context, args)
        return ToolResult(call_id=call.id, name=call.name, content=content)

    async def run_query(
        self,
        chat: Chat,
        query: dict[str, Any],
        language: Language,
        *,
        instrument: str = "",
        run_of: tuple[str, str] | None = None,
    ) -> QueryRun:
        """Run one query as it was shown, on its own instrument (``instrument``, else the
        chat's, fills in a missing one): the one path for the model's ``execute_query`` and
        the person's ``/query``. ``run_of``, the question's and the call's ids of a query
        its plan showed and Run approved (or a /query's work), names the job (``run_key``):
        a run resumed after a restart finds the job its first attempt sent to the queue
        workers."""
        frozen = _with_instrument(query, instrument or chat.instrument)
        job = QueryJob(
            query=frozen,
            instrument=frozen["instrument"],
            chart=chat.settings.charts,
            csv=True,
            language=language,  # the chart's words and its headline, in the person's language
        )
        if run_of is not None:
            job = job.model_copy(update={"key": run_key(*run_of, job)})
        outcome = await self.runner.run(job)
        proof = None
        if outcome.ok:
            plan = self._plan(frozen, self._instrument(frozen), language)
            proof = Proof.from_outcome(frozen, plan, outcome)
            proof.job = job.key
        return QueryRun(query=frozen, outcome=outcome, proof=proof)

    async def query_command(
        self,
        asker: Asker,
        text: str,
        *,
        chat: Chat | None = None,
        work_id: int | None = None,
        question_id: str | None = None,
    ) -> Reply:
        """``/query <Barb Script>``: run it at once, no model, no tokens, the same proof; the
        result as a person reads it (``result_text``), never the model's summary. Its work
        in flight, ``work_id``, names its job (``run_key``) by the id drawn when it was
        recorded (``question_id``; the work's own id in work recorded before), as for a
        confirmed plan's run: resumed after a kill of the bot, it finds the job it sent."""
        chat = chat or await self.store.chats.ensure(asker.chat_id, asker.chat_type)
        lang = language_for(chat.settings.language, "", asker.language_code)
        parsed = parse_query_text(text)
        if isinstance(parsed, Unreadable):
            return Reply(text=unreadable_text(parsed, lang), failed=True, language=lang)
        run_of = None if work_id is None else (question_id or f"work.{work_id}", "query")
        run = await self.run_query(chat, parsed, lang, run_of=run_of)
        outcome = run.outcome
        if run.proof is None:
            error = outcome.error or {}
            if error.get("error_type") in _STOPPED:
                message = Stopped(error).sentence(lang)
            else:
                message = query_error_text({"message": outcome.summary_text, **error}, lang)
            return Reply(text=message, failed=True, language=lang)
        # No question id: nothing goes into the transcript, and the query was typed by the
        # person, so there is no "Query" button to show it back.
        csv_rows = outcome.csv_rows if outcome.csv else None
        shown = Shown(
            outcome.names, outcome.units, outcome.key_words, outcome.answers, outcome.note_names
        )
        return Reply(
            text=person_text(
                outcome.result, lang, outcome.preview, csv_rows, shown, run.proof.headline or ""
            ),
            proofs=[run.proof],
            language=lang,
        )

    async def _execute(
        self, chat: Chat, state: LoopState, call: ToolCall, proofs: list[Proof]
    ) -> ToolResult | Stopped:
        """Run a query in the pool; the model gets only the summary."""
        args = parse_args(call.name, call.arguments)
        assert isinstance(args, ExecuteQueryArgs)
        query = state.planned.get(call.id, args.query)
        # A run the person approved is resumed with the same call. A query run without a
        # plan (confirmations off, or a fix run as confirmed) is asked of the model again at
        # a resumption, under a new call id: it is named by its question alone, the job's
        # digest telling its queries apart. Before, it had no name, and a kill of the bot
        # while it computed on a queue worker had it computed twice.
        call_name = call.id if call.id in state.approved else AT_ONCE
        run_of = (state.question_id, call_name)
        run = await self.run_query(
            chat, query, state.language, instrument=state.instrument, run_of=run_of
        )
        query, outcome = run.query, run.outcome
        if run.proof is None:
            error = outcome.error or {}
            if error.get("error_type") in _STOPPED:
                return Stopped(error)
            state.failed_query = query
            return self._query_failed(state, call, outcome.summary_text)
        state.failed_query = None
        plan = run.proof.plan
        proofs.append(run.proof)
        first_line = outcome.summary_text.splitlines()[0] if outcome.summary_text else ""
        state.shown[call.id] = {
            "query": query,
            "plan": plan,
            "summary_line": first_line,
            # What the model read: the next question reads it again (``previous_data``).
            "summary": outcome.summary_text,
            "rows": outcome.rows,
            "metadata": outcome.result.get("metadata", {}),
            "preview": outcome.preview,
            # Where and how the answer was said, for its Query button: in the answer's
            # language, replying to the question (in a group) as the answer does.
            "language": state.language,
            "reply_to": state.asker.reply_to,
        }
        run.proof.number = list(state.shown).index(call.id)
        return ToolResult(call_id=call.id, name=call.name, content=outcome.summary_text)

    def _query_failed(
        self,
        state: LoopState,
        call: ToolCall,
        error: str,
        *,
        retry: str | None = None,
        count: bool = True,
    ) -> ToolResult:
        """A query's error for the model, counted: past ``max_query_errors`` it is told to
        explain in words, without tools; before that, ``retry`` (a loop text) says how to
        try again. ``count`` False: part of an attempt already counted (another refusal of
        the same message), told the same."""
        state.query_errors += count
        if state.query_errors >= self.settings.max_query_errors:
            error += "\n" + self.prompts.loop_text("error_again")
            state.words_only = True
        elif retry is not None:
            error += "\n" + self.prompts.loop_text(retry)
        return ToolResult(call_id=call.id, name=call.name, content=error, is_error=True)

    async def _refused(self, chat: Chat, state: LoopState, index: int) -> dict[str, str]:
        """The queries a plan from call ``index`` would show that the engine refuses without
        reading any data (a syntax error, an unknown function or column, a bad field), by
        call id: the error text a run would have given. Example: ``"r": "rsi(close, 14"``
        gets "Syntax error at position 14 … a '(' is not closed" at once, instead of a plan,
        a Run and "Failed". A check that could not be made (a worker or the pool failing)
        refuses nothing, and so does one not made within ``check_wait_s``: the run will say.

        The checks are made at once, each where a run would go, and the plan waits at most
        ``check_wait_s`` for all of them: one after another, a plan of three queries queued
        behind runs had waited up to three times that."""
        shown = self._queries_to_show(chat, state, index)
        jobs = [
            QueryJob(
                query=query,
                instrument=query["instrument"],
                chart=False,
                csv=False,
                language=state.language,
                check_only=True,
            )
            for _, query in shown
        ]
        deadline = asyncio.get_running_loop().time() + self.settings.check_wait_s
        outcomes = await asyncio.gather(
            *(self._check(job, n, len(jobs), deadline) for n, job in enumerate(jobs, 1))
        )
        refused = {}
        for (call_id, _), outcome in zip(shown, outcomes, strict=True):
            error_type = (outcome.error or {}).get("error_type")
            if not outcome.ok and error_type not in _NOT_THE_QUERYS:
                refused[call_id] = outcome.summary_text
        return refused

    async def _check(
        self, job: QueryJob, position: int, count: int, deadline: float
    ) -> QueryOutcome:
        """One query's check (``position`` of the plan's ``count``, from 1), ok if it could
        not be made by ``deadline`` or failed for a reason of Barb's own: the plan is shown
        and the run judges. A failure is logged by the query's position and the exception's
        type, never its message or the query, which may quote the person (the run, meeting
        the same failure, logs it in full with a reference)."""
        unchecked = QueryOutcome(ok=True, summary_text="")
        try:
            async with asyncio.timeout_at(deadline):
                outcome = await self.runner.check(job)
        except TimeoutError:
            log.info(
                "query check %d of %d not made within %.0f s: the plan is shown",
                position,
                count,
                self.settings.check_wait_s,
            )
            return unchecked
        except Exception as exc:  # a runner's bug: its contract is an outcome, never a raise
            failure = type(exc).__name__
        else:
            error = outcome.error or {}
            if error.get("error_type") != CHECK_FAILED:
                return outcome
            failure = error.get("exception", "?")
        log.warning(
            "query check %d of %d failed (%s): the plan is shown unchecked",
            position,
            count,
            failure,
        )
        return unchecked

    # --- pausing and resuming ---------------------------------------------------------------

    async def _pause(
        self,
        chat: Chat,
        state: LoopState,
        index: int,
        results: list[ToolResult],
        proofs: list[Proof],
        kind: str,
        args: ExecuteQueryArgs | AskClarificationArgs,
    ) -> Reply:
        covers: list[str] = []
        if isinstance(args, ExecuteQueryArgs):
            shown = self._queries_to_show(chat, state, index)
            covers = [call_id for call_id, _ in shown]
            state.planned |= dict(shown)
            view = self._plan_view(state, [query for _, query in shown], args.explanation)
        else:
            view = PlanView(
                kind="clarify",
                text=args.question_text,
                options=args.suggested_replies,
                answer_format=args.expected_response_format_hint,
            )
        paused = Paused(state=state, call_index=index, results=results, covers=covers)
        payload = PendingPayload(paused=paused, view=view)
        # Placed, not just created: another replica may be showing a plan for the person's
        # other question at this very moment, and only the later question's may keep Run.
        thread = state.asker.thread_id
        placed = await self.store.pending.place(
            chat.id,
            state.asker.user_id,
            kind,  # type: ignore[arg-type]
            payload.model_dump(mode="json"),
            same_conversation=lambda action: asked_in(action) == thread,
            asked=asked_message,
        )
        action = placed.action
        # The one stored declined (a later question's plan was there first) is kept in the
        # transcript as a plan passed over, as are those it replaced.
        for declined in (
            [*placed.replaced, action] if action.status == "declined" else placed.replaced
        ):
            await self._save_declined(declined)
        return Reply(
            question_id=state.question_id,
            pending=PendingView(id=action.id, **view.model_dump()),
            proofs=proofs,
            language=state.language,
            asked=state.asker.message_id,
            asked_parts=state.asker.parts,
        )

    def _queries_to_show(
        self, chat: Chat, state: LoopState, index: int
    ) -> list[tuple[str, dict[str, Any]]]:
        """Every query this model message still wants to run, from call ``index`` on, as it
        will run: Run must not run anything the person was not shown."""
        shown = []
        for call in self._calls(state)[index:]:
            if kind_of(call.name) is not ToolKind.EXECUTE or call.id in state.approved:
                continue
            try:
                args = parse_args(call.name, call.arguments)
            except ToolArgumentError:
                continue  # answered with the error, never run
            assert isinstance(args, ExecuteQueryArgs)
            shown.append(
                (call.id, self._as_planned(args.query, state.instrument or chat.instrument))
            )
        return shown

    def _as_planned(self, query: dict[str, Any], instrument: str) -> dict[str, Any]:
        """``query`` as a plan shows it and Run runs it: naming its instrument (``instrument``
        fills in a missing one), a period counted from the data's end pinned to the dates
        the plan shows (``plan.pinned``). An instrument Barb does not know, or has no data
        for, is the check's to refuse: its query is left as written."""
        named = _with_instrument(query, instrument)
        if not isinstance(named["instrument"], str):
            return named
        try:
            bars = self._instrument(named)
        except BarbError:
            return named
        meta = self.data_meta(bars)
        return named if meta is None else pinned(named, meta.last_date, bars.calendar)

    def _plan_view(
        self, state: LoopState, queries: list[dict[str, Any]], explanation: str
    ) -> PlanView:
        text = (self._calling_message(state).text or explanation or "").strip()
        lang = state.language
        return plan_view(
            queries,
            text,
            failed=state.failed_query,
            plan_of=lambda query: self._plan(query, self._instrument(query), lang),
            lang=lang,
        )

    @staticmethod
    def _fix_runs_at_once(state: LoopState, call: ToolCall, query: dict[str, Any]) -> bool:
        """After a query error, a fix that is the confirmed query itself, at most written
        differently, runs without asking again, and the answer says so; any other change
        (the order or the row limit too) is a new plan (``runs_as_confirmed``)."""
        if state.failed_query is None or not runs_as_confirmed(state.failed_query, query):
            return False
        state.fixes.append(call.id)
        return True

    async def _stopped(
        self,
        state: LoopState,
        index: int,
        results: list[ToolResult],
        proofs: list[Proof],
        stopped: Stopped,
    ) -> Reply:
        """The runner gave up on a query (time limit, a worker or the pool failing): the
        question ends here, with the sentence that says which."""
        results = self._close_remaining(state, index, results, stopped.note)
        state.messages.append(Message.tool(*results))
        await self._save(state)
        return self._reply(state, stopped.sentence(state.language), proofs, failed=True)

    async def _tool_loop_ended(self, state: LoopState, proofs: list[Proof]) -> Reply:
        """Told to answer in words (tool limit, repeated query errors, Cancel), the model
        called tools again: the loop stops here rather than spend more calls on it."""
        note = self.prompts.loop_text("tool_limit")
        results = self._close_remaining(state, 0, [], note)
        state.messages.append(Message.tool(*results))
        await self._save(state)
        return self._reply(state, self._stopped_text(state), proofs, failed=True)

    def _stopped_text(self, state: LoopState, otherwise: str = N_("tool_loop_limit")) -> str:
        """Why the loop ended without an answer, said to the person: after queries the
        engine refused again and again, that (the question was not too broad: "mean range?"
        read "please ask a narrower question" after two refused queries, or "(no answer)"
        when the model then wrote nothing); else ``otherwise``."""
        if state.query_errors >= self.settings.max_query_errors:
            return t("queries_refused", state.language)
        return t(otherwise, state.language)

    def _blank_reply(self, state: LoopState, proofs: list[Proof], blank: str) -> Reply:
        """The model answered with no words. Beside a run's chart and file the answer is
        there, its caption ending "(no answer)" (``Sender``); with nothing to show, the
        person is told what happened and what to do (``blank``; after a Cancel, that it is
        cancelled, not "please ask again")."""
        if proofs:
            return self._reply(state, t("no_answer", state.language), proofs)
        return self._reply(state, self._stopped_text(state, blank), proofs, failed=True)

    async def _cancelled(self, chat: Chat, paused: Paused) -> Reply:
        """Cancel: the model is told and answers briefly, without tools."""
        state = paused.state
        note = self.prompts.loop_text("cancelled")
        results = self._close_remaining(state, paused.call_index, paused.results, note)
        state.messages.append(Message.tool(*results))
        state.words_only = True
        state.model_calls = min(state.model_calls, self.settings.max_model_calls - 1)
        return await self._loop(chat, state, blank=N_("cancelled"))

    def _close_remaining(
        self, state: LoopState, start: int, results: list[ToolResult], note: str
    ) -> list[ToolResult]:
        """Every call not yet answered gets ``note``: providers need a result for each call."""
        calls = self._calls(state)
        return [
            *results,
            *(ToolResult(call_id=c.id, name=c.name, content=note) for c in calls[start:]),
        ]

    # --- context, memory, storage -----------------------------------------------------------

    async def _context(self, chat: Chat, state: LoopState) -> list[str]:
        lines = []
        preferences = await self.store.preferences.for_user(state.asker.user_id)
        if preferences:
            lines.append(self.prompts.preferences_block((p.kind, p.text) for p in preferences))
        replied = await self._replied_data(chat, state)
        if replied is not None:
            lines.append(replied)
            return lines
        last = await self._last_data(chat, state)
        if last is not None and last.data:
            lines.append(self.prompts.loop_text("previous_data", summary=previous_data(last.data)))
        return lines

    async def _replied_data(self, chat: Chat, state: LoopState) -> str | None:
        """A message that replies to one of Barb's answers (or plans), or to the message
        that asked it (``OutboxRepository.question_of``), follows that answer's question
        and the data it showed, whoever asked it: in a group, Alice's "and for ES?" under
        Bob's CL answer, or under his question, ran her own last query on ES. The question is quoted
        (the history may no longer hold it). A reply to a plan that never ran (another
        member's still waiting for Run, or one replaced, cancelled or expired) follows the
        plan's queries. None if the message replies to nothing of Barb's, or to a question
        that showed no data and had no plan: the conversation's last data then."""
        asker = state.asker
        if asker.replied_to is None:
            return None
        question_id = await self.store.outbox.question_of(chat.id, asker.replied_to)
        if question_id is None or question_id == state.question_id:
            return None
        rows = await self.store.transcript.question(chat.id, question_id)
        shown = next((row for row in reversed(rows) if row.data), None)
        asked = next((row for row in rows if row.role == "user"), None)
        in_group = asker.chat_type in ("group", "supergroup")
        if shown is not None and shown.data is not None and asked is not None:
            question = Message.model_validate(asked.payload).text or ""
            return self.prompts.loop_text(
                "replied_data",
                question=json.dumps(question, ensure_ascii=False),
                who=OTHER_ASKED if in_group and asked.user_id != asker.user_id else "",
                summary=previous_data(shown.data),
            )
        # A plan that never ran: another member's still waiting for their Run, or one
        # replaced by a newer question, cancelled or expired (Alice's "а для ES?" under her
        # weekday plan she never ran was read with the count she ran after it). Its queries
        # as it showed them.
        for action_id in await self.store.outbox.actions_of(chat.id, question_id):
            action = await self.store.pending.get(action_id)
            if action is None or action.kind != "confirm":
                continue
            paused = pending_payload(action).paused
            if paused.state.question_id != question_id:
                continue
            if action.status == "done":  # its latest plan ran, and showed nothing
                return None
            first = next((m for m in paused.state.messages if m.role == "user"), None)
            queries = [paused.state.planned[c] for c in paused.covers if c in paused.state.planned]
            if first is None or not queries:
                return None
            return self.prompts.loop_text(
                "replied_plan",
                question=json.dumps(first.text or "", ensure_ascii=False),
                who=OTHER_ASKED if in_group and action.user_id != asker.user_id else "",
                queries="\n".join(f"query {json.dumps(q, ensure_ascii=False)}" for q in queries),
            )
        return None

    async def _last_data(self, chat: Chat, state: LoopState) -> StoredMessage | None:
        """The data of the conversation's last question that ran a query: in a forum group,
        the topic's (another topic's data is another conversation's "those"); in a group,
        the asker's own last, else the conversation's. Alice's "and for ES?" was read with
        the query of Bob's CL question asked in between, and ran Bob's on ES."""
        asker = state.asker
        if asker.chat_type in ("group", "supergroup"):
            own = await self.store.transcript.last_data(
                chat.id, thread_id=asker.thread_id, user_id=asker.user_id
            )
            if own is not None:
                return own
        return await self.store.transcript.last_data(chat.id, thread_id=asker.thread_id)

    async def _conversation_language(self, asker: Asker, otherwise: Language) -> Language:
        """The language of the conversation's last question, for a message that has no
        words to tell ("ES?", "2023?"): a Russian conversation's "ES?" was answered in
        English. In a group, the asker's own last question there (in the forum topic): the
        conversation's last may be another member's, in another language, and Alice's
        "ES?" after her Russian questions was answered in her Telegram's English."""
        in_group = asker.chat_type != "private"
        rows = await self.store.transcript.recent(
            asker.chat_id,
            max(1, self.settings.history_turns),
            thread_id=asker.thread_id,
            user_id=asker.user_id if in_group else None,
        )
        for row in reversed(rows):
            said = Message.model_validate(row.payload).text or "" if row.role == "user" else ""
            if has_words(said):
                return detect_language(said, otherwise)
        return otherwise

    async def _history(self, asker: Asker, current: str) -> list[Message]:
        """Earlier questions of the conversation (the chat's, in the asker's forum topic)
        as (question, final answer) pairs: no tool traffic, no rows."""
        rows = await self.store.transcript.recent(
            asker.chat_id, self.settings.history_turns + 1, thread_id=asker.thread_id
        )
        by_question: dict[str, list[Message]] = {}
        askers: dict[str, int | None] = {}
        for row in rows:
            if row.question_id != current:
                by_question.setdefault(row.question_id, []).append(
                    Message.model_validate(row.payload)
                )
                if row.role == "user":
                    askers.setdefault(row.question_id, row.user_id)
        history: list[Message] = []
        for question_id, messages in list(by_question.items())[-self.settings.history_turns :]:
            asked = next((m for m in messages if m.role == "user"), None)
            # In a group, another member's question is marked as theirs: Alice's "and for
            # ES?" read Bob's question, asked in between, as her last.
            if (
                asked is not None
                and asker.chat_type in ("group", "supergroup")
                and askers.get(question_id) != asker.user_id
            ):
                asked = Message.user(f"{OTHER_MEMBER} {asked.text or ''}")
            answered = next(
                (
                    m
                    for m in reversed(messages)
                    if m.role == "assistant" and m.text and not m.tool_calls
                ),
                None,
            )
            said = answered.text if answered is not None else _unanswered(messages)
            if asked is not None and said:
                history += [asked, Message.assistant(said)]
        return history

    async def _save(self, state: LoopState) -> None:
        rows = []
        for message in state.messages:
            summary = None
            data = None
            if message.role == "tool":
                summary = "\n".join(r.content for r in message.tool_results)
                shown = [
                    state.shown[r.call_id] for r in message.tool_results if r.call_id in state.shown
                ]
                # One row per tool message, which answers every call of the model's message:
                # the last query's data (what the next question's context reads), with every
                # query it ran, in order (what the Query button shows: NQ's and ES's).
                queries = [
                    {"query": d["query"], "plan": d["plan"], "summary": d.get("summary")}
                    for d in shown
                ]
                data = {**shown[-1], "queries": queries} if shown else None
            rows.append(
                NewMessage(
                    role=message.role,
                    payload=message.model_dump(mode="json"),
                    user_id=state.asker.user_id if message.role == "user" else None,
                    model_summary=summary,
                    data=data,
                )
            )
        await self.store.transcript.append(
            state.asker.chat_id, state.question_id, rows, thread_id=state.asker.thread_id
        )

    async def _over_budget(self, asker: Asker, language: Language) -> Reply | None:
        budget = self.settings.daily_token_budget
        if budget is None:
            return None
        used = (await self.store.usage.for_user(asker.user_id)).total_tokens
        if used < budget:
            return None
        return Reply(
            text=t(
                "budget", language, used=decimal(used, language), budget=decimal(budget, language)
            ),
            failed=True,
            language=language,
        )

    # --- small helpers ----------------------------------------------------------------------

    def data_meta(self, instrument: Instrument) -> DataMeta | None:
        """The data the queries of ``instrument`` run on: as the workers say it when they
        are elsewhere (``CeleryRunner.data_meta``), else this machine's file. A bot on a
        machine without the data counted relative periods from today, unpinned, and told
        the model "no data loaded"; one with an older copy, from that copy's last day."""
        meta = self.runner.data_meta(instrument.symbol)
        if meta is not None:
            return meta
        path = data_path(instrument.symbol, self.engine_settings)
        try:
            return _cached_meta(path, path.stat().st_mtime_ns)
        except (OSError, BarbError):
            return None

    def _instrument(self, query: dict[str, Any]) -> Instrument:
        return load_instrument(query["instrument"], self.engine_settings)

    def _plan(self, query: dict[str, Any], instrument: Instrument, language: Language) -> str:
        return render_plan(query, instrument, self._data_last(instrument), language)

    def _data_last(self, instrument: Instrument) -> dt.date:
        """The last date of ``instrument``'s data, which relative periods count back from.
        Without data the query fails anyway; today only labels relative periods meanwhile."""
        meta = self.data_meta(instrument)
        return meta.last_date if meta else dt.date.today()

    @staticmethod
    def _calling_message(state: LoopState) -> Message:
        return next(m for m in reversed(state.messages) if m.role == "assistant")

    def _calls(self, state: LoopState) -> list[ToolCall]:
        return self._calling_message(state).tool_calls

    @staticmethod
    def _error(call: ToolCall, text: str) -> ToolResult:
        return ToolResult(call_id=call.id, name=call.name, content=text, is_error=True)

    @staticmethod
    def _reply(state: LoopState, text: str, proofs: list[Proof], *, failed: bool = False) -> Reply:
        if state.fixes and proofs:
            note = t("fixed_note", state.language)
            text = f"{text}\n\n{note}"
        text = in_words(text, {k: v for proof in proofs for k, v in proof.names.items()})
        return Reply(
            question_id=state.question_id,
            text=text,
            proofs=proofs,
            failed=failed,
            language=state.language,
            asked=state.asker.message_id,
            asked_parts=state.asker.parts,
        )


__all__ = [
    "Assistant",
    "AssistantSettings",
    "LoopState",
    "PendingPayload",
    "pending_payload",
    "plan_language",
    "shown_queries",
]


def shown_queries(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The queries a tool message ran, each with its plan (``{"query": …, "plan": …}``), from
    its stored data; a row stored before it listed them holds its last query alone.

    >>> shown_queries({"query": {"select": "count()"}, "plan": "Compute: count"})
    [{'query': {'select': 'count()'}, 'plan': 'Compute: count'}]
    """
    listed = data.get("queries")
    if isinstance(listed, list):
        return [q for q in listed if isinstance(q, dict) and q.get("query")]
    return [{"query": data["query"], "plan": data.get("plan")}] if data.get("query") else []


#: Characters of the summaries of the previous data the next question reads: a listing's
#: first and last rows with its notes fit (about 1,200); a longer one is cut at a line.
PREVIOUS_DATA_CHARS = 2400
#: Marks another member's question in a group's history.
OTHER_MEMBER = "[asked by another member of the group]"
#: Marks another member's question a reply follows (``_replied_data``).
OTHER_ASKED = " (asked by another member of the group)"


def _planned_text(query: dict[str, Any]) -> str:
    return f"The plan's query: {json.dumps(query, ensure_ascii=False)}"


def _unanswered(messages: list[Message]) -> str | None:
    """What the history says for a question that ended without an answer in words: its
    plan or clarifying question, with what became of it. "average RTH range by weekday?",
    its plan shown, then "and for ES?" typed instead of Run: the model was sent "and for
    ES?" alone, the earlier question dropped for having no answer. None if it called no
    tool (nothing to say)."""
    calling = next((m for m in reversed(messages) if m.role == "assistant" and m.tool_calls), None)
    if calling is None:
        return None
    results = {r.call_id: r.content for m in messages for r in m.tool_results}
    parts = [calling.text.strip()] if calling.text and calling.text.strip() else []
    for call in calling.tool_calls:
        outcome = results.get(call.id, "No answer came.")
        if call.name == "ask_user_clarification":
            parts.append(f"[Asked the person: {call.arguments.get('question_text', '')}] {outcome}")
        else:
            parts.append(f"[{call.name}: {outcome}]")
    return "\n".join(parts)


def previous_data(data: dict[str, Any]) -> str:
    """The data a question showed, as the next question's model reads it: each query it
    ran, whole and as JSON (as the model writes it), with the summary the model read of its
    result, numbers and warnings included. It read the first line alone ("Result: 5 groups
    by weekday…", no number) and a query cut at 400 characters, so "why is Monday lower?"
    was answered without the numbers or the note that the groups differ by noise. A row
    stored before summaries were kept gives the summary's first line.

    >>> print(previous_data({"query": {"select": "count()"}, "summary_line": "Result: 5"}))
    query {"select": "count()"}
    Result: 5
    """
    queries = shown_queries(data)
    budget = max(600, PREVIOUS_DATA_CHARS // max(1, len(queries)))
    blocks = []
    for n, shown in enumerate(queries, 1):
        summary = shown.get("summary")
        if not isinstance(summary, str):
            summary = data.get("summary_line", "") if n == len(queries) else ""
        query = json.dumps(shown["query"], ensure_ascii=False)
        blocks.append(f"query {query}\n{_cut_lines(summary, budget)}".rstrip())
    return "\n\n".join(blocks)


def _cut_lines(text: str, limit: int) -> str:
    """``text`` whole if it fits ``limit`` characters, else its first lines that do."""
    if len(text) <= limit:
        return text
    kept: list[str] = []
    for line in text.splitlines():
        if sum(len(k) + 1 for k in kept) + len(line) > limit:
            break
        kept.append(line)
    return "\n".join([*kept, "… (the rest of the summary is cut)"])


def llm_failure_text(error: LLMError, lang: str, *, after_numbers: bool = False) -> str:
    """The sentence for a question the model failed to answer, saying what happened: a rate
    limit says when to try again (its ``retry-after``, else a minute), so that the wait the
    SDK no longer takes (``RETRY_AFTER_CAP_S``) is the person's to choose; a timeout, that
    the model took too long; an answer Barb could not read twice (``BadResponse``), that;
    a request the model's server refused, to rephrase or start again; a refused key or a
    wrong setting, to tell the operator; only a connection that failed, that the model is
    not reachable. Each of those was said "not reachable", which sent the person looking
    for an outage of a model that had answered. Example: a 429 with ``retry-after: 120``
    reads "…please try again in 120 s".

    ``after_numbers``: the question's queries ran and their numbers go with the sentence
    (the model failed while commenting on them). A connection that failed, a timeout or an
    unreadable answer then says the numbers are whole and only the comment is missing:
    "please try again in a minute" under a chart read as if the answer had failed, and
    asking again runs the query again."""
    if after_numbers and isinstance(error, ProviderUnavailable | ProviderTimeout | BadResponse):
        return t("llm_failed_after_numbers", lang)
    if isinstance(error, RateLimited):
        wait = error.retry_after
        seconds = 60 if wait is None else max(1, math.ceil(wait))
        return t("llm_rate_limited", lang, seconds=seconds)
    if isinstance(error, ProviderTimeout):
        return t("llm_timeout", lang)
    if isinstance(error, BadResponse):
        return t("llm_bad_response", lang)
    if isinstance(error, RequestRejected):
        return t("llm_rejected", lang)
    if isinstance(error, AuthenticationFailed | ConfigError):
        return t("llm_not_set_up", lang)
    return t("llm_unavailable", lang)


def plan_language(action: PendingAction | None) -> Language:
    """The language a plan was written in (its question's): what its status, buttons and
    answer are in, whoever presses and whatever their Telegram says."""
    if action is None:
        return "en"
    try:
        return pending_payload(action).paused.state.language
    except ValidationError:
        return "en"


def _with_instrument(query: dict[str, Any], instrument: str) -> dict[str, Any]:
    """The query as it runs: naming its instrument (the chat's only fills in a missing one)."""
    named = query.get("instrument")
    if isinstance(named, str) and named.strip():
        return query
    return {"instrument": instrument, **query}

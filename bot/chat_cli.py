"""`barb chat`: the assistant in a terminal, on the same loop, store and engine as the bot."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click

from barb.file_writes import why_not_written, write_whole
from barb.script.limits import QueryLimits
from barb.yaml_text import load_yaml
from bot.assistant.gate import Press
from bot.assistant.orchestrator import Assistant, AssistantSettings
from bot.assistant.replies import Asker, Proof, Reply
from bot.bot_cli import NO_KEY_HINT
from bot.llm.errors import ConfigError
from bot.llm.messages import Message, ToolCall
from bot.llm.provider import LLMProvider
from bot.llm.scripted import ScriptedProvider
from bot.llm.settings import LLMSettings, make_provider
from bot.pool.runner import ProcessRunner
from bot.settings import BotSettings
from bot.store.db import open_store
from bot.store.settings import StoreSettings


def provider_or_exit(script: Path | None) -> LLMProvider:
    """The configured provider, or a scripted one; a missing key ends with what to set."""
    if script is not None:
        return ScriptedProvider(load_script(script))
    try:
        return make_provider(LLMSettings())
    except ConfigError as exc:
        click.echo(f"{exc}\n\n{NO_KEY_HINT}", err=True)
        sys.exit(2)


def load_script(path: Path) -> list[Message]:
    """Scripted model turns from YAML: `- text: …` or `- tool: name, args: {…}, text: …`."""
    turns: list[Message] = []
    for i, item in enumerate(load_yaml(path.read_text(encoding="utf-8")) or []):
        calls = []
        if "tool" in item:
            calls.append(
                ToolCall(id=f"call_{i}", name=item["tool"], arguments=item.get("args", {}))
            )
        turns.append(Message.assistant(text=item.get("text"), tool_calls=calls))
    return turns


def show(reply: Reply, out_dir: Path) -> None:
    for proof in reply.proofs:
        for line in save_proof(proof, out_dir):
            click.echo(line)
    if reply.text:
        click.echo(f"\nBarb: {reply.text}\n")


def save_proof(proof: Proof, out_dir: Path) -> list[str]:
    """Write the proof's chart and CSV to ``out_dir``; the lines that say where. A file the
    disk cannot take (full, a size limit, a directory that cannot be made) is one line
    saying so, nothing of it left behind, and the conversation goes on: before, a traceback
    ended the chat before the answer was shown."""
    lines = [f"\n[{proof.summary_text.splitlines()[0]}]"]
    files = [("chart", proof.chart_png, proof.chart_name), ("csv", proof.csv, proof.csv_name)]
    for what, data, name in files:
        if not (data and name):
            continue
        path = out_dir / name
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            failed: OSError | None = exc
        else:
            failed = write_whole(path, data)
        if failed is None:
            lines.append(f"  {what + ':':6} {path}")
        else:
            lines.append(
                f"  {what + ':':6} not written to {path}: {why_not_written(failed)}. "
                "The answer is complete without it."
            )
    return lines


async def converse(assistant: Assistant, asker: Asker, out_dir: Path, auto_run: bool) -> None:
    click.echo("Barb chat — ask about the bars; :query, :cancel, :prefs, :forget, :reset, :quit\n")
    while True:
        try:
            text = click.prompt("You", prompt_suffix="> ", default="", show_default=False)
        except (EOFError, click.Abort):
            return
        text = text.strip()
        if not text:
            continue
        if text.startswith(":"):
            if not await command(assistant, asker, text, out_dir):
                return
            continue
        reply = await assistant.ask(asker, text)
        while True:
            show(reply, out_dir)
            pending = reply.pending
            if pending is None:
                break
            if pending.kind == "confirm":
                click.echo(f"\nBarb: {pending.text}\n\nPlan:\n{pending.plan}\n")
                run = auto_run or click.confirm("Run?", default=True)
                # The same confirm gate as Telegram's Run and Cancel buttons.
                press = Press.RUN if run else Press.CANCEL
                reply = await assistant.press(pending.id, asker.user_id, press)
            else:
                click.echo(f"\nBarb: {pending.text}")
                for n, option in enumerate(pending.options, start=1):
                    click.echo(f"  {n}. {option}")
                answer = click.prompt("You", prompt_suffix="> ").strip()
                if answer.isdigit() and 1 <= int(answer) <= len(pending.options):
                    option = int(answer) - 1
                    reply = await assistant.press(
                        pending.id, asker.user_id, Press.OPTION, option=option
                    )
                else:
                    reply = await assistant.ask(asker, answer)


async def command(assistant: Assistant, asker: Asker, text: str, out_dir: Path) -> bool:
    """Terminal commands; False to leave."""
    store = assistant.store
    if text in (":quit", ":q", ":exit"):
        return False
    if text == ":prefs":
        prefs = await store.preferences.for_user(asker.user_id)
        click.echo(
            "\n".join(f"- {p.kind}: {p.text}" for p in prefs) or "(no preferences remembered)"
        )
    elif text == ":forget":
        click.echo(f"Forgot {await store.preferences.clear(asker.user_id)} preference(s).")
    elif text.startswith(":query"):
        # The same path as Telegram's /query: no model, the result as a person reads it.
        show(await assistant.query_command(asker, text.removeprefix(":query")), out_dir)
    elif text == ":cancel":
        dropped = await assistant.decline_pending(asker.chat_id, asker.user_id)
        click.echo("Plan cancelled." if dropped else "No plan is waiting.")
    elif text == ":reset":
        await store.transcript.clear(asker.chat_id)
        click.echo("Conversation forgotten.")
    else:
        click.echo("Commands: :query <json>, :cancel, :prefs, :forget, :reset, :quit")
    return True


def chat_runner() -> ProcessRunner:
    """One worker process, under the bot's time limit (BARB_QUERY_TIMEOUT_S): a query that
    runs away is stopped and the conversation goes on, as in Telegram."""
    return ProcessRunner(
        workers=1,
        timeout_s=QueryLimits().query_timeout_s,
        memory_gb=BotSettings().worker_memory_gb,
    )


async def run_chat(
    provider: LLMProvider, instrument: str, out_dir: Path, auto_run: bool, **_: Any
) -> None:
    store = await open_store(StoreSettings())
    runner = chat_runner()
    try:
        asker = Asker(chat_id=0, user_id=0)
        await store.chats.ensure(asker.chat_id, "private")
        await store.chats.set_instrument(asker.chat_id, instrument.upper())
        assistant = Assistant(provider, store, runner, settings=AssistantSettings())
        await converse(assistant, asker, out_dir, auto_run)
    finally:
        await runner.close()
        await store.close()


@click.command()
@click.option("--instrument", "-i", default="NQ", show_default=True)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("out"),
    show_default=True,
    help="Where charts and CSVs are written.",
)
@click.option("--yes", "auto_run", is_flag=True, help="Run queries without asking.")
@click.option(
    "--script",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Play scripted model turns from a YAML file instead of a real model.",
)
def chat(instrument: str, out_dir: Path, auto_run: bool, script: Path | None) -> None:
    """Talk to Barb in the terminal (needs an LLM key, a local server, or --script)."""
    provider = provider_or_exit(script)
    asyncio.run(run_chat(provider, instrument, out_dir, auto_run))

"""The `barb` command: the engine's commands plus the assistant's front ends."""

from __future__ import annotations

from barb.cli import main
from bot.bot_cli import bot
from bot.chat_cli import chat
from bot.db_cli import db
from bot.eval.cli import eval_command
from bot.worker_cli import worker

main.add_command(chat)
main.add_command(bot)
main.add_command(db)
main.add_command(eval_command)
main.add_command(worker)

__all__ = ["main"]

"""The `barb` command: the engine's commands plus the assistant's front ends, each imported
when it is run (``barb query`` needs none of them)."""

from __future__ import annotations

from barb.cli import main

for name, target in {
    "bot": "bot.bot_cli:bot",
    "chat": "bot.chat_cli:chat",
    "db": "bot.db_cli:db",
    "eval": "bot.eval.cli:eval_command",
    "worker": "bot.worker_cli:worker",
}.items():
    main.add_lazy_command(name, target)

__all__ = ["main"]

"""Schema migrations from the command line, with the configuration the bot uses::

    python -m bot.store revision "add chat timezone"   # write the next numbered revision
    python -m bot.store upgrade [REV]                   # BARB_DATABASE_URL, default: head
    python -m bot.store downgrade REV                   # e.g. 0001, or base
    python -m bot.store current

Operators use ``barb db upgrade``, ``barb db current`` and ``barb db downgrade``
(``bot/db_cli.py``); on SQLite the
bot also upgrades to head by itself at start-up.
"""

from __future__ import annotations

import argparse
import asyncio
import logging

from bot.store.migrate import current_revision, downgrade_schema, new_revision, upgrade_schema
from bot.store.settings import StoreSettings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bot.store",
        description="Barb's database schema: write, apply and inspect Alembic revisions.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    revision = commands.add_parser("revision", help="write the next numbered revision")
    revision.add_argument("message", help='what the change does, e.g. "add chat timezone"')
    upgrade = commands.add_parser("upgrade", help="upgrade BARB_DATABASE_URL")
    upgrade.add_argument("revision", nargs="?", default="head")
    downgrade = commands.add_parser("downgrade", help="downgrade BARB_DATABASE_URL")
    downgrade.add_argument("revision", help='a revision id such as "0001", or "base"')
    commands.add_parser("current", help="print the revision of BARB_DATABASE_URL")
    args = parser.parse_args(argv)
    # Alembic reports each revision it applies at INFO.
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    if args.command == "revision":
        print(asyncio.run(new_revision(args.message)))
        return
    settings = StoreSettings()
    if args.command == "upgrade":
        asyncio.run(upgrade_schema(settings, args.revision))
    elif args.command == "downgrade":
        asyncio.run(downgrade_schema(settings, args.revision))
    print(f"{settings.safe_url}: {asyncio.run(current_revision(settings)) or 'base'}")


if __name__ == "__main__":
    main()

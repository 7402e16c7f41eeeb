"""Who may change a group's settings: its Telegram administrators (the owner included) and
Barb's own admins (``BARB_ADMINS``). Who may press Run or Cancel on a plan an anonymous admin
asked (as the group, ``buttons._asked_by_group``): the group's Telegram administrators.

A group's confirmation, charts and language are everyone's: any member could turn Run
confirmation off for the whole group (p46ac #7). Telegram is asked (``getChatMember``) at
most once a minute per person and group: a press on a switch is answered without a round
trip each time, and someone made or unmade an admin counts within a minute.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from telegram import Bot
from telegram.constants import ChatMemberStatus

#: The statuses that may change a group's settings.
ADMIN_STATUSES = frozenset({ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR})
#: How long Telegram's answer is trusted.
KEEP_S = 60.0
#: Past this many answers kept, the expired ones go (a bot in many groups).
MAX_KEPT = 10_000


class ChatAdmins:
    """Telegram's answer to "is this person an admin of this group?", kept ``keep_s``.

    Example: ``await admins.is_admin(bot, -100500, 22)`` is False for a member, and asks
    Telegram again only a minute later."""

    def __init__(self, keep_s: float = KEEP_S, clock: Callable[[], float] = time.monotonic):
        self.keep_s = keep_s
        self._clock = clock
        self._known: dict[tuple[int, int], tuple[bool, float]] = {}

    async def is_admin(self, bot: Bot, chat_id: int, user_id: int) -> bool:
        """Owner or administrator of the group, as Telegram answered within ``keep_s``. A
        failing call raises (``TelegramError``): no one is taken for an admin on a guess, and
        the press is answered so (``buttons.on_setting``)."""
        now = self._clock()
        known = self._known.get((chat_id, user_id))
        if known is not None and known[1] > now:
            return known[0]
        member = await bot.get_chat_member(chat_id, user_id)
        admin = member.status in ADMIN_STATUSES
        if len(self._known) >= MAX_KEPT:
            self._known = {key: kept for key, kept in self._known.items() if kept[1] > now}
        self._known[(chat_id, user_id)] = (admin, now + self.keep_s)
        return admin

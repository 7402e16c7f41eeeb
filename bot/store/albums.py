"""The captions of albums: files sent together, whose caption Telegram puts on the first only.

Each later file of the album arrives as an update of its own, without a caption, and is read
with the album's (``bot.telegram.data_upload``). The caption was kept in the process's
memory: a restart between the album's files, or another replica handling the second,
checked it as the chat's instrument in its zone, and refused it or offered it wrongly.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from bot.store.schema import AlbumCaptionRow
from bot.store.transactions import Repository, rowcount

#: Telegram sends an album's files within seconds; a day covers a bot down for hours.
ALBUM_MEMORY = timedelta(days=1)


class AlbumCaptionRepository(Repository):
    async def remember(self, chat_id: int, group: str, caption: str) -> None:
        """Keep ``caption`` as album ``group``'s in the chat (the latest one given wins)."""
        now = self._now()
        try:
            async with self._write() as session:
                row = await session.get(AlbumCaptionRow, (chat_id, group))
                if row is None:
                    session.add(
                        AlbumCaptionRow(
                            chat_id=chat_id, media_group_id=group, caption=caption, created_at=now
                        )
                    )
                else:
                    row.caption, row.created_at = caption, now
        except IntegrityError:  # another replica stored the same album's first: either holds
            pass

    async def caption(self, chat_id: int, group: str) -> str | None:
        """The album's caption, or None when none was given (or it is over a day old)."""
        cutoff = self._now() - ALBUM_MEMORY
        async with self._read() as session:
            return await session.scalar(
                select(AlbumCaptionRow.caption).where(
                    AlbumCaptionRow.chat_id == chat_id,
                    AlbumCaptionRow.media_group_id == group,
                    AlbumCaptionRow.created_at >= cutoff,
                )
            )

    async def prune(self, older_than: timedelta = ALBUM_MEMORY) -> int:
        """Forget the albums older than ``older_than``."""
        cutoff = self._now() - older_than
        async with self._write() as session:
            result = await session.execute(
                delete(AlbumCaptionRow).where(AlbumCaptionRow.created_at < cutoff),
                execution_options={"synchronize_session": False},
            )
            return rowcount(result)

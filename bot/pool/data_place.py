"""Where a process reads its bars, so that the bot can tell whether a file it imports reaches
the workers that answer its queries (``BARB_QUEUE_URL``).

Each ``barb worker`` says with its heartbeat (``worker_registry``) which instruments
it serves and where its data directory is (``WorkerBeat``). The bot imports a file sent in
Telegram only when every live worker of that instrument reads the very directory the bot
would import into (one machine, one ``BARB_DATA_DIR``: bot and workers there see one set of
bars). Anything else, a worker elsewhere, none up, one whose place is unknown (another
release), Redis unreachable, is refused: a file on the bot's disk alone would leave some
answers, or all, on the old bars.

The same host name alone is not enough (containers may share one, each with its own disk),
nor the same path (each machine has its own ``/srv/barb/data``): a directory is the same one
when the host name and its device and inode (``os.stat``) all agree.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError


class DataPlace(BaseModel):
    """A data directory as one process sees it."""

    model_config = ConfigDict(frozen=True)

    host: str
    #: The resolved path: for the logs and the person reading Redis; not compared.
    path: str
    device: int
    inode: int

    @classmethod
    def of(cls, data_dir: str | os.PathLike[str]) -> DataPlace | None:
        """Where ``data_dir`` is, on this host; None when it cannot be read (missing)."""
        try:
            resolved = Path(data_dir).resolve()
            stat = resolved.stat()
        except OSError:
            return None
        return cls(
            host=socket.gethostname(), path=str(resolved), device=stat.st_dev, inode=stat.st_ino
        )

    def same_directory(self, other: DataPlace) -> bool:
        return (self.host, self.device, self.inode) == (other.host, other.device, other.inode)


class WorkerBeat(BaseModel):
    """The value of a worker's heartbeat key: what it serves, and from where."""

    instruments: tuple[str, ...]
    #: None when its data directory could not be read.
    data: DataPlace | None
    #: The jobs (task ids) its processes run as it beats: after Redis restarted empty, the
    #: bot sends again only the jobs no worker runs (``CeleryRunner._send_lost_again``).
    #: None: a worker of a release that does not say.
    running: tuple[str, ...] | None = None


def read_beat(raw: bytes | str | None) -> WorkerBeat | None:
    """A heartbeat value as read from Redis; None for a worker that does not say where its
    data is (a release before this one set ``"alive"``)."""
    if raw is None:
        return None
    try:
        return WorkerBeat.model_validate_json(raw)
    except (ValidationError, ValueError):
        return None


def imports_reach_workers(
    beats: Iterable[WorkerBeat | None] | None, symbol: str, bot: DataPlace | None
) -> bool:
    """Whether a file the bot imports into ``bot`` (its data directory) is what every live
    worker of ``symbol`` answers from. ``beats``: the value of every live heartbeat, None
    when Redis could not be read; a None among them is a worker that does not say where its
    data is, which could serve ``symbol``."""
    if beats is None or bot is None:
        return False
    serving = []
    for beat in beats:
        if beat is None:
            return False
        if symbol.upper() in beat.instruments:
            serving.append(beat)
    return bool(serving) and all(
        beat.data is not None and beat.data.same_directory(bot) for beat in serving
    )

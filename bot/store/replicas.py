"""Replica names: one live process per ``BARB_REPLICA_ID``, and which names are gone.

The leases on outbox rows, work and updates are held by name, and a replica renews every
lease under its name. Two live processes under one name would keep each other's leases
alive (a dead twin's question never taken over) and take each other's rows at start-up, so
a bot holds its name for its whole life: on PostgreSQL a session-level advisory lock on a
connection of its own, taken at start-up (``hold``) and released when the process ends,
however it ends (the server drops the lock with the connection). A second process under
the same name finds the lock taken and does not start (``ReplicaNameTaken``).

The lock lives only as long as its connection: a PostgreSQL restart or failover, an
``idle_session_timeout`` or a proxy cutting the idle connection drops it while the bot
lives on. So the bot checks its hold now and then (``check``, from the lease renewal): a
dead connection means the name is not held (``held`` is False, so no other replica counts
as gone meanwhile) until the lock is taken again on a fresh connection; if another process
took the name in between, ``check`` raises ``ReplicaNameTaken`` and the bot stops.

The same lock says which replicas are alive: a name whose lock nobody has held for a
while belongs to a replica that is gone, so its replies need not wait out their lease
(``gone``). Example: a replica killed with a chart on the wire leaves the chart queued under
a 360 s lease; the replica the chat moves to sends it a work lease (90 s) after it first
found the name free, before its own newer reply, instead of after the 360 s. Not at once:
a name free at one read may be a live replica's whose lock's connection dropped, not yet
noticed by its ``check`` (run every third of a work lease). Taken as gone then, its reply
on the wire was claimed and sent a second time; after a PostgreSQL restart every name is
free at once, and each replica took the others' replies (the name lock's gap). A replica
whose own lock is not held at the read judges no one gone.

SQLite runs one process per file and needs no lock: a bot holding its name there is the
only live one, and every other name it finds on a lease is a dead process's (a restart
under a new ``BARB_REPLICA_ID``, say a recreated container's host name), gone at once. In a
store that does not hold its name (tests, the CLI), no replica is known to be gone and
leases alone decide.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Collection
from datetime import datetime, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.store.errors import StoreError

log = logging.getLogger(__name__)

#: The first key of Barb's advisory locks on replica names ("Barb" in ASCII), so that they
#: never meet another application's locks (nor `barb db upgrade`'s one-key lock).
LOCK_CLASS = 0x42617262
#: A process restarted at once may find its previous life's lock not yet dropped by the
#: server: the lock is tried for this long before the name counts as taken.
HOLD_TRIES_S = 5.0
HOLD_RETRY_S = 0.25
#: A replica whose host vanished (no FIN on its connection) keeps its name until the server
#: notices the connection is dead: these keepalives make that about a minute, not the
#: operating system's two hours.
KEEPALIVES = {"tcp_keepalives_idle": 30, "tcp_keepalives_interval": 10, "tcp_keepalives_count": 3}


class ReplicaNameTaken(StoreError):
    """Another live process holds this replica name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"another replica is running as {name!r}")
        self.name = name


def name_key(name: str) -> int:
    """The advisory lock's second key for a replica name: a stable 31-bit hash (the same in
    every process, unlike ``hash``), positive so that it reads the same in ``pg_locks``."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest()) >> 1


class ReplicaNames:
    """This replica's hold on its name, and which other names are held (PostgreSQL)."""

    def __init__(
        self,
        engine: AsyncEngine,
        name: str,
        *,
        clock: Callable[[], datetime],
        gone_after: timedelta,
    ) -> None:
        self._engine = engine
        self.name = name
        self._clock = clock
        #: How long a name must be seen free before its replica counts as gone: longer than
        #: a live holder takes to notice a dropped lock and take it again (``check``).
        self.gone_after = gone_after
        #: Names seen free (PostgreSQL) by this replica's reads: since when, and when last.
        self._free: dict[str, tuple[datetime, datetime]] = {}
        self._connection: AsyncConnection | None = None
        #: SQLite: this process is the file's only one (``hold``).
        self._alone = False
        #: The lock's connection dropped: held again at the next ``check``.
        self._lost = False

    @property
    def held(self) -> bool:
        return self._connection is not None or self._alone

    @property
    def _single_process(self) -> bool:
        return self._engine.dialect.name != "postgresql"

    async def hold(self) -> None:
        """Hold this replica's name until ``release`` (or the process's end); raises
        ``ReplicaNameTaken`` when another live process holds it. On SQLite no lock: the
        bot is the file's one process, so every other name is gone (``gone``)."""
        if self.held:
            return
        if self._single_process:
            self._alone = True
            return
        connection = await self._engine.connect()
        try:
            for setting, value in KEEPALIVES.items():
                await connection.execute(text(f"SET {setting} = {int(value)}"))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + HOLD_TRIES_S
            lock = text("SELECT pg_try_advisory_lock(:cls, :key)")
            params = {"cls": LOCK_CLASS, "key": name_key(self.name)}
            while not (await connection.execute(lock, params)).scalar_one():
                if loop.time() >= deadline:
                    raise ReplicaNameTaken(self.name)
                await asyncio.sleep(HOLD_RETRY_S)
            await connection.commit()  # the lock is the session's; no transaction stays open
        except BaseException:
            await connection.close()
            raise
        self._connection = connection
        log.info("holding the replica name %r", self.name)

    async def check(self) -> None:
        """Make sure the name is still held: a cheap query on the lock's connection; if
        that connection has dropped (and the lock with it), take the lock again on a fresh
        one. Raises ``ReplicaNameTaken`` when another process took the name meanwhile, and
        the database's error when it is still away (``held`` stays False: retried at the
        next call). Example: after a PostgreSQL restart the next renewal pass logs
        "lost the lock on the replica name 'a'" and holds it again."""
        if self._connection is not None:
            try:
                await self._connection.execute(text("SELECT 1"))
                await self._connection.commit()
                return
            except Exception:
                log.warning("lost the lock on the replica name %r: taking it again", self.name)
                connection, self._connection = self._connection, None
                self._lost = True
                try:
                    await connection.invalidate()
                    await connection.close()
                except Exception:  # it is dead already; nothing of it is needed
                    log.debug("closing the dropped connection failed", exc_info=True)
        if self._lost:
            await self.hold()
            self._lost = False

    async def release(self) -> None:
        self._alone = False
        self._lost = False
        if self._connection is not None:
            connection, self._connection = self._connection, None
            await connection.close()

    async def gone(self, names: Collection[str]) -> set[str]:
        """Of ``names``, those whose replicas are gone: no process has held the name in
        any read of this replica's over ``gone_after`` (a name free at only one read may
        be a live replica's whose lock dropped; it takes it again within a third of a work
        lease). Known only while this replica holds its own name, its lock granted at the
        read (after a PostgreSQL restart every lock is gone, this one's too, until its
        ``check``): otherwise none. On SQLite, all of them: the one live process is this
        one."""
        others = set(names) - {self.name}
        if not others or not self.held:
            return set()
        if self._single_process:
            return others
        async with self._engine.connect() as connection:
            held = await connection.execute(
                text(
                    "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' "
                    "AND granted AND classid = :cls AND objsubid = 2 AND database = "
                    "(SELECT oid FROM pg_database WHERE datname = current_database())"
                ),
                {"cls": LOCK_CLASS},
            )
            alive = {int(key) for key in held.scalars()}
        if name_key(self.name) not in alive:  # its lock dropped, not yet noticed by check
            return set()
        now = self._clock()
        for name in list(self._free):
            if name_key(name) in alive:
                del self._free[name]
        gone = set()
        for name in others - {name for name in others if name_key(name) in alive}:
            since, last = self._free.get(name, (now, now))
            if now - last > self.gone_after:  # not read meanwhile: it may have been held
                since = now
            self._free[name] = (since, now)
            if now - since >= self.gone_after:
                gone.add(name)
        return gone

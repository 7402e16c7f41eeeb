"""The live ``barb worker`` processes, in two keys of Redis that only Barb writes.

Each worker's main process says every ``HEARTBEAT_S`` that it is alive, what it serves
and where it reads its bars (``data_place.WorkerBeat``):

- ``barb.workers``, a sorted set: each worker's node name (Celery's ``--hostname``) scored
  with the moment, in milliseconds of Redis's own clock, after which it counts as gone
  (its last beat plus ``HEARTBEAT_TTL_S``);
- ``barb.workers.beats``, a hash: each node name → its ``WorkerBeat`` as JSON.

The bot reads both in one step, and only them: it used to find the workers with
``SCAN barb.worker.*``, which over a Redis database shared with other applications walks
every key of the database for each read. Nothing reads those ``barb.worker.<node>`` keys
now, and none outlives its worker: each beat set its own to live ``HEARTBEAT_TTL_S``.
Entries past their moment are left out of every read and removed by the next beat of any
worker; both keys expire on their own once no worker beats at all. Redis's clock, not the
machines': a worker whose clock runs ahead would otherwise outlive itself, and one behind
die while alive.

A worker announces itself before it takes its first job (``queue_worker.serve_worker``),
and takes itself out when it stops (``withdraw``): a bot that reads the set at the moment it
decides (``CeleryRunner.data_on_workers``) never misses a worker that could run a job.

Example: after ``barb worker -i NQ`` started at 10:00:00 on host a, Redis holds
``barb.workers = {"barb-NQ-812@a": 10:00:04.000}`` and
``barb.workers.beats = {"barb-NQ-812@a": '{"instruments": ["NQ"], "data": {...}}'}``;
killed at 10:00:01.5 (its last beat at 10:00:01.0), it counts as gone from 10:00:05.0.
"""

from __future__ import annotations

from typing import Any

import redis
import redis.asyncio

from bot.pool.data_place import WorkerBeat, read_beat

WORKERS_KEY = "barb.workers"
BEATS_KEY = "barb.workers.beats"
#: How often a worker beats, and how long after its last beat it counts as gone: a worker
#: killed mid-check is known gone within this (``celery_runner``).
HEARTBEAT_S = 1.0
HEARTBEAT_TTL_S = 4.0

# Redis's time in milliseconds (scripts may read it before writing: effects replication).
_NOW = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
"""
# KEYS: workers, beats. ARGV: node, beat JSON, time to live (ms). Removes the entries of
# workers gone (a few at a time: never a long script), then sets this one's.
_BEAT = (
    _NOW
    + """
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 100)
if #gone > 0 then
    redis.call('ZREM', KEYS[1], unpack(gone))
    redis.call('HDEL', KEYS[2], unpack(gone))
end
local ttl = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
for _, key in ipairs(KEYS) do
    -- Only ever later: another worker's beat may have a longer time to live.
    if redis.call('PTTL', key) < ttl then
        redis.call('PEXPIRE', key, ttl)
    end
end
return now
"""
)
# KEYS: workers, beats. Every live worker's node and beat, flat: {node, beat, node, beat…}.
_LIVE = (
    _NOW
    + """
local nodes = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
local live = {}
if #nodes == 0 then
    return live
end
local beats = redis.call('HMGET', KEYS[2], unpack(nodes))
for i, node in ipairs(nodes) do
    table.insert(live, node)
    table.insert(live, beats[i] or '')
end
return live
"""
)
# KEYS: workers. ARGV: nodes. 1 for each node alive now, else 0.
_ALIVE = (
    _NOW
    + """
local alive = {}
for i, node in ipairs(ARGV) do
    local until_ms = redis.call('ZSCORE', KEYS[1], node)
    alive[i] = (until_ms and tonumber(until_ms) > now) and 1 or 0
end
return alive
"""
)
# KEYS: workers, beats. ARGV: node.
_WITHDRAW = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
"""


def announce(client: redis.Redis, node: str, beat: WorkerBeat) -> None:
    """One beat of the worker ``node`` (in the worker; raises ``redis.RedisError``)."""
    ttl_ms = int(HEARTBEAT_TTL_S * 1000)
    client.eval(_BEAT, 2, WORKERS_KEY, BEATS_KEY, node, beat.model_dump_json(), ttl_ms)


def withdraw(client: redis.Redis, node: str) -> None:
    """The worker ``node`` stops: gone at once, not after its last beat's time to live."""
    client.eval(_WITHDRAW, 2, WORKERS_KEY, BEATS_KEY, node)


async def live_beats(client: redis.asyncio.Redis) -> dict[str, WorkerBeat | None]:
    """Every live worker's beat by node name, read now (raises ``redis.RedisError``). A
    None is a worker whose beat this release cannot read (another release's shape)."""
    flat: list[Any] = await client.eval(_LIVE, 2, WORKERS_KEY, BEATS_KEY)  # type: ignore[misc]
    nodes, beats = flat[0::2], flat[1::2]
    return {_text(node): read_beat(beat or None) for node, beat in zip(nodes, beats, strict=True)}


def running_jobs(client: redis.Redis) -> dict[str, set[str] | None]:
    """The jobs each live worker says its processes run, by node name, read now (raises
    ``redis.RedisError``); None for a worker that does not say (another release), whose
    jobs are not known. A worker not in it has not beaten since its entry's moment (or
    since Redis restarted empty)."""
    flat: list[Any] = client.eval(_LIVE, 2, WORKERS_KEY, BEATS_KEY)  # type: ignore[assignment]
    running: dict[str, set[str] | None] = {}
    for node, raw in zip(flat[0::2], flat[1::2], strict=True):
        beat = read_beat(raw or None)
        jobs = None if beat is None or beat.running is None else set(beat.running)
        running[_text(node)] = jobs
    return running


def alive(client: redis.Redis, nodes: list[str]) -> list[bool]:
    """Whether each of ``nodes`` is alive now (raises ``redis.RedisError``)."""
    if not nodes:
        return []
    return [bool(flag) for flag in client.eval(_ALIVE, 1, WORKERS_KEY, *nodes)]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value

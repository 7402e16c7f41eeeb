"""deploy/haproxy.cfg, run by the real HAProxy: each chat's updates reach one replica, in order.

The replicas here are plain recording HTTP servers: what is tested is the balancer's choice,
read from the update body as Telegram sends it (the bot behind it has its own tests).
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from typing import Any

import httpx
import pytest
import tornado.web
from servers.haproxy import running_haproxy
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

pytestmark = pytest.mark.scale

SECRET = "s3cret-token_ABC"


class _Recorder(tornado.web.RequestHandler):
    def initialize(self, name: str, seen: list[tuple[str, dict[str, Any], str | None]]) -> None:
        self.name = name
        self.seen = seen

    def post(self) -> None:
        header = self.request.headers.get("X-Telegram-Bot-Api-Secret-Token")
        self.seen.append((self.name, json.loads(self.request.body), header))
        self.set_status(200)


class _Replica:
    def __init__(self, name: str, seen: list[tuple[str, dict[str, Any], str | None]]) -> None:
        app = tornado.web.Application([(r"/telegram", _Recorder, {"name": name, "seen": seen})])
        self.server = HTTPServer(app)
        sockets = bind_sockets(0, "127.0.0.1")
        self.server.add_sockets(sockets)
        self.port = sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Gone, as a replica that dies is: HAProxy's kept-alive connections to it close too
        (else it would still answer on them until HAProxy's checks mark it down)."""
        self.server.stop()
        await self.server.close_all_connections()


def _update(update_id: int, chat_id: int, kind: str) -> dict[str, Any]:
    chat = {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"}
    user = {"id": abs(chat_id) % 1_000_000 + 1, "is_bot": False, "first_name": "T"}
    message = {"message_id": update_id, "date": 0, "chat": chat, "from": user, "text": "hi"}
    body: dict[str, Any] = {"update_id": update_id}
    if kind == "callback_query":
        body[kind] = {"id": str(update_id), "from": user, "chat_instance": "x", "data": "run"}
        body[kind]["message"] = message
    elif kind == "my_chat_member":
        member = {"status": "member", "user": user}
        body[kind] = {"chat": chat, "from": user, "date": 0}
        body[kind] |= {"old_chat_member": member, "new_chat_member": member}
    else:
        body[kind] = message
    return body


KINDS = ["message", "edited_message", "callback_query", "my_chat_member", "message"]
CHATS = [100 + i * 7919 for i in range(20)] + [-1001000000000 - i for i in range(20)]


def _chat_of(update: dict[str, Any]) -> int:
    for kind in ("message", "edited_message", "my_chat_member"):
        if kind in update:
            return update[kind]["chat"]["id"]
    return update["callback_query"]["message"]["chat"]["id"]


async def _send_chat(client: httpx.AsyncClient, url: str, chat_id: int, first_id: int) -> None:
    # One chat's updates one after another, as Telegram delivers them (it waits for each).
    for n, kind in enumerate(KINDS):
        response = await client.post(
            url,
            json=_update(first_id + n, chat_id, kind),
            headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
        )
        assert response.status_code == 200


async def _deliver_all(url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        await asyncio.gather(
            *(_send_chat(client, url, chat, 1000 * i) for i, chat in enumerate(CHATS))
        )


def _replica_of_chat(seen: list[tuple[str, dict[str, Any], str | None]]) -> dict[int, set[str]]:
    where: dict[int, set[str]] = defaultdict(set)
    for name, update, _ in seen:
        where[_chat_of(update)].add(name)
    return where


async def test_each_chat_stays_on_one_replica_in_order_and_moves_only_when_its_replica_goes():
    seen: list[tuple[str, dict[str, Any], str | None]] = []
    replicas = [_Replica("r1", seen), _Replica("r2", seen)]
    with running_haproxy([r.port for r in replicas]) as port:
        url = f"http://127.0.0.1:{port}/telegram"
        await _deliver_all(url)

        assert len(seen) == len(CHATS) * len(KINDS)
        where = _replica_of_chat(seen)
        assert all(len(names) == 1 for names in where.values()), where
        assert {next(iter(names)) for names in where.values()} == {"r1", "r2"}
        for chat in CHATS:
            ids = [u["update_id"] for _, u, _ in seen if _chat_of(u) == chat]
            assert ids == sorted(ids)
        assert {header for _, _, header in seen} == {SECRET}

        # Replica 2 leaves: its chats move to replica 1, replica 1's chats stay where they were.
        before = {chat: next(iter(names)) for chat, names in where.items()}
        await replicas[1].stop()
        seen.clear()
        await _deliver_all(url)
        after = _replica_of_chat(seen)
        assert len(seen) == len(CHATS) * len(KINDS)
        assert all(names == {"r1"} for names in after.values())
        assert sum(replica == "r1" for replica in before.values()) < len(CHATS)
    await replicas[0].stop()

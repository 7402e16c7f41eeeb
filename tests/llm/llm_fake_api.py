"""A fake model API on 127.0.0.1, so the real SDK code runs over a real socket.

The server answers each path from its own queue of canned responses, in order, and records
every request (method, path, headers, JSON body) for the test to assert on. A request for
which nothing is queued gets a 500 with ``x-should-retry: false``, so that a test that sent
more requests than it expected fails at once with a clear message instead of retrying.
The body builders below speak the OpenAI Chat Completions and Anthropic Messages formats.

Transport faults, for the fault suite: a canned answer can be a 502 with nginx's HTML page
(``bad_gateway``), a connection dropped before the model saw the request or after it
answered (``dropped``), or slow (``delay_s``); ``outage`` drops every request for a while.

For many conversations at once (whose requests interleave in no set order), ``respond``
gives a path a function of the request body that answers whatever the queue does not.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

BAD_GATEWAY_HTML = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    b"</body>\r\n</html>\r\n"
)


@dataclass(frozen=True)
class Canned:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    #: Sent as is instead of ``body`` as JSON: for bodies ``json.dumps`` cannot or would not
    #: write (an HTML error page, not JSON at all, nested deeper than the recursion limit).
    raw: bytes | None = None
    content_type: str = "application/json"
    #: Close the connection unanswered: "before" the model saw the request, or "after" it
    #: answered (the answer, and what it cost, lost on the way back); "midway": its status
    #: and headers sent, and half of its body, as a server that dies while it answers.
    drop: Literal["before", "after", "midway"] | None = None


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeAPIServer:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._queues: dict[str, deque[Canned]] = defaultdict(deque)
        self._responders: dict[str, Callable[[Any], Canned]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._outage_until = 0.0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        # A short poll interval: shutdown() waits for it, once per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAPIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers that are sleeping out a delay
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def queue(self, path: str, *responses: Canned) -> None:
        with self._lock:
            self._queues[path].extend(responses)

    def respond(self, path: str, responder: Callable[[Any], Canned]) -> None:
        """Answer requests to ``path`` that find its queue empty with ``responder(body)``."""
        with self._lock:
            self._responders[path] = responder

    def outage(self, seconds: float) -> None:
        """The provider unreachable for ``seconds``: every request's connection is dropped,
        and nothing queued is used."""
        self._outage_until = time.monotonic() + seconds

    def requests_to(self, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.path == path]

    def _next(self, method: str, path: str, headers: dict[str, str], body: Any) -> Canned:
        with self._lock:
            self.requests.append(Recorded(method, path, headers, body))
            if self._queues[path]:
                return self._queues[path].popleft()
            responder = self._responders.get(path)
        if responder is not None:
            return responder(body)
        return Canned(
            status=500,
            body={"error": {"message": f"fake server: nothing queued for {method} {path}"}},
            headers={"x-should-retry": "false"},
        )

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._answer(None)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                self._answer(json.loads(raw) if raw else None)

            def _answer(self, body: Any) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                if time.monotonic() < fake._outage_until:
                    with fake._lock:
                        fake.requests.append(Recorded(self.command, self.path, headers, body))
                    self.close_connection = True
                    return
                canned = fake._next(self.command, self.path, headers, body)
                if canned.delay_s and fake._stopping.wait(canned.delay_s):
                    return
                if canned.drop in ("before", "after"):
                    self.close_connection = True  # no answer: the client sees the socket close
                    return
                payload = canned.raw if canned.raw is not None else json.dumps(canned.body).encode()
                try:
                    self.send_response(canned.status)
                    self.send_header("content-type", canned.content_type)
                    self.send_header("content-length", str(len(payload)))
                    for name, value in canned.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if canned.drop == "midway":
                        self.wfile.write(payload[: len(payload) // 2])
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        return Handler


def bad_gateway() -> Canned:
    """A 502 from a proxy in front of the provider: an HTML page, not the provider's JSON."""
    return Canned(status=502, raw=BAD_GATEWAY_HTML, content_type="text/html")


def dropped(when: Literal["before", "after"] = "before") -> Canned:
    """The connection closes with no answer, before or after the model did the work."""
    return Canned(drop=when)


def cut_midway(answer: Canned) -> Canned:
    """``answer`` cut off halfway through its body: the connection closes mid-answer."""
    return replace(answer, drop="midway")


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- OpenAI Chat Completions ---------------------------------------------------------------

OPENAI_PATH = "/v1/chat/completions"


def openai_completion(
    text: str | None = None,
    *,
    tool_calls: list[tuple[str, str, str]] = (),  # (id, name, arguments as sent)
    model: str = "gpt-4o-mini-2024-07-18",
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    cached_tokens: int | None = None,
    finish_reason: str | None = None,
) -> Canned:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {"id": id_, "type": "function", "function": {"name": name, "arguments": args}}
            for id_, name, args in tool_calls
        ]
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return Canned(
        body={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1700000000,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
                }
            ],
            "usage": usage,
        }
    )


def openai_error(status: int, message: str, headers: dict[str, str] | None = None) -> Canned:
    return Canned(
        status=status,
        body={"error": {"message": message, "type": "error", "code": None}},
        headers=headers or {},
    )


# --- Anthropic Messages --------------------------------------------------------------------

ANTHROPIC_PATH = "/v1/messages"


def anthropic_message(
    *blocks: dict[str, Any],
    model: str = "claude-sonnet-4-6",
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read: int | None = None,
    cache_write: int | None = None,
    stop_reason: str | None = None,
) -> Canned:
    uses_tool = any(block["type"] == "tool_use" for block in blocks)
    return Canned(
        body={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": list(blocks),
            "stop_reason": stop_reason or ("tool_use" if uses_tool else "end_turn"),
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": cache_write,
            },
        }
    )


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(id_: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": arguments}


def anthropic_error(status: int, message: str, headers: dict[str, str] | None = None) -> Canned:
    kind = {401: "authentication_error", 429: "rate_limit_error"}.get(status, "api_error")
    return Canned(
        status=status,
        body={"type": "error", "error": {"type": kind, "message": message}},
        headers=headers or {},
    )


# --- Content faults: an HTTP 200 whose body is no usable model answer ---------------------
# Each builder below is one way a model (or a proxy in front of it) has been seen to fail
# while the transport succeeds, for both wire formats.


def nested_json(depth: int, leaf: str = "1") -> str:
    """A JSON object nested ``depth`` levels deep, written without recursion."""
    return '{"a": ' * depth + leaf + "}" * depth


def non_json_body(content_type: str = "application/json") -> Canned:
    """A body cut off mid-way (a proxy that gave up), or an HTML error page."""
    if content_type == "application/json":
        return Canned(raw=b'{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{')
    return Canned(raw=b"<html><body>upstream error</body></html>", content_type=content_type)


def openai_null_message() -> Canned:
    canned = openai_completion("unused")
    canned.body["choices"][0]["message"] = None
    return canned


def openai_nested_arguments(depth: int = 5000) -> Canned:
    query = '{"query": ' + nested_json(depth) + "}"
    return openai_completion(tool_calls=[("call_deep", "execute_query", query)])


def openai_nan_query() -> Canned:
    # NaN is not JSON, but Python's json module (and so the SDK) reads it as a float.
    query = '{"query": {"session": "RTH", "from": "daily", "select": "mean(range)", "limit": NaN}}'
    return openai_completion(tool_calls=[("call_nan", "execute_query", query)])


def openai_invalid_tool_name(name: str = "execute query; DROP TABLE chats") -> Canned:
    return openai_completion(tool_calls=[("call_bad", name, '{"query": {}}')])


def anthropic_null_message() -> Canned:
    canned = anthropic_message(text_block("unused"))
    canned.body["content"] = None
    return canned


def anthropic_nested_input(depth: int = 5000) -> Canned:
    # json.dumps cannot write this (it recurses), so the body is spliced as text.
    canned = anthropic_message(tool_use_block("toolu_deep", "execute_query", {"query": "HOLE"}))
    raw = json.dumps(canned.body).replace('"HOLE"', nested_json(depth))
    return Canned(raw=raw.encode())


def anthropic_nan_query() -> Canned:
    query = {"session": "RTH", "from": "daily", "select": "mean(range)", "limit": float("nan")}
    # json.dumps writes the float as the bare word NaN, as a faulty server would.
    return anthropic_message(tool_use_block("toolu_nan", "execute_query", {"query": query}))


def anthropic_invalid_tool_name(name: str = "execute query; DROP TABLE chats") -> Canned:
    return anthropic_message(tool_use_block("toolu_bad", name, {"query": {}}))

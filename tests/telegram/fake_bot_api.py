"""A fake Telegram Bot API on 127.0.0.1, served from the test's own event loop.

The real python-telegram-bot talks to it over a real socket, so everything between the bot's
handlers and the wire is exercised: URL building, form and multipart encoding, the
``{"ok": ..., "result": ...}`` envelope, error mapping (``RetryAfter``, ``BadRequest``).

The server answers like Telegram does, including the failures that catch real bugs: HTML that
Telegram cannot parse, texts over 4096 characters, callback data over 64 bytes, edits that
change nothing, unknown messages and callback queries. Every call is recorded in order; tests
queue updates with :meth:`FakeBotAPI.inject` (built by the update factories) and wait for the
bot's answers with :meth:`FakeBotAPI.wait_for`.

Transport faults, as a real network and Telegram's front ends produce them, for the fault
suite: :meth:`FakeBotAPI.fault_next` (a 502 with an HTML body, the connection dropped before
or after the request is handled, a slow answer) and :meth:`FakeBotAPI.outage` (every request
dropped for a while); :meth:`FakeBotAPI.fail_next` gives Telegram's own error answers (429
with ``retry_after``, 500, 400…).

Not covered: MarkdownV2/Markdown parsing (such texts are kept as sent), media groups, inline
mode, payments; any method not listed in ``_METHODS`` answers 404.

Webhook mode: after ``setWebhook`` the fake POSTs each update to the URL, as Telegram does,
with the ``secret_token`` header; an update counts as delivered on a 2xx answer and is retried
otherwise. One chat's updates go one at a time, in order; different chats' go concurrently,
up to ``max_connections``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import json
import re
import struct
import time
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal

import tornado.web
from telegram import Bot
from telegram.ext import Application, ApplicationBuilder
from tornado.httpserver import HTTPServer
from tornado.httputil import HTTPServerRequest
from tornado.netutil import bind_sockets

TOKEN = "123456:TEST-TOKEN"
BOT_USER: dict[str, Any] = {
    "id": 999,
    "is_bot": True,
    "first_name": "Barb",
    "username": "barb_test_bot",
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
    "can_connect_to_business": False,
    "has_main_web_app": False,
}
MESSAGE_LIMIT = 4096  # UTF-16 code units, after entity parsing
CAPTION_LIMIT = 1024
CALLBACK_DATA_LIMIT = 64  # bytes
SEND_METHODS = ("sendMessage", "sendPhoto", "sendDocument")
# fmt: off
CHAT_ACTIONS = frozenset({
    "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice",
    "upload_document", "choose_sticker", "find_location", "record_video_note",
    "upload_video_note",
})
# fmt: on
NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are "
    "exactly the same as a current content and reply markup of the message"
)
QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"
#: What nginx in front of Telegram answers when the backend is down: HTML, not JSON.
BAD_GATEWAY_HTML = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n"
    "</body>\r\n</html>\r\n"
)
#: Transport faults: a 502 with an HTML body; the connection closed before the request is
#: handled (nothing happened) or after (it happened, the bot never hears so); a slow answer;
#: an answer held until the test lets it go (``hold_next``).
FaultKind = Literal["html_502", "drop_before", "drop_after", "slow", "held"]


# How long a wait for what a test expects lasts: generous, since a loaded two-core machine
# runs a query and draws its chart several times slower than an idle one (an 85-column
# query's chart took over 10 s there); a test that passes never waits it out.
WAIT_S = 30.0


@dataclass(frozen=True)
class UploadedFile:
    filename: str
    content: bytes
    content_type: str


#: Calls whose words the person reads: messages, and photos by their captions.
WORDS = ("sendMessage", "sendPhoto")


@dataclass
class Recorded:
    """One call as the fake received it; ``status``/``response`` are filled once answered."""

    method: str
    params: dict[str, Any]
    files: dict[str, UploadedFile] = field(default_factory=dict)
    status: int = 0
    response: dict[str, Any] | None = None
    #: ``time.perf_counter()`` when the answer was ready (for benchmarks).
    answered_at: float = 0.0
    #: The transport fault the call met (``fault_next``, ``outage``), if any.
    fault: FaultKind | None = None

    @property
    def result(self) -> Any:
        return (self.response or {}).get("result")

    def summary(self) -> str:
        """One line: method, chat, text (as users saw it, once sent), files, status."""
        shown_in = self.result if self.status == 200 and isinstance(self.result, dict) else {}
        source = shown_in if "text" in shown_in or "caption" in shown_in else self.params
        text = source.get("text", source.get("caption", ""))
        chat = f" chat={self.params['chat_id']}" if "chat_id" in self.params else ""
        shown = f" {str(text)[:60]!r}" if text else ""
        files = f" files={sorted(self.files)}" if self.files else ""
        return f"{self.method}{chat}{shown}{files} -> {self.status or 'pending'}"


class ApiError(Exception):
    """A Telegram error answer: ``{"ok": false, "error_code": ..., "description": ...}``."""

    def __init__(
        self,
        error_code: int,
        description: str,
        retry_after: int | None = None,
        *,
        migrate_to_chat_id: int | None = None,
    ):
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.retry_after = retry_after
        self.migrate_to_chat_id = migrate_to_chat_id

    def envelope(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.error_code,
            "description": self.description,
        }
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        if self.migrate_to_chat_id is not None:
            body["parameters"] = {"migrate_to_chat_id": self.migrate_to_chat_id}
        return body


def bad_request(detail: str) -> ApiError:
    return ApiError(400, f"Bad Request: {detail}")


@dataclass
class _Failure:
    error: ApiError
    chat_id: int | str | None
    times: int


class Held:
    """A call the fake holds until the test lets it go (``FakeBotAPI.hold_next``): the test
    waits for it to arrive, does what must happen while Telegram takes its time, then
    releases it, and the call is carried out and answered."""

    def __init__(self) -> None:
        self._arrived = asyncio.Event()
        self._released = asyncio.Event()

    async def arrived(self, timeout: float = WAIT_S) -> None:
        async with asyncio.timeout(timeout):
            await self._arrived.wait()

    def release(self) -> None:
        self._released.set()


@dataclass
class _Fault:
    kind: FaultKind
    chat_id: int | str | None
    times: int
    delay_s: float
    held: Held | None = None


@dataclass
class _StoredFile:
    content: bytes
    file_unique_id: str
    file_path: str


def _update_chat(update: dict[str, Any]) -> Any:
    """The chat an update belongs to (its sender's id when it has no chat)."""
    for value in update.values():
        if not isinstance(value, dict):
            continue
        message = value.get("message") if "chat" not in value else value
        if isinstance(message, dict) and "chat" in message:
            return message["chat"]["id"]
        if "from" in value:
            return ("user", value["from"]["id"])
    return None


class _Pulse:
    """Wakes every current waiter at once; later waiters wait for the next fire."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        event = self._event
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(timeout, 0)):
                await event.wait()


# ---------------------------------------------------------------- text, entities, parameters


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: entity offsets and limits are in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


_MENTION = re.compile(r"(?<![\w@])@[A-Za-z0-9_]{3,32}(?![\w@])")
_COMMAND = re.compile(r"(?<![\w/@])/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![\w/@])")


def mention_entities(text: str) -> list[dict[str, Any]]:
    """``mention`` entities for every @username in ``text``, with UTF-16 offsets."""
    return _entities_for(_MENTION, "mention", text)


def command_entities(text: str) -> list[dict[str, Any]]:
    """``bot_command`` entities for every /command (or /command@bot) in ``text``."""
    return _entities_for(_COMMAND, "bot_command", text)


def _entities_for(pattern: re.Pattern[str], kind: str, text: str) -> list[dict[str, Any]]:
    return [
        {
            "type": kind,
            "offset": utf16_len(text[: m.start()]),
            "length": utf16_len(m.group()),
        }
        for m in pattern.finditer(text)
    ]


_HTML_KINDS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
}
_HTML_ENTITY = re.compile(r"&(lt|gt|amp|quot|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_NAME_TOKEN = re.compile(r"[A-Za-z0-9.\-]*")


def _html_entity(source: str, i: int) -> tuple[str, int] | None:
    m = _HTML_ENTITY.match(source, i)
    if not m:
        return None  # Telegram keeps an unknown entity as literal text
    name = m.group(1)
    if name in _NAMED:
        return _NAMED[name], m.end()
    code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
    return (chr(code), m.end()) if 0 < code <= 0x10FFFF else None


def parse_html(source: str) -> tuple[str, list[dict[str, Any]]]:
    """Text and entities from Telegram-flavoured HTML, failing where Telegram fails.

    Follows tdlib's ``parse_html``: only Telegram's tags, tags must nest and close, a bare
    ``<`` is an error, the four named entities and numeric ones are decoded.
    """
    out: list[str] = []
    length = 0  # UTF-16 length of out
    stack: list[tuple[str, int, dict[str, str]]] = []
    entities: list[dict[str, Any]] = []
    n = len(source)

    def at(pos: int) -> str:
        return f"byte offset {len(source[:pos].encode())}"

    def fail(detail: str) -> ApiError:
        return bad_request(f"can't parse entities: {detail}")

    i = 0
    while i < n:
        ch = source[i]
        if ch == "&" and (decoded := _html_entity(source, i)):
            out.append(decoded[0])
            length += utf16_len(decoded[0])
            i = decoded[1]
            continue
        if ch != "<":
            out.append(ch)
            length += utf16_len(ch)
            i += 1
            continue
        begin = i
        if source.startswith("</", i):
            if not stack:
                raise fail(f"Unexpected end tag at {at(begin)}")
            j = i + 2
            while j < n and not source[j].isspace() and source[j] != ">":
                j += 1
            end_name = source[i + 2 : j].lower()
            while j < n and source[j].isspace():
                j += 1
            if j >= n or source[j] != ">":
                raise fail(f"Unclosed end tag at {at(begin)}")
            tag, offset, attrs = stack.pop()
            if end_name and end_name != tag:
                raise fail(
                    f'Unmatched end tag at {at(begin)}, expected "</{tag}>", found "</{end_name}>"'
                )
            if length > offset:
                _close_html_entity(entities, tag, offset, length - offset, attrs, out)
            i = j + 1
            continue
        j = i + 1
        while j < n and not source[j].isspace() and source[j] != ">":
            j += 1
        if j >= n:
            raise fail(f"Unclosed start tag at {at(begin)}")
        tag = source[i + 1 : j].lower()
        if tag not in _HTML_KINDS:
            raise fail(f'Unsupported start tag "{tag}" at {at(begin)}')
        attrs, i = _html_attributes(source, j, tag, fail, at)
        if tag == "span" and attrs.get("class") != "tg-spoiler":
            raise fail(f'Tag "span" must have class "tg-spoiler" at {at(begin)}')
        stack.append((tag, length, attrs))
    if stack:
        raise fail(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    for entity in entities:
        entity.pop("_language", None)
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _html_attributes(
    source: str, i: int, tag: str, fail: Callable[[str], ApiError], at: Callable[[int], str]
) -> tuple[dict[str, str], int]:
    """Attributes from ``i`` (just after the tag name) to the closing ``>``; returns the end."""
    attrs: dict[str, str] = {}
    n = len(source)
    while True:
        while i < n and source[i].isspace():
            i += 1
        if i >= n:
            raise fail(f"Unclosed start tag at {at(i)}")
        if source[i] == ">":
            return attrs, i + 1
        start = i
        while i < n and not source[i].isspace() and source[i] not in "=>":
            i += 1
        name = source[start:i].lower()
        while i < n and source[i].isspace():
            i += 1
        if i >= n or source[i] != "=":
            if tag == "blockquote" and name == "expandable":
                attrs[name] = ""
                continue
            raise fail(
                f'Expected equal sign in declaration of an attribute of the tag "{tag}" '
                f"at {at(start)}"
            )
        i += 1
        while i < n and source[i].isspace():
            i += 1
        if i >= n:
            raise fail(f"Unclosed start tag at {at(i)}")
        if source[i] in "'\"":
            quote = source[i]
            end = source.find(quote, i + 1)
            if end < 0:
                raise fail(f"Unclosed start tag at {at(start)}")
            raw, i = source[i + 1 : end], end + 1
            value, k = [], 0
            while k < len(raw):
                decoded = _html_entity(raw, k) if raw[k] == "&" else None
                value.append(decoded[0] if decoded else raw[k])
                k = decoded[1] if decoded else k + 1
            attrs[name] = "".join(value)
        else:
            m = _NAME_TOKEN.match(source, i)
            assert m is not None  # the pattern matches the empty string
            i = m.end()
            if i < n and not source[i].isspace() and source[i] != ">":
                raise fail(f"Unexpected end of name token at {at(m.start())}")
            attrs[name] = m.group().lower()


def _close_html_entity(
    entities: list[dict[str, Any]],
    tag: str,
    offset: int,
    length: int,
    attrs: dict[str, str],
    out: list[str],
) -> None:
    entity: dict[str, Any] = {"type": _HTML_KINDS[tag], "offset": offset, "length": length}
    inner = entities[-1] if entities else {}
    same_span = (inner.get("offset"), inner.get("length")) == (offset, length)
    if tag == "a":
        # No href: the link is the text itself (its last `length` UTF-16 units).
        tail = "".join(out).encode("utf-16-le")[-2 * length :].decode("utf-16-le")
        entity["url"] = attrs.get("href") or tail
    elif tag == "code" and attrs.get("class", "").startswith("language-"):
        entity["_language"] = attrs["class"].removeprefix("language-")
    elif tag == "pre" and inner.get("type") == "code" and same_span:
        # <pre><code class="language-x">…</code></pre> is one pre entity with a language
        entities.pop()
        if inner.get("_language"):
            entity["language"] = inner["_language"]
    elif tag == "blockquote" and "expandable" in attrs:
        entity["type"] = "expandable_blockquote"
    elif tag == "tg-emoji":
        entity["custom_emoji_id"] = attrs.get("emoji-id", "")
    entities.append(entity)


def _trim(text: str, entities: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Telegram strips leading and trailing whitespace; entities move and shrink with it."""
    stripped = text.strip()
    if stripped == text:
        return text, entities
    shift = utf16_len(text[: len(text) - len(text.lstrip())])
    end = utf16_len(stripped)
    kept = []
    for e in entities:
        start, stop = max(e["offset"] - shift, 0), min(e["offset"] + e["length"] - shift, end)
        if stop > start:
            kept.append({**e, "offset": start, "length": stop - start})
    return stripped, kept


def formatted(
    text: str, parse_mode: str | None, entities: list[dict[str, Any]] | None
) -> tuple[str, list[dict[str, Any]]]:
    """What Telegram stores for a text or caption: parsed (HTML only), trimmed."""
    if entities is not None:
        return _trim(text, entities)
    mode = (parse_mode or "").lower()
    if mode == "html":
        return _trim(*parse_html(text))
    if mode not in ("", "markdown", "markdownv2"):
        raise bad_request("unsupported parse_mode")
    return _trim(text, [])


# fmt: off
_JSON_FIELDS = frozenset({
    "reply_markup", "entities", "caption_entities", "reply_parameters", "link_preview_options",
    "allowed_updates", "commands", "scope", "media", "results", "menu_button",
})
_STRING_FIELDS = frozenset({
    "text", "caption", "callback_query_id", "inline_message_id", "parse_mode", "url", "action",
    "language_code", "secret_token", "file_id", "description", "short_description", "name",
    "message_effect_id", "business_connection_id", "photo", "document",
})
# fmt: on


def decode_param(name: str, value: Any) -> Any:
    """Form fields arrive as strings: numbers, booleans and JSON objects are decoded."""
    if not isinstance(value, str) or name in _STRING_FIELDS:
        return value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    if name in _JSON_FIELDS or isinstance(decoded, bool | int | float | list | dict):
        return decoded
    return value


def image_size(content: bytes) -> tuple[int, int] | None:
    """Width and height of a PNG or JPEG, or None if Telegram could not read it as a photo."""
    if content.startswith(b"\x89PNG\r\n\x1a\n") and len(content) >= 24:
        return struct.unpack(">II", content[16:24])
    if content.startswith(b"\xff\xd8"):
        i = 2
        while i + 9 < len(content):
            if content[i] != 0xFF:
                return None
            marker = content[i + 1]
            (size,) = struct.unpack(">H", content[i + 2 : i + 4])
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                height, width = struct.unpack(">HH", content[i + 5 : i + 9])
                return width, height
            i += 2 + size
    return None


def png_bytes(width: int = 2, height: int = 1) -> bytes:
    """A valid grey PNG of the given size, for photo tests."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


# ---------------------------------------------------------------------------- the fake server


def media(kind: str) -> dict[str, Any]:
    """The body of a message that is not text, as Telegram sends it: ``photo``,
    ``document``, ``sticker`` or ``voice``."""
    file = {"file_id": f"fake-{kind}", "file_unique_id": f"u-{kind}"}
    bodies: dict[str, dict[str, Any]] = {
        "photo": {"photo": [{**file, "width": 90, "height": 60, "file_size": 1200}]},
        "document": {"document": {**file, "file_name": "NQ_1m.csv", "mime_type": "text/csv"}},
        "sticker": {
            "sticker": {
                **file,
                "type": "regular",
                "width": 512,
                "height": 512,
                "is_animated": False,
                "is_video": False,
            }
        },
        "voice": {"voice": {**file, "duration": 3, "mime_type": "audio/ogg"}},
    }
    return bodies[kind]


class FakeBotAPI:
    """The Bot API for one test: start it in the test's loop, point PTB at :attr:`url`."""

    def __init__(
        self, token: str = TOKEN, *, bot: dict[str, Any] | None = None, long_poll_cap: float = 1.0
    ):
        self.token = token
        self.bot: dict[str, Any] = dict(bot or BOT_USER)
        self.long_poll_cap = long_poll_cap  # getUpdates waits at most this long
        self.url = ""
        self.requests: list[Recorded] = []
        self.errors: list[str] = []  # bugs in the fake itself; the fixture fails the test
        self.webhook_url = ""
        self.webhook_secret: str | None = None
        self.webhook_connections = 40
        self.webhook_deliveries: list[tuple[int, int]] = []  # (update_id, HTTP status or 0)
        self._webhook_task: asyncio.Task[None] | None = None
        self.commands: dict[tuple[str, str], list[dict[str, Any]]] = {}
        #: Per group, its owner ("creator") and administrators by user id, as getChatMember
        #: answers; everyone else is a "member".
        self.chat_admins: dict[int | str, dict[int, str]] = {}
        self._server: HTTPServer | None = None
        self._stopping = False
        self._in_flight = 0
        self._pending: list[dict[str, Any]] = []
        self._confirmed = 0  # updates below this id are confirmed and never sent again
        self._next_update_id = 1
        self._failures: dict[str, list[_Failure]] = {}
        self._faults: dict[str, list[_Fault]] = {}
        self._held: list[Held] = []
        self._outage_until = 0.0  # time.monotonic() until which every request is dropped
        self._chats: dict[int | str, dict[str, Any]] = {}
        #: Groups upgraded to supergroups (``upgrade_group``): old id → new id.
        self._upgraded: dict[int | str, int] = {}
        self._next_message_id: dict[int | str, int] = {}
        self._messages: dict[tuple[int | str, int], dict[str, Any]] = {}
        self._files: dict[str, _StoredFile] = {}
        self._callbacks: set[str] = set()
        self._answered: set[str] = set()
        self._counter = 0
        self._updates_pulse = _Pulse()
        self._calls_pulse = _Pulse()

    # ---- lifecycle

    async def start(self) -> None:
        app = tornado.web.Application(
            [
                (r"/bot([^/]*)/([^/?]*)", _ApiHandler, {"fake": self}),
                (r"/file/bot([^/]*)/(.+)", _FileHandler, {"fake": self}),
                (r".*", _NotFoundHandler),
            ],
            log_function=lambda handler: None,
        )
        self._server = HTTPServer(app)
        sockets = bind_sockets(0, "127.0.0.1")
        self._server.add_sockets(sockets)
        self.url = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        if self._server is None:
            return
        self._stopping = True
        self._updates_pulse.fire()  # long polls answer now
        for held in self._held:  # and calls still held
            held.release()
        if self._webhook_task is not None:
            self._webhook_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._webhook_task
            self._webhook_task = None
        self._server.stop()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 2
        while self._in_flight and loop.time() < deadline:
            await asyncio.sleep(0.005)
        await self._server.close_all_connections()
        self._server = None

    async def __aenter__(self) -> FakeBotAPI:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def make_bot(self, **kwargs: Any) -> Bot:
        """A ``telegram.Bot`` pointed at this fake (use it as ``async with``)."""
        return Bot(self.token, **self.bot_kwargs(), **kwargs)

    def bot_kwargs(self) -> dict[str, str]:
        return {"base_url": f"{self.url}/bot", "base_file_url": f"{self.url}/file/bot"}

    def application_builder(self) -> ApplicationBuilder:  # type: ignore[type-arg]
        """An ``ApplicationBuilder`` with the token and both base URLs set to this fake."""
        urls = self.bot_kwargs()
        return (
            ApplicationBuilder()
            .token(self.token)
            .base_url(urls["base_url"])
            .base_file_url(urls["base_file_url"])
        )

    # ---- what tests call

    def inject(self, update: dict[str, Any]) -> int:
        """Queue an update for getUpdates; returns its update_id (assigned if missing).

        An update whose id is already pending, or below the confirmed offset, is not queued
        again: Telegram delivers each update until it is confirmed, then never again.
        """
        update = self.prepare(update)
        update_id = update["update_id"]
        pending = any(u["update_id"] == update_id for u in self._pending)
        if update_id >= self._confirmed and not pending:
            self._pending.append(update)
            self._pending.sort(key=lambda u: u["update_id"])
            self._updates_pulse.fire()
        return update_id

    def prepare(self, update: dict[str, Any]) -> dict[str, Any]:
        """A copy of ``update`` as Telegram would send it (its update_id assigned if
        missing), its message and callback known to this fake, but not queued: for a test
        that delivers it itself (to one replica's webhook, say)."""
        update = copy.deepcopy(update)
        update_id = update.setdefault("update_id", self._next_update_id)
        self._next_update_id = max(self._next_update_id, update_id + 1)
        message = update.get("message") or update.get("edited_message")
        if message:
            self._remember(message)
        query = update.get("callback_query")
        if query:
            self._callbacks.add(query["id"])
            if query.get("message"):
                self._remember(query["message"], keep_known=True)
        return update

    @property
    def confirmed_offset(self) -> int:
        return self._confirmed

    @property
    def pending_updates(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._pending)

    def calls(self, method: str, chat_id: int | str | None = None) -> list[Recorded]:
        return [
            r
            for r in self.requests
            if r.method == method and (chat_id is None or r.params.get("chat_id") == chat_id)
        ]

    def said(self, chat_id: int | str | None = None) -> list[dict[str, Any]]:
        """What the person read, in order: every message, and every photo with its caption
        (an answer's commentary rides on its chart), as message dicts with ``text``."""
        out = []
        for r in self.requests:
            # Refused (fail_next) or not answered: not read.
            if r.method not in WORDS or r.status != 200 or r.response is None:
                continue
            if chat_id is not None and r.params.get("chat_id") != chat_id:
                continue
            message = dict(r.result)
            if r.method == "sendPhoto":
                message["text"] = message.get("caption", "")
            out.append(message)
        return out

    async def wait_said(
        self, count: int, *, chat_id: int | str | None = None, timeout: float = WAIT_S
    ) -> list[dict[str, Any]]:
        """Wait until the person has read ``count`` messages or captioned photos (``said``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            said = self.said(chat_id)
            if len(said) >= count:
                return said
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(
                    f"expected {count} message(s) or photo(s) within {timeout}s, "
                    f"got {len(said)}\n{self.describe()}"
                )
            await self._calls_pulse.wait(remaining)

    async def wait_for(
        self,
        method: str,
        count: int = 1,
        *,
        chat_id: int | str | None = None,
        timeout: float = WAIT_S,
    ) -> list[Recorded]:
        """Wait until ``count`` calls of ``method`` were answered; returns all of them."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            found = [r for r in self.calls(method, chat_id) if r.status]
            if len(found) >= count:
                return found
            remaining = deadline - loop.time()
            if remaining <= 0:
                to = f" to chat {chat_id}" if chat_id is not None else ""
                raise AssertionError(
                    f"expected {count} {method} call(s){to} within {timeout}s, "
                    f"got {len(found)}\n{self.describe()}"
                )
            await self._calls_pulse.wait(remaining)

    async def wait_confirmed(self, update_id: int, *, timeout: float = WAIT_S) -> None:
        """Wait until the bot confirmed ``update_id`` (asked getUpdates for a later offset)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._confirmed <= update_id:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(
                    f"update {update_id} not confirmed within {timeout}s "
                    f"(offset {self._confirmed})\n{self.describe()}"
                )
            await self._calls_pulse.wait(remaining)

    def describe(self) -> str:
        """Everything recorded so far (getUpdates polls counted, not listed), for failures."""
        polls = [r for r in self.requests if r.method == "getUpdates"]
        lines = [f"  {r.summary()}" for r in self.requests if r.method != "getUpdates"]
        text = "\n".join(
            [
                f"recorded calls ({len(polls)} getUpdates polls not shown):",
                *(lines or ["  (none)"]),
                f"pending updates: {[u['update_id'] for u in self._pending]}",
            ]
        )
        if self.errors:
            text += "\nerrors inside the fake:\n" + "\n".join(self.errors)
        return text

    def fail_next(
        self,
        method: str,
        *,
        error_code: int = 429,
        description: str | None = None,
        retry_after: int | None = 1,
        times: int = 1,
        chat_id: int | str | None = None,
    ) -> None:
        """The next ``times`` calls of ``method`` (to ``chat_id``, if given) fail like Telegram.

        ``retry_after`` is sent (as ``parameters.retry_after``) only with a 429; the default
        description is Telegram's for the code.
        """
        if description is None:
            description = {
                429: f"Too Many Requests: retry after {retry_after}",
                400: "Bad Request",
                401: "Unauthorized",
                403: "Forbidden: bot was blocked by the user",
            }.get(error_code, HTTPStatus(error_code).phrase)
        error = ApiError(error_code, description, retry_after if error_code == 429 else None)
        self._failures.setdefault(method.lower(), []).append(_Failure(error, chat_id, times))

    def fault_next(
        self,
        method: str,
        kind: FaultKind,
        *,
        times: int = 1,
        chat_id: int | str | None = None,
        delay_s: float = 5.0,
    ) -> None:
        """The next ``times`` calls of ``method`` (to ``chat_id``, if given) meet a transport
        fault: ``html_502`` (nginx's page, not JSON), ``drop_before`` (the connection closes
        and nothing is done), ``drop_after`` (the call is carried out, then the connection
        closes unanswered) or ``slow`` (answered after ``delay_s``)."""
        fault = _Fault(kind, chat_id, times, delay_s)
        self._faults.setdefault(method.lower(), []).append(fault)

    def hold_next(self, method: str, *, chat_id: int | str | None = None) -> Held:
        """The next call of ``method`` (to ``chat_id``, if given) is held unanswered until
        the returned ``Held`` is released: a Telegram as slow as the test needs, with no
        sleep standing in for it."""
        held = Held()
        self._held.append(held)
        self._faults.setdefault(method.lower(), []).append(_Fault("held", chat_id, 1, 0.0, held))
        return held

    def heal(self) -> None:
        """Telegram works again: the failures and faults still queued are dropped, an outage
        ends."""
        self._failures.clear()
        self._faults.clear()
        for held in self._held:
            held.release()
        self._outage_until = 0.0

    def outage(self, seconds: float) -> None:
        """Telegram unreachable for ``seconds`` from now: every request, getUpdates included,
        has its connection dropped unanswered."""
        self._outage_until = time.monotonic() + seconds

    def upgrade_group(
        self, old_id: int, new_id: int, *, user_id: int, announce: bool = True
    ) -> list[int]:
        """The group ``old_id`` becomes the supergroup ``new_id``, as Telegram does it: the
        history shows in the new chat (same message ids, buttons kept), and from now on every
        call to the old id is refused with 400 and ``parameters.migrate_to_chat_id``. With
        ``announce``, the two service messages are queued (``migrate_to_chat_id`` in the old
        chat, from the member who upgraded it; ``migrate_from_chat_id`` in the new one, from
        GroupAnonymousBot on behalf of the old group); their update ids are returned."""
        old_chat = dict(self._chats.get(old_id) or self._chat(old_id, "group", "", "Group", None))
        new_chat = {**old_chat, "id": new_id, "type": "supergroup"}
        self._chats[new_id] = new_chat
        for (chat_id, message_id), message in list(self._messages.items()):
            if chat_id == old_id:
                self._messages[(new_id, message_id)] = {**copy.deepcopy(message), "chat": new_chat}
        self._next_message_id[new_id] = self._next_message_id.get(old_id, 1)
        self._upgraded[old_id] = new_id
        if not announce:
            return []
        now = int(time.time())
        upgraded_by = {
            "message_id": self._new_message_id(old_id),
            "from": make_user(user_id, "Alice"),
            "chat": old_chat,
            "date": now,
            "migrate_to_chat_id": new_id,
        }
        anonymous = {"id": 1087968824, "is_bot": True, "first_name": "Group"}
        upgraded = {
            "message_id": self._new_message_id(new_id),
            "from": {**anonymous, "username": "GroupAnonymousBot"},
            "sender_chat": old_chat,
            "chat": new_chat,
            "date": now,
            "migrate_from_chat_id": old_id,
        }
        return [
            self.inject({"update_id": self._take_update_id(), "message": upgraded_by}),
            self.inject({"update_id": self._take_update_id(), "message": upgraded}),
        ]

    def _raise_if_upgraded(self, params: dict[str, Any]) -> None:
        new_id = self._upgraded.get(params.get("chat_id"))  # type: ignore[arg-type]
        if new_id is not None:
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                migrate_to_chat_id=new_id,
            )

    def _take_fault(self, method: str, params: dict[str, Any]) -> _Fault | None:
        if time.monotonic() < self._outage_until:
            return _Fault("drop_before", None, 1, 0.0)
        queued = self._faults.get(method.lower(), [])
        for fault in queued:
            if fault.chat_id is None or fault.chat_id == params.get("chat_id"):
                fault.times -= 1
                if fault.times <= 0:
                    queued.remove(fault)
                return fault
        return None

    def _record_fault(self, method: str, params: dict[str, Any], kind: FaultKind) -> None:
        name = _METHOD_NAMES.get(method.lower(), method)
        status = 502 if kind == "html_502" else 0
        self.requests.append(Recorded(name, params, status=status, fault=kind))
        self._calls_pulse.fire()

    def sent_text(self, chat_id: int | str) -> list[str]:
        """Texts and captions sent to the chat, in order, as users saw them when sent."""
        texts = []
        for r in self.requests:
            if r.method in SEND_METHODS and r.status == 200 and r.params.get("chat_id") == chat_id:
                text = r.result.get("text", r.result.get("caption"))
                if text is not None:
                    texts.append(text)
        return texts

    def message(self, chat_id: int | str, message_id: int) -> dict[str, Any]:
        """The current state of a message (after edits), including its ``reply_markup``."""
        try:
            return copy.deepcopy(self._messages[(chat_id, message_id)])
        except KeyError:
            known = sorted(m for c, m in self._messages if c == chat_id)
            raise AssertionError(
                f"no message {message_id} in chat {chat_id}; known ids: {known}"
            ) from None

    def messages(self, chat_id: int | str, *, from_bot: bool = True) -> list[dict[str, Any]]:
        """Current state of the chat's messages (the bot's only, by default), by id."""
        found = [
            copy.deepcopy(m)
            for (c, _), m in sorted(self._messages.items(), key=lambda kv: kv[0][1])
            if c == chat_id and (not from_bot or m.get("from", {}).get("id") == self.bot["id"])
        ]
        return found

    def file_content(self, file_id: str) -> bytes:
        return self._files[file_id].content

    def my_commands(
        self, scope: dict[str, Any] | None = None, language_code: str = ""
    ) -> list[dict[str, Any]]:
        return copy.deepcopy(self.commands.get(_commands_key(scope, language_code), []))

    # ---- update factories

    def message_update(
        self,
        *,
        chat_id: int,
        user_id: int,
        text: str,
        chat_type: str | None = None,
        first_name: str = "Alice",
        language_code: str = "en",
        reply_to_bot: bool = False,
        reply_to_message_id: int | None = None,
        entities: list[dict[str, Any]] | None = None,
        message_id: int | None = None,
        username: str | None = None,
        chat_title: str = "Test group",
        thread_id: int | None = None,
        media: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A text message from a user (``media``: a photo, sticker… in its place; ``text``
        is then its caption, if any). ``thread_id`` posts it in that forum topic. Without
        ``entities``, commands and @mentions are marked as Telegram does. ``reply_to_bot``
        replies to the bot's last message in the chat (or the message
        ``reply_to_message_id``). ``chat_type`` defaults to the chat's known type, else
        "private" for a positive ``chat_id`` and "supergroup" for a negative one."""
        user = make_user(user_id, first_name, language_code=language_code, username=username)
        chat = self._chat(chat_id, chat_type, first_name, chat_title, username)
        replied = None
        if reply_to_bot or reply_to_message_id is not None:
            replied = self._reply_target(
                chat, reply_to_message_id, from_bot=reply_to_bot, user=user
            )
        message: dict[str, Any] = {
            "message_id": message_id or self._new_message_id(chat_id),
            "from": user,
            "chat": chat,
            "date": int(time.time()),
            "text": text,
        }
        if media is not None:
            del message["text"]
            message.update(media)
            if text:
                message["caption"] = text
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        if entities is None and media is None:
            entities = sorted(
                command_entities(text) + mention_entities(text), key=lambda e: e["offset"]
            )
        if entities:
            message["entities"] = entities
        if replied is not None:
            message["reply_to_message"] = replied
        return {"update_id": self._take_update_id(), "message": message}

    def document_update(
        self,
        *,
        chat_id: int,
        user_id: int,
        content: bytes,
        file_name: str,
        caption: str | None = None,
        mime_type: str = "text/csv",
        first_name: str = "Alice",
        language_code: str = "en",
    ) -> dict[str, Any]:
        """A file sent by a user: stored here, so that getFile and the download serve it."""
        user = make_user(user_id, first_name, language_code=language_code)
        chat = self._chat(chat_id, None, first_name, "Test group", None)
        file_id, unique = self._store_file("document", content, file_name)
        message: dict[str, Any] = {
            "message_id": self._new_message_id(chat_id),
            "from": user,
            "chat": chat,
            "date": int(time.time()),
            "document": {
                "file_id": file_id,
                "file_unique_id": unique,
                "file_name": file_name,
                "mime_type": mime_type,
                "file_size": len(content),
            },
        }
        if caption:
            message["caption"] = caption
            entities = mention_entities(caption)  # Telegram marks @mentions in captions too
            if entities:
                message["caption_entities"] = entities
        return {"update_id": self._take_update_id(), "message": message}

    def callback_update(
        self,
        *,
        chat_id: int,
        user_id: int,
        message_id: int,
        data: str,
        chat_type: str | None = None,
        first_name: str = "Alice",
        language_code: str = "en",
    ) -> dict[str, Any]:
        """A button press on the bot's message ``message_id`` (its current state if sent), by a
        person whose Telegram is in ``language_code``."""
        chat = self._chat(chat_id, chat_type, first_name, "Test group", None)
        message = self._messages.get((chat_id, message_id))
        if message is None:
            message = {
                "message_id": message_id,
                "from": self._bot_from(),
                "chat": chat,
                "date": int(time.time()),
                "text": "…",
            }
        self._counter += 1
        query = {
            "id": str(4_000_000_000_000_000 + self._counter),
            "from": make_user(user_id, first_name, language_code=language_code),
            "message": copy.deepcopy(message),
            "chat_instance": str(-7_000_000_000 - abs(chat_id)),
            "data": data,
        }
        return {"update_id": self._take_update_id(), "callback_query": query}

    def mention_entities(self, text: str) -> list[dict[str, Any]]:
        return mention_entities(text)

    def _take_update_id(self) -> int:
        update_id = self._next_update_id
        self._next_update_id += 1
        return update_id

    def _chat(
        self,
        chat_id: int,
        chat_type: str | None,
        first_name: str,
        title: str,
        username: str | None,
    ) -> dict[str, Any]:
        known = self._chats.get(chat_id)
        if known is not None and chat_type in (None, known["type"]):
            return dict(known)
        chat_type = chat_type or ("private" if chat_id > 0 else "supergroup")
        if chat_type == "private":
            chat: dict[str, Any] = {"id": chat_id, "type": "private", "first_name": first_name}
            if username:
                chat["username"] = username
        else:
            chat = {"id": chat_id, "type": chat_type, "title": title}
        self._chats[chat_id] = chat
        return dict(chat)

    def _reply_target(
        self,
        chat: dict[str, Any],
        message_id: int | None,
        *,
        from_bot: bool,
        user: dict[str, Any],
    ) -> dict[str, Any]:
        chat_id = chat["id"]
        if message_id is None:
            ours = self.messages(chat_id)
            if ours:
                return _without_reply(ours[-1])
        elif (chat_id, message_id) in self._messages:
            return _without_reply(self._messages[(chat_id, message_id)])
        return {
            "message_id": message_id or self._new_message_id(chat_id),
            "from": self._bot_from() if from_bot else user,
            "chat": chat,
            "date": int(time.time()) - 60,
            "text": "…",
        }

    def _remember(self, message: dict[str, Any], *, keep_known: bool = False) -> None:
        chat_id = message["chat"]["id"]
        self._chats.setdefault(chat_id, message["chat"])
        self._next_message_id[chat_id] = max(
            self._next_message_id.get(chat_id, 1), message["message_id"] + 1
        )
        key = (chat_id, message["message_id"])
        if not (keep_known and key in self._messages):  # a press must not undo later edits
            self._messages[key] = _without_reply(message)

    def _new_message_id(self, chat_id: int | str) -> int:
        message_id = self._next_message_id.get(chat_id, 1)
        self._next_message_id[chat_id] = message_id + 1
        return message_id

    def _bot_from(self) -> dict[str, Any]:
        return {k: self.bot[k] for k in ("id", "is_bot", "first_name", "username")}

    # ---- HTTP dispatch

    async def handle(
        self,
        token: str,
        method: str,
        params: dict[str, Any],
        files: dict[str, UploadedFile],
        client_gone: Callable[[], bool],
        fault: FaultKind | None = None,
        delay_s: float = 0.0,
        held: Held | None = None,
    ) -> tuple[int, dict[str, Any]]:
        name = _METHOD_NAMES.get(method.lower(), method)
        record = Recorded(name, params, files, fault=fault)
        self.requests.append(record)
        self._in_flight += 1
        try:
            if delay_s:
                self._calls_pulse.fire()  # recorded on arrival: tests may wait for it
                await asyncio.sleep(delay_s)  # then carried out, even if the client has gone
            if held is not None:
                self._calls_pulse.fire()
                held._arrived.set()
                await held._released.wait()
            if token != self.token:
                raise ApiError(401, "Unauthorized")
            self._raise_injected_failure(name, params)
            self._raise_if_upgraded(params)
            if name not in _METHODS:
                raise ApiError(404, "Not Found: method not found")
            call = getattr(self, _METHODS[name])
            if name == "getUpdates":
                result = await call(params, client_gone)
            else:
                result = call(params, files)
                if inspect.isawaitable(result):
                    result = await result
            record.status, record.response = 200, {"ok": True, "result": result}
        except ApiError as exc:
            record.status, record.response = exc.error_code, exc.envelope()
        except Exception as exc:  # a bug in the fake: make it loud
            self.errors.append(f"{name}({params}): {exc!r}")
            record.status = 500
            record.response = {"ok": False, "error_code": 500, "description": repr(exc)}
        finally:
            self._in_flight -= 1
            record.answered_at = time.perf_counter()
        self._calls_pulse.fire()
        return record.status, record.response

    def _raise_injected_failure(self, method: str, params: dict[str, Any]) -> None:
        queued = self._failures.get(method.lower(), [])
        for failure in queued:
            if failure.chat_id is None or failure.chat_id == params.get("chat_id"):
                failure.times -= 1
                if failure.times <= 0:
                    queued.remove(failure)
                raise failure.error

    def download(self, token: str, file_path: str) -> tuple[int, bytes]:
        if token != self.token:
            return 401, b'{"ok":false,"error_code":401,"description":"Unauthorized"}'
        for stored in self._files.values():
            if stored.file_path == file_path:
                return 200, stored.content
        return 404, b'{"ok":false,"error_code":404,"description":"Not Found"}'

    # ---- Bot API methods: (params, files) -> result, or raise ApiError

    def _get_me(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        return self.bot

    async def _get_updates(self, params: dict[str, Any], client_gone: Callable[[], bool]) -> Any:
        if self.webhook_url:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = int(params.get("offset", 0))
        if offset < 0:
            self._pending = self._pending[offset:]
        elif offset > self._confirmed:
            self._confirmed = offset
            self._pending = [u for u in self._pending if u["update_id"] >= offset]
            self._calls_pulse.fire()  # for wait_confirmed
        limit = min(max(int(params.get("limit", 100)), 1), 100)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(float(params.get("timeout", 0)), self.long_poll_cap)
        while not self._pending and not self._stopping and not client_gone():
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await self._updates_pulse.wait(remaining)
        return copy.deepcopy(self._pending[:limit])

    def _set_webhook(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        self.webhook_url = params.get("url", "")
        self.webhook_secret = params.get("secret_token")
        self.webhook_connections = int(params.get("max_connections", 40))
        dropped = self._drop_pending(params)
        if self.webhook_url and self._webhook_task is None:
            self._webhook_task = asyncio.get_running_loop().create_task(self._deliver_webhooks())
        self._updates_pulse.fire()
        return dropped

    def _delete_webhook(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        self.webhook_url = ""
        return self._drop_pending(params)

    async def _deliver_webhooks(self, retry_s: float = 0.2) -> None:
        """POST pending updates to the webhook until each gets a 2xx, a chat's in order."""
        import httpx  # python-telegram-bot's own HTTP client

        busy_chats: set[Any] = set()
        in_flight: set[int] = set()
        async with httpx.AsyncClient(timeout=30) as client:

            async def deliver(update: dict[str, Any], chat: Any) -> None:
                headers = {}
                if self.webhook_secret:
                    headers["X-Telegram-Bot-Api-Secret-Token"] = self.webhook_secret
                status = 0
                try:
                    response = await client.post(self.webhook_url, json=update, headers=headers)
                    status = response.status_code
                except httpx.HTTPError:
                    pass
                self.webhook_deliveries.append((update["update_id"], status))
                if 200 <= status < 300:
                    self._pending = [u for u in self._pending if u is not update]
                    self._confirmed = max(self._confirmed, update["update_id"] + 1)
                    self._calls_pulse.fire()
                else:
                    await asyncio.sleep(retry_s)
                busy_chats.discard(chat)
                in_flight.discard(update["update_id"])
                self._updates_pulse.fire()

            tasks: set[asyncio.Task[None]] = set()
            try:
                while self.webhook_url and not self._stopping:
                    for update in list(self._pending):
                        chat = _update_chat(update)
                        if update["update_id"] in in_flight or chat in busy_chats:
                            continue
                        if len(in_flight) >= self.webhook_connections:
                            break
                        busy_chats.add(chat)
                        in_flight.add(update["update_id"])
                        task = asyncio.create_task(deliver(update, chat))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                    await self._updates_pulse.wait(1.0)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    def _drop_pending(self, params: dict[str, Any]) -> bool:
        if params.get("drop_pending_updates"):
            self._pending.clear()
            self._confirmed = self._next_update_id
        return True

    def _get_webhook_info(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        return {
            "url": self.webhook_url,
            "has_custom_certificate": False,
            "pending_update_count": len(self._pending),
        }

    def _send_message(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        text, entities = formatted(
            str(params.get("text", "")), params.get("parse_mode"), params.get("entities")
        )
        if not text:
            raise bad_request("message text is empty")
        if utf16_len(text) > MESSAGE_LIMIT:
            raise bad_request("message is too long")
        content: dict[str, Any] = {"text": text}
        if entities:
            content["entities"] = entities
        return self._new_message(params, content)

    def _send_photo(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        upload = files.get("photo")
        if upload is not None:
            size = image_size(upload.content)
            if size is None:
                raise bad_request("IMAGE_PROCESS_FAILED")
            photo = self._photo_sizes(upload.content, *size)
        elif isinstance(params.get("photo"), str) and params["photo"]:
            photo = self._photo_sizes(b"", 800, 600)  # a file_id or URL: nothing to inspect
        else:
            raise bad_request("there is no photo in the request")
        return self._new_message(params, {"photo": photo, **self._caption(params)})

    def _send_document(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        upload = files.get("document")
        if upload is None:
            if not params.get("document"):
                raise bad_request("there is no document in the request")
            upload = UploadedFile("file", b"", "application/octet-stream")
        file_id, unique = self._store_file("document", upload.content, upload.filename)
        document = {
            "file_name": upload.filename,
            "mime_type": upload.content_type,
            "file_id": file_id,
            "file_unique_id": unique,
            "file_size": len(upload.content),
        }
        return self._new_message(params, {"document": document, **self._caption(params)})

    def _caption(self, params: dict[str, Any]) -> dict[str, Any]:
        caption, entities = formatted(
            str(params.get("caption", "")),
            params.get("parse_mode"),
            params.get("caption_entities"),
        )
        if utf16_len(caption) > CAPTION_LIMIT:
            raise bad_request("message caption is too long")
        out: dict[str, Any] = {"caption": caption} if caption else {}
        if entities:
            out["caption_entities"] = entities
        return out

    def _photo_sizes(self, content: bytes, width: int, height: int) -> list[dict[str, Any]]:
        sizes = []
        longest = max(width, height, 1)
        for limit in (90, 320, 800, 1280, 2560):
            scale = min(limit / longest, 1.0)
            file_id, unique = self._store_file("photo", content, "photo.jpg")
            sizes.append(
                {
                    "file_id": file_id,
                    "file_unique_id": unique,
                    "file_size": max(int(len(content) * scale * scale), 1),
                    "width": max(round(width * scale), 1),
                    "height": max(round(height * scale), 1),
                }
            )
            if scale == 1.0:
                break
        return sizes

    def _store_file(self, kind: str, content: bytes, filename: str) -> tuple[str, str]:
        self._counter += 1
        file_id = f"FAKE{kind.upper()}{self._counter:08d}"
        unique = f"U{self._counter:08d}"
        suffix = filename.rsplit(".", 1)[-1] if "." in filename else "bin"
        path = f"{kind}s/file_{self._counter}.{suffix}"
        self._files[file_id] = _StoredFile(content, unique, path)
        return file_id, unique

    def _new_message(self, params: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        if chat_id in (None, ""):
            raise bad_request("chat_id is empty")
        markup = self._inline_markup(params)
        chat = self._chats.get(chat_id) or _inferred_chat(chat_id)
        message: dict[str, Any] = {
            "message_id": 0,
            "from": self._bot_from(),
            "chat": chat,
            "date": int(time.time()),
            **content,
        }
        reply = self._replied(chat_id, params)
        if reply is not None:
            message["reply_to_message"] = reply
        if params.get("message_thread_id") not in (None, ""):
            # Telegram keeps a reply in the forum topic it was sent to.
            message["message_thread_id"] = int(params["message_thread_id"])
            message["is_topic_message"] = True
        if markup is not None:
            message["reply_markup"] = markup
        message["message_id"] = self._new_message_id(chat_id)
        self._messages[(chat_id, message["message_id"])] = _without_reply(message)
        return message

    def _replied(self, chat_id: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        reply = params.get("reply_parameters") or {}
        message_id = reply.get("message_id", params.get("reply_to_message_id"))
        if message_id is None:
            return None
        allow = reply.get("allow_sending_without_reply", params.get("allow_sending_without_reply"))
        target = self._messages.get((reply.get("chat_id", chat_id), int(message_id)))
        if target is None and not allow:
            raise bad_request("message to be replied not found")
        return copy.deepcopy(target)

    def _inline_markup(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """The inline keyboard to store on the message (other keyboards are not echoed)."""
        markup = params.get("reply_markup")
        if not isinstance(markup, dict) or "inline_keyboard" not in markup:
            return None
        for row in markup["inline_keyboard"]:
            for button in row:
                if not button.get("text"):
                    raise bad_request("text buttons are unallowed in the inline keyboard")
                data = button.get("callback_data")
                if data is not None and not 1 <= len(data.encode()) <= CALLBACK_DATA_LIMIT:
                    raise bad_request("BUTTON_DATA_INVALID")
        return markup if markup["inline_keyboard"] else None

    def _stored(self, params: dict[str, Any], *, verb: str = "edit") -> dict[str, Any] | None:
        """The message an edit/delete refers to; None for an inline message."""
        if params.get("inline_message_id"):
            return None
        key = (params.get("chat_id"), int(params.get("message_id", 0)))
        if key not in self._messages:
            raise bad_request(f"message to {verb} not found")
        return self._messages[key]

    def _apply_edit(
        self, params: dict[str, Any], message: dict[str, Any] | None, changes: dict[str, Any]
    ) -> Any:
        """Replace the edited fields (and the inline keyboard, which an edit always resets)."""
        markup = self._inline_markup(params)
        if message is None:
            return True
        updated = {k: v for k, v in message.items() if k not in changes and k != "edit_date"}
        updated.pop("reply_markup", None)
        updated.update({k: v for k, v in changes.items() if v})
        if markup is not None:
            updated["reply_markup"] = markup
        if updated == {k: v for k, v in message.items() if k != "edit_date"}:
            raise bad_request(NOT_MODIFIED.removeprefix("Bad Request: "))
        updated["edit_date"] = int(time.time())
        message.clear()
        message.update(updated)
        return copy.deepcopy(message)

    def _edit_message_text(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        message = self._stored(params)
        if message is not None and "text" not in message:
            raise bad_request("there is no text in the message to edit")
        text, entities = formatted(
            str(params.get("text", "")), params.get("parse_mode"), params.get("entities")
        )
        if not text:
            raise bad_request("message text is empty")
        if utf16_len(text) > MESSAGE_LIMIT:
            raise bad_request("MESSAGE_TOO_LONG")
        return self._apply_edit(params, message, {"text": text, "entities": entities})

    def _edit_message_caption(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        message = self._stored(params)
        if message is not None and "text" in message:
            raise bad_request("there is no caption in the message to edit")
        changes = {"caption": None, "caption_entities": None, **self._caption(params)}
        return self._apply_edit(params, message, changes)

    def _edit_message_reply_markup(
        self, params: dict[str, Any], files: dict[str, UploadedFile]
    ) -> Any:
        return self._apply_edit(params, self._stored(params), {})

    def _delete_message(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        message = self._stored(params, verb="delete")
        if message is not None:
            del self._messages[(params["chat_id"], message["message_id"])]
        return True

    def _answer_callback_query(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        query_id = params.get("callback_query_id")
        if query_id not in self._callbacks or query_id in self._answered:
            raise bad_request(QUERY_INVALID.removeprefix("Bad Request: "))
        self._answered.add(query_id)
        return True

    def _send_chat_action(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        if params.get("action") not in CHAT_ACTIONS:
            raise bad_request("wrong parameter action in request")
        return True

    def _set_my_commands(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        commands = params.get("commands") or []
        for command in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", command.get("command", "")):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 1 <= len(command.get("description", "")) <= 256:
                raise bad_request("command description is empty or too long")
        key = _commands_key(params.get("scope"), params.get("language_code", ""))
        self.commands[key] = commands
        return True

    def _get_my_commands(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        return self.my_commands(params.get("scope"), params.get("language_code", ""))

    def _delete_my_commands(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        self.commands.pop(_commands_key(params.get("scope"), params.get("language_code", "")), None)
        return True

    def _get_chat_member(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        """As Telegram answers it: the owner's and an administrator's rights, a member's
        status alone."""
        chat_id, user_id = params.get("chat_id"), params.get("user_id")
        if not isinstance(user_id, int):
            raise bad_request("invalid user_id specified")
        user = {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"}
        status = self.chat_admins.get(chat_id, {}).get(user_id, "member")
        if status == "creator":
            return {"status": status, "user": user, "is_anonymous": False}
        if status == "administrator":
            rights = (
                "can_manage_chat can_delete_messages can_manage_video_chats can_restrict_members"
                " can_promote_members can_change_info can_invite_users can_post_stories"
                " can_edit_stories can_delete_stories can_pin_messages can_manage_topics"
            )
            granted = dict.fromkeys(rights.split(), True)
            return {
                "status": status,
                "user": user,
                "can_be_edited": False,
                "is_anonymous": False,
                **granted,
            }
        return {"status": "member", "user": user}

    def _get_file(self, params: dict[str, Any], files: dict[str, UploadedFile]) -> Any:
        file_id = params.get("file_id", "")
        stored = self._files.get(file_id)
        if stored is None:
            raise bad_request("invalid file_id")
        return {
            "file_id": file_id,
            "file_unique_id": stored.file_unique_id,
            "file_size": len(stored.content),
            "file_path": stored.file_path,
        }


_METHODS = {
    "getMe": "_get_me",
    "getUpdates": "_get_updates",
    "setWebhook": "_set_webhook",
    "deleteWebhook": "_delete_webhook",
    "getWebhookInfo": "_get_webhook_info",
    "sendMessage": "_send_message",
    "sendPhoto": "_send_photo",
    "sendDocument": "_send_document",
    "editMessageText": "_edit_message_text",
    "editMessageCaption": "_edit_message_caption",
    "editMessageReplyMarkup": "_edit_message_reply_markup",
    "deleteMessage": "_delete_message",
    "answerCallbackQuery": "_answer_callback_query",
    "sendChatAction": "_send_chat_action",
    "setMyCommands": "_set_my_commands",
    "getMyCommands": "_get_my_commands",
    "deleteMyCommands": "_delete_my_commands",
    "getFile": "_get_file",
    "getChatMember": "_get_chat_member",
}
# Bot API method names are case-insensitive; calls are recorded under the canonical name.
_METHOD_NAMES = {name.lower(): name for name in _METHODS}


def _commands_key(scope: dict[str, Any] | None, language_code: str) -> tuple[str, str]:
    return json.dumps(scope or {"type": "default"}, sort_keys=True), language_code or ""


def _inferred_chat(chat_id: Any) -> dict[str, Any]:
    if isinstance(chat_id, int) and chat_id > 0:
        return {"id": chat_id, "type": "private", "first_name": "Alice"}
    return {"id": chat_id, "type": "supergroup", "title": "Test group"}


def _without_reply(message: dict[str, Any]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in message.items() if k != "reply_to_message"}


def make_user(
    user_id: int,
    first_name: str = "Alice",
    *,
    language_code: str | None = "en",
    username: str | None = None,
) -> dict[str, Any]:
    user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
    if username:
        user["username"] = username
    if language_code:
        user["language_code"] = language_code
    return user


# ----------------------------------------------------------------------------- tornado glue


def _request_params(request: HTTPServerRequest) -> tuple[dict[str, Any], dict[str, UploadedFile]]:
    """Parameters from the query string, a JSON body, or a form/multipart body."""
    params: dict[str, Any] = {
        k: decode_param(k, v[-1].decode()) for k, v in request.query_arguments.items()
    }
    content_type = request.headers.get("Content-Type", "")
    if content_type.startswith("application/json") and request.body:
        body = json.loads(request.body)
        params.update(
            {
                k: json.loads(v) if k in _JSON_FIELDS and isinstance(v, str) else v
                for k, v in body.items()
            }
        )
    else:
        params.update(
            {k: decode_param(k, v[-1].decode()) for k, v in request.body_arguments.items()}
        )
    files = {
        name: UploadedFile(parts[-1].filename, parts[-1].body, parts[-1].content_type)
        for name, parts in request.files.items()
    }
    return params, files


class _ApiHandler(tornado.web.RequestHandler):
    SUPPORTED_METHODS = ("GET", "POST")

    def initialize(self, fake: FakeBotAPI) -> None:
        self.fake = fake
        self.client_gone = False

    def on_connection_close(self) -> None:
        self.client_gone = True
        self.fake._updates_pulse.fire()  # a long poll whose client left returns at once

    async def get(self, token: str, method: str) -> None:
        try:
            params, files = _request_params(self.request)
        except ValueError:
            status, body = 400, bad_request("can't parse request").envelope()
        else:
            fault = self.fake._take_fault(method, params)
            kind = fault.kind if fault else None
            if kind in ("drop_before", "html_502"):
                self.fake._record_fault(method, params, kind)  # type: ignore[arg-type]
                if kind == "drop_before":
                    self._drop()
                else:
                    self.set_status(502)
                    self.set_header("Content-Type", "text/html")
                    self.finish(BAD_GATEWAY_HTML)
                return
            delay_s = fault.delay_s if fault is not None and kind == "slow" else 0.0
            held = fault.held if fault is not None else None
            status, body = await self.fake.handle(
                token, method, params, files, lambda: self.client_gone, kind, delay_s, held
            )
            if kind == "drop_after":
                self._drop()
                return
        if self.client_gone:
            return
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    post = get

    def _drop(self) -> None:
        """Close the connection with no answer, as a network failure does."""
        self.request.connection.stream.close()
        self._finished = True  # nothing more to write: tornado must not try


class _FileHandler(tornado.web.RequestHandler):
    def initialize(self, fake: FakeBotAPI) -> None:
        self.fake = fake

    def get(self, token: str, file_path: str) -> None:
        status, body = self.fake.download(token, file_path)
        self.set_status(status)
        self.set_header("Content-Type", "application/octet-stream")
        self.finish(body)


class _NotFoundHandler(tornado.web.RequestHandler):
    SUPPORTED_METHODS = ("GET", "POST")

    def get(self) -> None:
        self.set_status(404)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"ok": False, "error_code": 404, "description": "Not Found"}))

    post = get


# ------------------------------------------------------------------------------- polling


@contextlib.asynccontextmanager
async def polling(
    application: Application,  # type: ignore[type-arg]
    *,
    timeout: int = 1,
) -> AsyncIterator[Application]:  # type: ignore[type-arg]
    """Initialize, start and poll; on exit stop the updater, then the application, then shut
    down: the order that leaves no task or socket behind."""
    async with application:
        await application.start()
        await application.updater.start_polling(poll_interval=0.0, timeout=timeout)
        try:
            yield application
        finally:
            if application.updater.running:
                await application.updater.stop()
            if application.running:
                await application.stop()

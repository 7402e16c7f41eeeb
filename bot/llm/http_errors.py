"""Turning a provider's HTTP failure into one of Barb's LLM errors.

Both SDKs raise errors with the same facts (status, headers, JSON body); the adapters pull
those out and this module decides the error type and writes a message that names the fix.
No message ever contains the API key: servers sometimes echo it back (in full or in part),
so the server's own text is redacted, and for authentication failures it is left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.llm.errors import (
    AuthenticationFailed,
    ConfigError,
    LLMError,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    RequestRejected,
)

_MAX_DETAIL = 300


@dataclass(frozen=True)
class Endpoint:
    """What an error message needs to know about where a request went."""

    provider: str
    base_url: str
    model: str
    key_env: str  # e.g. OPENAI_API_KEY
    base_url_env: str  # e.g. OPENAI_BASE_URL
    # Only to redact it from server text; kept out of repr so it is never printed.
    secret: str | None = field(default=None, repr=False)


def redact(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return text


def server_detail(body: object, endpoint: Endpoint) -> str:
    """The server's own error message, redacted and shortened; '' when there is none."""
    detail: object = body
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping):
            detail = error.get("message") or error
        elif error:
            detail = error
        else:
            detail = body.get("message") or body
    if detail is None:
        return ""
    text = redact(str(detail), endpoint.secret)
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 1] + "…"


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The wait the server asked for (``retry-after-ms`` or ``retry-after`` in seconds)."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue  # an HTTP date: rare from model APIs, not worth parsing
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def error_for_status(
    status: int,
    headers: Mapping[str, str],
    body: object,
    endpoint: Endpoint,
    request_id: str | None = None,
) -> LLMError:
    """The Barb error for an HTTP error status that outlived the SDK's retries."""
    where = f"{endpoint.provider} at {endpoint.base_url}"
    if request_id:
        where += f" (request {request_id})"
    provider = endpoint.provider
    if status in (401, 403):
        # The server's text is left out on purpose: it may quote the key.
        what = "refused the API key" if status == 401 else "denied access"
        return AuthenticationFailed(
            f"{where} {what} (HTTP {status}) for model {endpoint.model!r}: "
            f"check {endpoint.key_env} (a valid key, allowed to use this model).",
            provider=provider,
        )
    detail = server_detail(body, endpoint)
    said = f": {detail}" if detail else ""
    if status == 404:
        return ConfigError(
            f"{where} answered 404 for model {endpoint.model!r}{said}. Check BARB_LLM_MODEL "
            f"(a model this server serves) and {endpoint.base_url_env} (the API's root, "
            "e.g. http://127.0.0.1:8000/v1 for a local OpenAI-compatible server).",
            provider=provider,
        )
    if status == 429:
        retry_after = retry_after_seconds(headers)
        wait = f"; it asked to wait {retry_after:g} s" if retry_after is not None else ""
        return RateLimited(
            f"{where} is rate limiting requests (HTTP 429) after retries{wait}{said}. "
            "Wait, lower the traffic, or raise the account's limits "
            "(BARB_LLM_MAX_RETRIES sets how often Barb retries).",
            retry_after=retry_after,
            provider=provider,
        )
    if status == 408:
        return ProviderTimeout(
            f"{where} timed out the request (HTTP 408) after retries{said}.", provider=provider
        )
    if status >= 500:
        return ProviderUnavailable(
            f"{where} failed with HTTP {status} after retries{said}.", provider=provider
        )
    return RequestRejected(
        f"{where} rejected the request (HTTP {status}){said}.", provider=provider
    )

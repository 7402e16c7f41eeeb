"""A switch that forbids real model requests (pydantic-ai's ``ALLOW_MODEL_REQUESTS`` idea).

Tests run with ``BARB_OFFLINE=1``: the real adapters then refuse any base URL that is not on
this machine's loopback, so a test can drive the real SDK against a local fake server but can
never reach (or pay) a real provider by accident. A test that means to talk to a real
provider opts in with ``allow_model_requests(True)`` and resets with
``allow_model_requests(None)``.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from bot.llm.errors import ModelRequestsForbidden

OFFLINE_ENV = "BARB_OFFLINE"
_TRUTHY = {"1", "true", "yes", "on"}

# None means "decided by BARB_OFFLINE"; an explicit call overrides the environment.
_allowed: bool | None = None


def allow_model_requests(allowed: bool | None) -> None:
    """Allow (True) or forbid (False) requests to non-loopback URLs; None defers to the env."""
    global _allowed
    _allowed = allowed


def model_requests_allowed() -> bool:
    if _allowed is not None:
        return _allowed
    return os.environ.get(OFFLINE_ENV, "").strip().lower() not in _TRUTHY


def is_loopback_url(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_request_allowed(base_url: str, *, provider: str) -> None:
    """Raise ModelRequestsForbidden if requests are off and ``base_url`` leaves this machine."""
    if model_requests_allowed() or is_loopback_url(base_url):
        return
    raise ModelRequestsForbidden(
        f"Real model requests are switched off ({OFFLINE_ENV}=1 or "
        f"allow_model_requests(False)), and {provider} would call {base_url}. "
        "Point the provider at a loopback URL (127.0.0.1, localhost, ::1), use "
        "bot.llm.scripted.ScriptedProvider, or call allow_model_requests(True) "
        "in a test that really means to reach a provider.",
        provider=provider,
    )

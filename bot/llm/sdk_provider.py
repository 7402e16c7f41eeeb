"""What the OpenAI and Anthropic adapters share: settings, the offline check, cost, logging.

Retries and timeouts are the SDKs' own (``max_retries``, ``timeout``): they already back off
exponentially on 408/409/429/5xx and on connection errors, and honour ``retry-after``, up to
``RETRY_AFTER_CAP_S`` (``capped_retry_after``). An adapter maps what is left after them to
``bot.llm.errors``.
"""

from __future__ import annotations

import json
import logging
import time
from types import TracebackType
from typing import Any, Self, TypeVar

from pydantic import SecretStr, ValidationError

from bot.llm.errors import BadResponse
from bot.llm.http_errors import Endpoint, retry_after_seconds
from bot.llm.messages import ModelResponse
from bot.llm.offline import check_request_allowed
from bot.llm.pricing import PriceTable

log = logging.getLogger(__name__)

#: What the SDKs let through when a 200 body is not JSON they can read: a body cut short or
#: not JSON at all (``JSONDecodeError`` and ``UnicodeDecodeError`` are ``ValueError``s), or
#: JSON nested deeper than Python's stack.
UNREADABLE_BODY: tuple[type[BaseException], ...] = (
    json.JSONDecodeError,
    UnicodeDecodeError,
    RecursionError,
)


#: What reading a parsed answer raises when a field has the wrong type: the SDKs build their
#: response types without validating them, so ``null`` or a number where a string or a list
#: is due only shows when Barb reads the field.
WRONG_SHAPE: tuple[type[BaseException], ...] = (ValidationError, TypeError, AttributeError)


#: The longest ``retry-after`` the SDK may wait out before it retries. The person watches
#: "typing…" meanwhile: a rate limit asking for more (OpenAI's SDK honours up to 120 s per
#: retry, Anthropic's any wait) ends the question at once with ``RateLimited``, which says
#: when to try again, instead of minutes of silence (p40b F9: a plan after 2 minutes).
RETRY_AFTER_CAP_S = 20.0

C = TypeVar("C")


def capped_retry_after(client_class: type[C]) -> type[C]:
    """``client_class`` (``openai.AsyncOpenAI``, ``anthropic.AsyncAnthropic``) that does not
    retry a response whose ``retry-after`` exceeds ``RETRY_AFTER_CAP_S``; every other retry
    is the SDK's own. Example: a 429 with ``retry-after: 120`` raises after one request; one
    with ``retry-after: 5`` is retried after 5 s.

    Both SDKs ask ``_should_retry(response)`` before each retry; it is their one hook for
    it (the SDKs take no setting for the cap)."""

    class Capped(client_class):  # type: ignore[valid-type,misc]
        def _should_retry(self, response: Any) -> bool:
            wait = retry_after_seconds(response.headers)
            if wait is not None and wait > RETRY_AFTER_CAP_S:
                return False
            return bool(super()._should_retry(response))

    Capped.__name__ = Capped.__qualname__ = f"Capped{client_class.__name__}"
    return Capped


def wrong_shape(where: str, err: BaseException, *, provider: str) -> BadResponse:
    return BadResponse(
        f"{where} answered with a message of the wrong shape ({type(err).__name__}).",
        provider=provider,
    )


def unreadable_body(where: str, err: BaseException, *, provider: str) -> BadResponse:
    # Only the error's type: its text may quote the body, which may quote anything.
    return BadResponse(
        f"{where} answered with a body that is not readable JSON ({type(err).__name__}).",
        provider=provider,
    )


class SDKProvider:
    """Base of the real adapters. Subclasses set ``name``, ``key_env`` and ``base_url_env``."""

    name: str
    key_env: str
    base_url_env: str

    def __init__(
        self,
        *,
        model: str | None,
        api_key: SecretStr | None,
        base_url: str,
        timeout_s: float,
        max_retries: int,
        prices: PriceTable | None,
    ) -> None:
        self._model = model
        self._api_key = api_key
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.prices = prices if prices is not None else PriceTable.default()

    @property
    def model(self) -> str:
        return self._model or "auto"

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(
            provider=self.name,
            base_url=self.base_url,
            model=self.model,
            key_env=self.key_env,
            base_url_env=self.base_url_env,
            secret=self._api_key.get_secret_value() if self._api_key else None,
        )

    @property
    def _where(self) -> str:
        return f"{self.name} at {self.base_url}"

    def _check_allowed(self) -> None:
        check_request_allowed(self.base_url, provider=self.name)

    def _finish(self, response: ModelResponse, started: float) -> ModelResponse:
        """Price the response and log the call (never the key, never the content)."""
        cost = self.prices.cost(response.model, response.usage)
        response = response.model_copy(update={"cost_usd": cost})
        usage = response.usage
        log.debug(
            "%s %s: %d in (+%d cached, +%d cache write), %d out, stop=%s, cost=%s, %.2f s",
            self.name,
            response.model,
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.output_tokens,
            response.stop_reason,
            "unknown" if cost is None else f"${cost:.6f}",
            time.monotonic() - started,
        )
        return response

    def _timeout_message(self) -> str:
        return (
            f"{self._where} did not answer within {self.timeout_s:g} s "
            f"({self.max_retries} retries): raise BARB_LLM_TIMEOUT_S, or check the server."
        )

    def _unreachable_message(self, cause: BaseException | None) -> str:
        why = f" ({type(cause).__name__})" if cause is not None else ""
        return (
            f"Cannot reach {self._where}{why} after {self.max_retries} retries: "
            f"is the server up, and is {self.base_url_env} right?"
        )

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        # Deliberately no key, not even masked.
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

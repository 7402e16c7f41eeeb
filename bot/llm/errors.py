"""Errors of the LLM layer, split by who reads them.

``str(error)`` is for the developer: it names the provider, the URL, the HTTP status and the
setting to fix, and never contains an API key. ``error.user_message`` is one plain sentence for
the person in the chat; a raw ``str(e)`` must never reach them.
"""

from __future__ import annotations

from barb.errors import BarbError


class LLMError(BarbError):
    """Base of every error raised by ``bot.llm``."""

    #: The sentence shown to the person when this error ends their question.
    default_user_message = "The language model failed to answer; please try again in a minute."

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        user_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.user_message = user_message or self.default_user_message


class ProviderUnavailable(LLMError):
    """Connection refused, DNS failure, or a 5xx answer that outlived the SDK's retries."""

    default_user_message = (
        "The language model is not reachable right now; please try again in a minute."
    )


class ProviderTimeout(LLMError):
    """The provider did not answer within ``BARB_LLM_TIMEOUT_S`` (after retries)."""

    default_user_message = "The language model took too long to answer; please try again."


class AuthenticationFailed(LLMError):
    """HTTP 401/403: the key is missing, wrong or not allowed to use the model."""

    default_user_message = (
        "The language model is not set up correctly right now; please tell the bot's operator."
    )


class RateLimited(LLMError):
    """HTTP 429 that outlived the SDK's retries."""

    default_user_message = "The language model is busy right now; please try again in a minute."

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        provider: str | None = None,
        user_message: str | None = None,
    ) -> None:
        super().__init__(message, provider=provider, user_message=user_message)
        #: Seconds the provider asked us to wait, when it said so.
        self.retry_after = retry_after


class BadResponse(LLMError):
    """The provider answered, but with something Barb cannot use: a malformed response.

    A null message, a body that is not JSON, a tool call to no known tool or with arguments
    JSON cannot hold. The loop retries it once; the person then hears that the model
    answered with something Barb could not read, not that it is unreachable: it was reached.
    """

    default_user_message = (
        "The language model answered twice with something I could not read; please try "
        "again in a minute."
    )


class RequestRejected(LLMError):
    """The provider refused the request itself (HTTP 400/413/422…), e.g. a too long history."""

    default_user_message = (
        "The language model could not handle this request; please rephrase it "
        "or start a new conversation."
    )


class ConfigError(LLMError):
    """A setting is missing or wrong; the message says which variable to set and how."""

    default_user_message = "The language model is not configured; please tell the bot's operator."


class NoModelConfigured(ConfigError):
    """No provider is configured at all (no key, no URL): the caller lists every way to set one."""


class ModelRequestsForbidden(ConfigError):
    """A real model request was attempted while they are switched off (tests, ``BARB_OFFLINE``)."""

    default_user_message = "The language model is switched off in this environment."


class ScriptExhausted(LLMError):
    """The scripted provider was asked for more turns than it was given (a test bug)."""

    default_user_message = "The scripted language model has no more answers."

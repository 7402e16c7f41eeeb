"""Language-model providers behind one provider-neutral interface.

The SDK adapters (``bot.llm.openai_provider``, ``bot.llm.anthropic_provider``) are not
imported here: ``make_provider`` loads the one it needs.
"""

from bot.llm.errors import (
    AuthenticationFailed,
    BadResponse,
    ConfigError,
    LLMError,
    ModelRequestsForbidden,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    RequestRejected,
    ScriptExhausted,
)
from bot.llm.messages import (
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from bot.llm.offline import allow_model_requests
from bot.llm.pricing import PriceTable
from bot.llm.provider import LLMProvider
from bot.llm.scripted import ScriptedProvider
from bot.llm.settings import LLMSettings, make_provider

__all__ = [
    "AuthenticationFailed",
    "BadResponse",
    "ConfigError",
    "LLMError",
    "LLMProvider",
    "LLMSettings",
    "Message",
    "ModelRequest",
    "ModelRequestsForbidden",
    "ModelResponse",
    "PriceTable",
    "ProviderTimeout",
    "ProviderUnavailable",
    "RateLimited",
    "RequestRejected",
    "ScriptExhausted",
    "ScriptedProvider",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Usage",
    "allow_model_requests",
    "make_provider",
]

"""Why `barb bot` could not start, in one sentence that says what to fix, with an exit status.

Each kind of failure has its own status (from sysexits.h), all distinct from 2, which means
"not configured yet" (the steps to get a token and a model are printed instead). The bot
token never appears: python-telegram-bot quotes it in its own messages (``InvalidToken``),
so the sentences are written here from what is known, never from a Telegram error's text.
"""

from __future__ import annotations

import re
from typing import TypeVar

from pydantic import AliasChoices, ValidationError
from pydantic_settings import BaseSettings
from telegram.error import InvalidToken, NetworkError, TelegramError

from barb.errors import BarbError
from bot.store.errors import SchemaError
from bot.store.replicas import ReplicaNameTaken

SettingsT = TypeVar("SettingsT", bound=BaseSettings)

#: A setting has a value Barb cannot use (EX_CONFIG).
EXIT_BAD_SETTING = 78
#: Telegram refused the bot token (EX_NOPERM).
EXIT_TOKEN_REJECTED = 77
#: The Bot API server could not be reached (EX_UNAVAILABLE).
EXIT_UNREACHABLE = 69
#: Something else needed at start-up failed: the database, Telegram's answer (EX_SOFTWARE).
EXIT_CANNOT_START = 70
#: The database is not at this version's schema: run `barb db upgrade`, then start again
#: (EX_TEMPFAIL).
EXIT_SCHEMA_NOT_READY = 75

#: The password of a URL's ``user:password@``, masked when a bad URL setting is quoted.
_URL_PASSWORD = re.compile(r"(://[^/@:\s]*:)[^/@\s]*@")


class StartupError(BarbError):
    """The bot cannot start: ``sentence`` for the operator, ``exit_status`` for scripts."""

    def __init__(self, sentence: str, exit_status: int) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.exit_status = exit_status


def read_settings(kind: type[SettingsT]) -> SettingsT:
    """``kind`` read from the environment; a wrong value is a ``StartupError`` naming it."""
    try:
        return kind()
    except ValidationError as exc:
        raise bad_settings(exc, kind) from None


def bad_settings(error: ValidationError, settings: type[BaseSettings]) -> StartupError:
    """The first invalid setting by its environment variable, what is wrong, and the value
    given (unless it is a secret)."""
    problems = error.errors(include_url=False)
    first = problems[0]
    variable = env_variable(settings, str(first["loc"][0]) if first["loc"] else "")
    value = first.get("input")
    if isinstance(value, str):  # postgresql://barb:secret@db/barb: the password stays out
        value = _URL_PASSWORD.sub(r"\1***@", value)
    given = "" if _is_secret(settings, variable) else f" (got {value!r})"
    reason = first["msg"].removeprefix("Value error, ")
    more = f"; {len(problems) - 1} more setting(s) are invalid too" if len(problems) > 1 else ""
    return StartupError(
        f"{variable} is not valid: {reason}{given}{more}. Fix it in the environment or .env.",
        EXIT_BAD_SETTING,
    )


def telegram_failed(error: TelegramError, api_url: str | None) -> StartupError:
    """A Bot API request made at start-up failed: which setting to look at."""
    server = api_url or "https://api.telegram.org"
    if isinstance(error, InvalidToken):
        return StartupError(
            "Telegram rejected the bot token: check TELEGRAM_BOT_TOKEN (@BotFather's /token "
            "shows it again, /revoke makes a new one).",
            EXIT_TOKEN_REJECTED,
        )
    if isinstance(error, NetworkError):
        return StartupError(
            f"Cannot reach the Telegram Bot API at {_without_token(server)}: check the "
            "network (or a proxy) and TELEGRAM_API_BASE_URL, then start again.",
            EXIT_UNREACHABLE,
        )
    return StartupError(
        f"Telegram refused to start the bot ({type(error).__name__}); if another copy of the "
        "bot is running with the same token, stop it first.",
        EXIT_CANNOT_START,
    )


def database_failed(error: Exception, safe_url: str) -> StartupError:
    where = (
        "that its folder can be written to"
        if safe_url.startswith("sqlite")
        else "that the server is running and accepts these credentials"
    )
    return StartupError(
        f"Cannot open the database {safe_url} ({type(error).__name__}): check "
        f"BARB_DATABASE_URL and {where}.",
        EXIT_CANNOT_START,
    )


def replica_name_taken(error: ReplicaNameTaken) -> StartupError:
    """A live replica holds this one's name (``bot.store.replicas``): two processes under
    one name would keep each other's dead work alive, so this one does not start."""
    return StartupError(
        f"Another replica is running as {error.name!r} on this database: give each replica "
        "its own BARB_REPLICA_ID (the host name by default), or stop the other one first.",
        EXIT_BAD_SETTING,
    )


def schema_not_ready(error: SchemaError) -> StartupError:
    """The database is not migrated (or migrated by a newer Barb): its own sentence says
    which and what to run; it names the database without its password."""
    return StartupError(str(error), EXIT_SCHEMA_NOT_READY)


def env_variable(settings: type[BaseSettings], name: str) -> str:
    """The environment variable that sets a field, as an operator would type it."""
    field = settings.model_fields.get(name)
    if field is None:  # the error is already located by the variable's own name
        return name.upper()
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        alias = alias.choices[0]
    if isinstance(alias, str):
        return alias.upper()
    prefix = str(settings.model_config.get("env_prefix") or "")
    return f"{prefix}{name}".upper()


def _is_secret(settings: type[BaseSettings], variable: str) -> bool:
    for name, field in settings.model_fields.items():
        if env_variable(settings, name) == variable:
            return "Secret" in str(field.annotation)
    return any(word in variable for word in ("TOKEN", "KEY", "SECRET", "PASSWORD"))


def _without_token(url: str) -> str:
    return url.replace("{token}", "<token>")

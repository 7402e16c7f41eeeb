"""/usage through the real Application: a model without a price is "price unknown", not $0.

The model calls are scripted with token counts and model names; the price table is Barb's
own. The expected dollars are worked out here from the table's per-million prices.
"""

from __future__ import annotations

import pytest
from bot_harness import ALICE, BOB, ask_and_get_plan, barb_bot
from fake_bot_api import FakeBotAPI

from bot.llm.messages import Usage
from bot.llm.pricing import PriceTable
from bot.llm.scripted import ScriptedProvider, turn

PRICED = "gpt-4.1-mini"
UNPRICED = "my-local-llama-3.1-8b"
TOKENS = Usage(input_tokens=12_000, output_tokens=800)


def priced_cost() -> float:
    """One call of PRICED with TOKENS, from the table's USD per million tokens."""
    price = PriceTable.default().price_for(PRICED)
    assert price is not None
    return (TOKENS.input_tokens * price.input + TOKENS.output_tokens * price.output) / 1e6


def provider(*models: str) -> ScriptedProvider:
    """One greeting per question, each by the next model."""
    return ScriptedProvider(
        [turn(f"Hello from {model}.", usage=TOKENS, model=model) for model in models],
        prices=PriceTable.default(),
    )


async def ask(fake: FakeBotAPI, user: int, text: str, language: str = "en") -> str:
    message = await ask_and_get_plan(fake, user, user, text, language_code=language)
    return str(message["text"])


def test_the_unpriced_model_is_really_missing_from_the_table() -> None:
    assert PriceTable.default().price_for(UNPRICED) is None
    assert priced_cost() > 0


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("en", "Today: 12,800 tokens, price unknown, 1 model call."),
        # Babel's Russian: thousands grouped by a no-break space (U+00A0).
        ("ru", "Сегодня: 12\u00a0800 токенов, цена неизвестна, 1 вызов модели."),
    ],
)
async def test_a_model_without_a_price_shows_price_unknown(
    fake_telegram: FakeBotAPI, db_url: str, language: str, expected: str
) -> None:
    async with barb_bot(fake_telegram, db_url, provider=provider(UNPRICED)):
        await ask(fake_telegram, ALICE, "hello", language)
        usage = await ask(fake_telegram, ALICE, "/usage", language)
    assert usage == expected
    assert "$0.0000" not in usage


async def test_priced_and_unpriced_calls_give_a_lower_bound(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """An admin sees their own line and everyone's: the known part of the cost, and how many
    calls it leaves out."""
    async with barb_bot(
        fake_telegram, db_url, provider=provider(PRICED, UNPRICED, PRICED), admins=str(ALICE)
    ):
        await ask(fake_telegram, ALICE, "hello")
        await ask(fake_telegram, ALICE, "hello again")
        await ask(fake_telegram, BOB, "hi")
        alice = await ask(fake_telegram, ALICE, "/usage")
        bob = await ask(fake_telegram, BOB, "/usage")

    one = priced_cost()
    assert alice.splitlines() == [
        f"Today: 25,600 tokens, at least ${one:.4f} (price unknown for 1 of 2 calls), "
        "2 model calls.",
        f"All chats today: 38,400 tokens, at least ${2 * one:.4f} (price unknown for 1 of 3 "
        "calls), 3 calls in 2 chats.",
    ]
    assert bob == f"Today: 12,800 tokens, ${one:.4f}, 1 model call."  # it read "1 model calls"


async def test_russian_usage_writes_numbers_as_russian_does(
    fake_telegram: FakeBotAPI, db_url: str
) -> None:
    """Tokens grouped by a no-break space, dollars with a decimal comma: ``12 800``, ``$0,0125``."""
    async with barb_bot(fake_telegram, db_url, provider=provider(PRICED, PRICED)):
        await ask(fake_telegram, ALICE, "привет", "ru")
        await ask(fake_telegram, ALICE, "ещё раз привет", "ru")
        usage = await ask(fake_telegram, ALICE, "/usage", "ru")
    whole, fraction = f"{2 * priced_cost():.4f}".split(".")
    assert usage == f"Сегодня: 25\u00a0600 токенов, ${whole},{fraction}, 2 вызова модели."


@pytest.mark.parametrize(
    ("language", "counts", "expected"),
    [
        ("en", (1, 1, 1), "All chats today: 1 token, $0.0000, 1 call in 1 chat."),
        ("ru", (1, 1, 1), "Все чаты сегодня: 1 токен, $0,0000, 1 вызов в 1 чате."),
        ("ru", (3, 22, 2), "Все чаты сегодня: 3 токена, $0,0000, 22 вызова в 2 чатах."),
        ("ru", (25, 11, 21), "Все чаты сегодня: 25 токенов, $0,0000, 11 вызовов в 21 чате."),
    ],
)
def test_usage_counts_agree_with_their_words(
    language: str, counts: tuple[int, int, int], expected: str
) -> None:
    """«1 токенов, 1 вызовов в 1 чатах», "1 calls in 1 chats": each count now takes its
    word's form (CLDR's, by Babel), in a text of its own."""
    from bot.store import UsageTotals
    from bot.telegram.usage_view import usage_text

    tokens, calls, chats = counts
    totals = UsageTotals(input_tokens=tokens, calls=calls)
    said = usage_text(totals, language, everyone=totals, chats=chats)
    assert said.splitlines()[1] == expected

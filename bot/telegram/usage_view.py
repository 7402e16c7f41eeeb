"""What /usage says: tokens, calls and cost, where a cost without a price is "price unknown".

A model missing from the price table (a local server, a new model) costs something nobody
has told Barb; showing its calls as $0 would pass a guess off as a fact.
"""

from __future__ import annotations

from barb.i18n import decimal, money
from bot.store import UsageTotals
from bot.texts import t


def cost_text(totals: UsageTotals, lang: str) -> str:
    """$0.0123 ($0,0123 in Russian); "price unknown" when no call had a price; a lower
    bound when some had none."""
    if totals.price_known:
        return money(totals.cost_usd, lang)
    if totals.unpriced_calls >= totals.calls:
        return t("usage_price_unknown", lang)
    return t(
        "usage_cost_partly_unknown",
        lang,
        cost=money(totals.cost_usd, lang),
        unpriced=totals.unpriced_calls,
        calls=totals.calls,
    )


def usage_text(
    mine: UsageTotals, lang: str, *, everyone: UsageTotals | None = None, chats: int = 0
) -> str:
    """The person's own line; with ``everyone`` (admins), the line for all chats too."""
    lines = [
        t(
            "usage_you",
            lang,
            tokens=decimal(mine.total_tokens, lang),
            cost=cost_text(mine, lang),
            calls=decimal(mine.calls, lang),
        )
    ]
    if everyone is not None:
        lines.append(
            t(
                "usage_all",
                lang,
                tokens=decimal(everyone.total_tokens, lang),
                cost=cost_text(everyone, lang),
                calls=decimal(everyone.calls, lang),
                chats=decimal(chats, lang),
            )
        )
    return "\n".join(lines)

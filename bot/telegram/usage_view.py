"""What /usage says: tokens, calls and cost, where a cost without a price is "price unknown".

A model missing from the price table (a local server, a new model) costs something nobody
has told Barb; showing its calls as $0 would pass a guess off as a fact.
"""

from __future__ import annotations

from bot.store import UsageTotals
from bot.texts import t


def cost_text(totals: UsageTotals, lang: str) -> str:
    """$0.0123; "price unknown" when no call had a price; a lower bound when some had none."""
    if totals.price_known:
        return t("usage_cost", lang, cost=totals.cost_usd)
    if totals.unpriced_calls >= totals.calls:
        return t("usage_price_unknown", lang)
    return t(
        "usage_cost_partly_unknown",
        lang,
        cost=totals.cost_usd,
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
            tokens=mine.total_tokens,
            cost=cost_text(mine, lang),
            calls=mine.calls,
        )
    ]
    if everyone is not None:
        lines.append(
            t(
                "usage_all",
                lang,
                tokens=everyone.total_tokens,
                cost=cost_text(everyone, lang),
                calls=everyone.calls,
                chats=chats,
            )
        )
    return "\n".join(lines)

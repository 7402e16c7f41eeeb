"""What /usage says: tokens, calls and cost, where a cost without a price is "price unknown".

A model missing from the price table (a local server, a new model) costs something nobody
has told Barb; showing its calls as $0 would pass a guess off as a fact.
"""

from __future__ import annotations

from barb.i18n import N_, decimal, money
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
        plural_of=totals.calls,  # «из 21 вызова», «из 25 вызовов»
        cost=money(totals.cost_usd, lang),
        unpriced=totals.unpriced_calls,
        calls=totals.calls,
    )


def _counted(key: str, count: int, lang: str) -> str:
    """A count with its word in agreement: "1 token", «21 токен», «в 1 чате» (each in its
    own text: one sentence takes one count's forms, and "1 calls in 1 chats" had none)."""
    return t(key, lang, plural_of=count, n=decimal(count, lang))


def usage_text(
    mine: UsageTotals, lang: str, *, everyone: UsageTotals | None = None, chats: int = 0
) -> str:
    """The person's own line; with ``everyone`` (admins), the line for all chats too."""
    # Said apart from the sentences that hold them: Babel finds no key inside t()'s call.
    tokens = _counted(N_("usage_tokens"), mine.total_tokens, lang)
    calls = _counted(N_("usage_model_calls"), mine.calls, lang)
    lines = [t("usage_you", lang, tokens=tokens, cost=cost_text(mine, lang), calls=calls)]
    if everyone is not None:
        tokens = _counted(N_("usage_tokens"), everyone.total_tokens, lang)
        calls = _counted(N_("usage_calls"), everyone.calls, lang)
        where = _counted(N_("usage_in_chats"), chats, lang)
        cost = cost_text(everyone, lang)
        lines.append(t("usage_all", lang, tokens=tokens, cost=cost, calls=calls, chats=where))
    return "\n".join(lines)

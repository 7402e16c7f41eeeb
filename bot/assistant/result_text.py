"""A query's result as a person reads it, for ``/query`` (no model in between).

The engine's ``summary_text`` is written for the model ("say so in the answer", CSV-like
rows); a person who ran Barb Script themselves gets the numbers, a few rows and where they
come from, in their language. The full rows are in the CSV sent with it.
"""

from __future__ import annotations

from typing import Any

from barb.i18n import decimal
from bot.texts import Language, t

#: Rows of a table shown in the message; the CSV holds them all.
SHOWN_ROWS = 10


def _number(value: Any, lang: Language) -> str:
    """A number as the person's locale writes it (``4,512.25`` / ``4 512,25``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float):
        if value != value:  # NaN: no value
            return "—"
        if value.is_integer() and abs(value) < 1e15:
            return decimal(int(value), lang, 0)
        return decimal(value, lang, 2)
    return decimal(value, lang, 0)


def _row(values: list[Any], lang: Language) -> str:
    return "  ".join(_number(v, lang) for v in values)


def result_lines(summary: dict[str, Any], lang: Language) -> list[str]:
    """The result itself: a number, named numbers, or the first rows of a table."""
    kind = summary.get("type")
    if kind == "scalar":
        [name] = summary.get("columns") or ["value"]
        return [f"{name}: {_number(summary.get('value'), lang)}"]
    if kind == "dict":
        return [
            f"{name}: {_number(value, lang)}" for name, value in summary.get("values", {}).items()
        ]
    rows: list[list[Any]] = summary.get("top") or []
    shown = summary.get("shown") or summary.get("columns") or []
    total = summary.get("rows", len(rows))
    lines = [t("result_rows", lang, rows=decimal(total, lang), shown=min(total, SHOWN_ROWS))]
    if shown:
        lines.append("  ".join(shown))
    lines += [_row(row, lang) for row in rows[:SHOWN_ROWS]]
    return lines


def person_text(result: dict[str, Any], lang: Language) -> str:
    """What ``/query`` answers: the result, the bars it came from, and whether they are
    synthetic."""
    lines = result_lines(result.get("summary", {}), lang)
    meta = result.get("metadata", {})
    if meta:
        lines.append("")
        lines.append(
            t(
                "result_source",
                lang,
                rows=decimal(meta.get("rows_scanned", 0), lang),
                matched=decimal(meta.get("rows_matched", 0), lang),
                timeframe=meta.get("timeframe", "?"),
                session=meta.get("session", "?"),
                instrument=meta.get("instrument", "?"),
                first=meta.get("period_start", "?"),
                last=meta.get("period_end", "?"),
            )
        )
        lines += [f"⚠ {warning}" for warning in meta.get("warnings", [])]
        if meta.get("data_source") == "synthetic":
            lines.append(t("result_synthetic", lang))
    return "\n".join(lines)

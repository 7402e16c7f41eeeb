"""Issue 12 §5: every word Barb shows comes from the gettext catalogs, the Russian one is
complete, every key in the catalogs is used in the code and every key the code uses is in
them; numbers are written by Babel for the locale; no code branches on the language.

The keys the code uses are found the way ``make catalogs`` finds them: Babel's Python
extractor over ``bot/`` and ``barb/`` with the same keywords.
"""

from __future__ import annotations

import ast
import datetime as dt
import re
from pathlib import Path
from string import Formatter

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

import barb
import bot
from barb.i18n import LOCALES_DIR, catalog_path, day, decimal, money, percent, plural, text
from bot.texts import detect_language, language_for

#: Where each domain's keys are used, and the call names that take a key (as in Makefile).
DOMAINS = {
    "bot": (Path(bot.__file__).parent, ("t", "N_")),
    "barb": (Path(barb.__file__).parent, ("words", "N_")),
}
#: Texts that read the same in Russian: symbols and formulas.
SAME_IN_RUSSIAN = {
    ("bot", "forget_one_button"),
    ("barb", "answer"),
    # "range: average 364.56 · median 343.50 points": a column's name before its answers.
    ("barb", "answers_of"),
    # ▲ and ▼ for highest and lowest: a headline's short form, the same in every language.
    ("barb", "highest_lowest_marks"),
    ("barb", "highest_lowest_short"),
    ("barb", "lowest_highest_marks"),
    ("barb", "lowest_highest_short"),
    # "21 days", "21 день": a number and the word that agrees with it, in either language.
    ("barb", "counted"),
    # "daily bars: 259", «дневные бары: 259»: the bars' words and their count.
    ("barb", "footer.all"),
    # The clocks a Russian trader also calls by their Latin letters (ET, CT, UTC, CET).
    ("barb", "clock.America/Chicago"),
    ("barb", "clock.America/New_York"),
    ("barb", "clock.Europe/Berlin"),
    ("barb", "clock.UTC"),
    # "touch_upper: days per month": a column's name before what its bars count.
    ("barb", "count_per_named"),
    # An import report's first line and where a refused row is: a file's name, its layout,
    # a count ("nq.csv: Plain CSV, 20 700 баров"; "bad.csv, строка 2: ").
    ("barb", "import.header"),
    ("barb", "import.located"),
    ("barb", "import.layout.databento"),  # a vendor's name for its format
}
#: Names that stay in Latin letters in a Russian text: products, instruments, units, bar
#: columns.
NAMES = {
    "Barb",
    "Script",
    "Telegram",
    "CSV",
    "Excel",
    "Windows",
    "JSON",
    "UTC",
    "Unix",
    "RTH",
    "ETH",
    "NQ",
    "ES",
    "CL",
}
NAMES |= {"open", "high", "low", "close", "OHLC", "volume"}
#: Vendors whose file layouts Barb imports.
NAMES |= {
    "Sierra",
    "Chart",
    "TradingView",
    "NinjaTrader",
    "MetaTrader",
    "TradeStation",
    "Kibot",
    "Databento",
    "Barchart",
    "FirstRate",
    "Data",
}
NAMES |= {"Interactive", "Brokers", "TWS", "API"}
#: Formats and standards an import refusal names: Parquet files, UTF-8 text, IANA zones.
NAMES |= {"Parquet", "UTF", "IANA", "YAML"}
#: What a text may quote verbatim: placeholders, commands, code, examples in quotes, HTML
#: tags, strftime codes.
# Kept as written: placeholders, commands and their --options, code, quotes, tags, format
# codes, and the CLDR plural categories that name a word's forms
# (one=пункт|few=пункта|many=пунктов).
_VERBATIM = re.compile(
    r"\{[^}]*\}|/\w+|--[\w-]+|`[^`]*`|«[^»]*»|<[^>]*>|%[a-zA-Z]|\b(?:zero|one|two|few|many|other)="
)


def read_catalog(path: Path) -> Catalog:
    with path.open("rb") as fh:
        return read_po(fh)


def code_keys(domain: str) -> set[str]:
    root, keywords = DOMAINS[domain]
    found = extract_from_dir(
        root,
        method_map=[("**.py", "python")],
        keywords=dict.fromkeys(keywords),
        comment_tags=(),
    )
    return {message for _, _, message, _, _ in found}


def entries(domain: str, lang: str) -> dict[str, str]:
    return {m.id: m.string for m in read_catalog(catalog_path(domain, lang)) if m.id}


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(template) if name is not None}


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_the_code_and_every_catalog_hold_the_same_keys(domain: str) -> None:
    used = code_keys(domain)
    assert used, domain
    template = {m.id for m in read_catalog(LOCALES_DIR / f"{domain}.pot") if m.id}
    assert sorted(used - template) == [], "run `make catalogs`: the template is behind the code"
    assert sorted(template - used) == [], "run `make catalogs`: the template has unused keys"
    for lang in ("en", "ru"):
        keys = set(entries(domain, lang))
        assert sorted(used - keys) == [], f"used in the code, missing from {lang}/{domain}.po"
        assert sorted(keys - used) == [], f"in {lang}/{domain}.po, used nowhere in the code"


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_the_russian_catalog_is_complete_with_no_english_left(domain: str) -> None:
    english, russian = entries(domain, "en"), entries(domain, "ru")
    fuzzy = [m.id for m in read_catalog(catalog_path(domain, "ru")) if m.id and m.fuzzy]
    assert fuzzy == []
    assert [key for key, value in english.items() if not value] == []
    assert [key for key, value in russian.items() if not value] == []
    for key, value in russian.items():
        if (domain, key) in SAME_IN_RUSSIAN:
            assert value == english[key], key
            continue
        assert value != english[key], (key, value)
        latin = set(re.findall(r"[A-Za-z]{2,}", _VERBATIM.sub(" ", value)))
        assert latin <= NAMES, (key, latin - NAMES)


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_placeholders_are_the_same_in_both_languages(domain: str) -> None:
    english, russian = entries(domain, "en"), entries(domain, "ru")
    for key, value in english.items():
        assert fields(russian[key]) == fields(value), key


def test_texts_are_filled_in_and_fall_back_to_english_for_other_languages() -> None:
    assert text("bot", "plan_query_number", "ru", n=1, total=2) == "Запрос 1 из 2:"
    assert text("bot", "plan_query_number", "de", n=1, total=2) == "Query 1 of 2:"
    assert text("bot", "help", "en").count("/query {json}") == 1  # {{ }} are literal braces
    with pytest.raises(KeyError):
        text("bot", "no_such_key", "ru")


@pytest.mark.parametrize(
    ("value", "russian", "english"),
    [
        (1, "пункт", "point"),
        (2, "пункта", "points"),
        (5, "пунктов", "points"),
        (11, "пунктов", "points"),
        (21, "пункт", "points"),
        (24, "пункта", "points"),
        (168.2, "пункта", "points"),
        (0, "пунктов", "points"),
        (None, "пункта", "points"),
    ],
)
def test_unit_words_agree_with_their_number(value, russian: str, english: str) -> None:
    """Russian has three forms after whole numbers and a fourth after fractions (CLDR's
    one/few/many/other); English two."""
    assert text("barb", "unit.points", "ru", plural_of=value) == russian
    assert text("barb", "unit.points", "en", plural_of=value) == english
    assert plural("points", value, "en") == "points"  # a text without forms is the word


def test_numbers_are_written_by_babel_for_the_locale() -> None:
    """Russian groups thousands with a no-break space (U+00A0) and uses a decimal comma."""
    assert decimal(1234.5, "ru") == "1\u00a0234,5"
    assert decimal(1234.5, "en") == "1,234.5"
    assert decimal(12800, "ru", 0) == "12\u00a0800"
    assert decimal(3, "ru", 2) == "3,00"
    assert money(0.006, "ru") == "$0,0060"
    assert money(1234.5, "en") == "$1,234.5000"
    assert percent(-5.06, "ru", 2) == "-5,06\u00a0%" and percent(12, "en") == "12%"
    assert day(dt.date(2008, 1, 2), "ru") == "2 янв. 2008\u202fг."  # CLDR: narrow no-break
    assert day(dt.date(2008, 1, 2), "en") == "Jan 2, 2008"


def test_no_code_branches_on_the_language() -> None:
    """``lang == "ru"``, ``code.startswith("ru")`` and the like are gone: a language is a
    catalog, chosen in ``barb.i18n.language``."""
    branches = []
    for root in (Path(bot.__file__).parent, Path(barb.__file__).parent):
        for path in root.rglob("*.py"):
            if "eval" in path.relative_to(root).parts:
                continue  # barb eval's question set is in both languages, as data
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if _compares_with_a_language(node):
                    branches.append(f"{path.name}:{node.lineno}")  # type: ignore[attr-defined]
    assert branches == []


def _compares_with_a_language(node: ast.AST) -> bool:
    def is_code(value: ast.AST) -> bool:
        return isinstance(value, ast.Constant) and value.value in ("ru", "en")

    if isinstance(node, ast.Compare):
        return any(is_code(v) for v in (node.left, *node.comparators))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "startswith" and any(is_code(a) for a in node.args)
    return False


def test_language_detection() -> None:
    assert detect_language("сколько inside days в 2024?") == "ru"
    assert detect_language("average RTH range by weekday?") == "en"
    assert detect_language("2024?", "ru") == "ru"
    assert language_for("en", "привет") == "en"
    assert language_for("auto", "123", "ru-RU") == "ru"
    assert language_for("auto", "", "de") == "en"


@pytest.mark.parametrize(
    ("rows", "language", "expected"),
    [
        (21, "ru", "По 21 бару NQ (дневные, RTH)"),
        (22, "ru", "По 22 барам NQ (дневные, RTH)"),
        (1, "en", "From 1 daily RTH bar of NQ"),
        (5, "en", "From 5 daily RTH bars of NQ"),
    ],
)
def test_query_says_its_count_of_bars_in_agreement(rows: int, language: str, expected: str) -> None:
    """/query's source line read «По 21 барам» and "From 1 daily RTH bars"."""
    from bot.assistant.result_text import person_text

    meta = {"rows_scanned": rows, "rows_matched": rows, "timeframe": "daily", "session": "RTH"}
    meta |= {"instrument": "NQ", "period_start": "2024-01-02", "period_end": "2024-02-01"}
    result = {"summary": {"type": "scalar", "columns": ["n"], "value": 1}, "metadata": meta}
    assert expected in person_text(result, language)


@pytest.mark.parametrize(
    ("where", "matched", "language", "expected"),
    [
        (None, 259, "ru", "(дневные, RTH), 2024-01-02 — 2024-12-31.\n"),
        (None, 259, "en", "bars of NQ, 2024-01-02 — 2024-12-31.\n"),
        ("range > 300", 259, "ru", "2024-12-31; подошло 259."),
        ("range > 300", 120, "en", "2024-12-31; 120 matched."),
        (None, 120, "en", "2024-12-31; 120 matched."),  # a join's filter kept fewer
    ],
)
def test_query_says_matched_only_of_rows_a_filter_read(
    where: str | None, matched: int, language: str, expected: str
) -> None:
    """/query's «По 259 барам NQ …; подошло 259.» of a query with no where read as a
    filter that kept every bar: nothing was filtered, and the line names the bars alone."""
    from bot.assistant.result_text import person_text

    meta = {"rows_scanned": 259, "rows_matched": matched, "timeframe": "daily", "session": "RTH"}
    meta |= {"instrument": "NQ", "period_start": "2024-01-02", "period_end": "2024-12-31"}
    meta |= {"data_source": "synthetic"}
    query = {"from": "daily", "select": "mean(range)"} | ({"where": where} if where else {})
    summary = {"type": "scalar", "columns": ["n"], "value": 1}
    said = person_text({"summary": summary, "metadata": meta, "query": query}, language)
    assert expected in said
    assert ("matched" in said or "подошло" in said) == (where is not None or matched != 259)


@pytest.mark.parametrize(
    ("language", "volume"), [("en", "118,065,761"), ("ru", "118\u00a0065\u00a0761")]
)
def test_query_writes_a_years_key_as_a_name(language: str, volume: str) -> None:
    """/query's table wrote a year key "2,008" («2 008»): a key is a name, as the chart and
    the model's summary write it; a count beside it keeps its thousands separator."""
    from bot.assistant.result_text import person_text

    meta = {"rows_scanned": 4647, "rows_matched": 4647, "timeframe": "daily", "session": "RTH"}
    meta |= {"instrument": "NQ", "period_start": "2008-01-02", "period_end": "2026-01-07"}
    summary = {
        "type": "grouped",
        "rows": 2,
        "columns": ["y", "sum_volume"],
        "by": ["y"],
        "shown": ["y", "sum_volume"],
        "top": [[2008, 118065761], [2009.0, 92569229]],
    }
    said = person_text({"summary": summary, "metadata": meta}, language)
    assert f"2008  {volume}" in said
    assert "2009   92" in said
    assert "2,008" not in said and "2 008" not in said and "2009.0" not in said


@pytest.mark.parametrize(
    ("key", "values", "count", "expected"),
    [
        ("begun_group_note", {"label": "2008", "size": 3}, 21, "из 21 строки"),
        ("begun_group_note", {"label": "2008", "size": 3}, 25, "из 25 строк"),
        ("import.cut_last_line_empty", {"column": "volume", "then": ""}, 21, "из 21 строки"),
        ("import.cut_last_line_empty", {"column": "volume", "then": ""}, 24, "из 24 строк"),
    ],
)
def test_a_count_of_rows_after_iz_takes_its_genitive(
    key: str, values: dict, count: int, expected: str
) -> None:
    """«из 21 строк» (the genitive plural for every count): 21 takes the singular."""
    from barb.i18n import text

    name = "rows" if key == "begun_group_note" else "lines"
    said = text("barb", key, "ru", plural_of=count, **values, **{name: count})
    assert expected in said

"""The model's Markdown as Telegram HTML: what Telegram accepts, shows and counts.

Every rendered message is checked with the fake Bot API's HTML parser (``parse_html``, which
fails where Telegram's does) and read back as the text and entities a person sees.
"""

from __future__ import annotations

import json

import pytest
from fake_bot_api import ApiError, formatted, utf16_len
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.telegram.render import (
    CAPTION_LIMIT,
    MESSAGE_LIMIT,
    STATUS_ROOM,
    answer_caption,
    answer_html,
    plan_html,
    query_html,
)

ENGLISH = """\
## Average RTH range by weekday

The **widest** day is *Monday* (`mean(range)` = 312.4 points), the narrowest is Friday.
Note: 2 < 3 and 5 > 4 & a_b_c * stray * stars _ stay as written, and <b>raw tags</b> bold.

| weekday | mean_range | days |
|:--------|-----------:|-----:|
| Mon     |      312.4 |  901 |
| Fri     |  **287.1** |  899 |

1. Monday leads
   - by 25 points over Friday
     - in every year since 2010
2. See [the CME calendar](https://www.cmegroup.com/trading-hours.html?a=1&b=2)

```json
{"session": "RTH", "select": "mean(range)"}
```
"""

RUSSIAN = """\
### Итог

Средний **диапазон** по понедельникам — *312,4* пункта; это на 25 пунктов больше пятницы.

| День | Средний диапазон |
|------|-----------------:|
| Пн   |            312,4 |
| Пт   |            287,1 |

- Выборка: все дни с 2008 года
- Источник: [данные CME](https://www.cmegroup.com/)

> Прошлые результаты не гарантируют будущих.
"""


def shown(html_text: str) -> tuple[str, list[dict]]:
    """What Telegram shows for an HTML message (raises ApiError where Telegram refuses)."""
    return formatted(html_text, "HTML", None)


def entity_texts(text: str, entities: list[dict], kind: str) -> list[str]:
    encoded = text.encode("utf-16-le")
    return [
        encoded[2 * e["offset"] : 2 * (e["offset"] + e["length"])].decode("utf-16-le")
        for e in entities
        if e["type"] == kind
    ]


def test_a_model_answer_in_english_is_rendered_not_shown_raw() -> None:
    [message] = answer_html(ENGLISH)
    text, entities = shown(message)

    assert "**" not in text and "##" not in text and "```" not in text
    assert entity_texts(text, entities, "bold")[:2] == ["Average RTH range by weekday", "widest"]
    assert entity_texts(text, entities, "italic") == ["Monday"]
    assert "mean(range)" in entity_texts(text, entities, "code")
    # Stray symbols reach the person as the characters the model wrote; a raw <b> is bold.
    assert "2 < 3 and 5 > 4 & a_b_c * stray * stars _ stay as written, and raw tags bold" in text
    assert "raw tags" in entity_texts(text, entities, "bold")
    [link] = [e for e in entities if e["type"] == "text_link"]
    assert link["url"] == "https://www.cmegroup.com/trading-hours.html?a=1&b=2"
    # Nested lists keep their order and show their depth.
    lines = text.splitlines()
    monday = lines.index("1. Monday leads")
    assert lines[monday + 1].startswith("   ◦ by 25 points")
    assert lines[monday + 2].startswith("      ▪ in every year")
    assert lines[monday + 3].startswith("2. See the CME calendar")
    # The table is a monospaced block with its columns aligned, numbers to the right.
    table, code = entity_texts(text, entities, "pre")
    assert table.splitlines() == [
        "weekday  mean_range  days",
        "-------  ----------  ----",
        "Mon           312.4   901",
        "Fri           287.1   899",
    ]
    assert json.loads(code) == {"session": "RTH", "select": "mean(range)"}
    assert [e.get("language") for e in entities if e["type"] == "pre"] == [None, "json"]


def test_a_russian_answer_keeps_its_letters_table_and_quote() -> None:
    [message] = answer_html(RUSSIAN)
    text, entities = shown(message)

    assert entity_texts(text, entities, "bold") == ["Итог", "диапазон"]
    assert entity_texts(text, entities, "italic") == ["312,4"]
    [table] = entity_texts(text, entities, "pre")
    assert table.splitlines()[2] == "Пн               312,4"
    assert "• Выборка: все дни с 2008 года" in text.splitlines()
    assert entity_texts(text, entities, "blockquote") == [
        "Прошлые результаты не гарантируют будущих."
    ]


def test_links_telegram_would_not_open_stay_text() -> None:
    [message] = answer_html("[click](javascript:alert(1)) and [file](/etc/passwd) ![chart](x.png)")
    text, entities = shown(message)

    assert not [e for e in entities if e["type"] == "text_link"]
    assert "click" in text and "file" in text and "chart" in text


def test_a_long_answer_is_cut_between_blocks_and_loses_nothing() -> None:
    paragraphs = [
        f"Paragraph {i}: **year {2008 + i % 18}** had _{i} inside days_ < 50." for i in range(120)
    ]
    table = "| year | days |\n|---|---:|\n" + "\n".join(
        f"| {y} | {y % 37} |" for y in range(2008, 2026)
    )
    markdown = "\n\n".join([*paragraphs[:60], table, *paragraphs[60:]])

    messages = answer_html(markdown)

    assert len(messages) >= 2
    texts = []
    for message in messages:
        assert utf16_len(message) <= MESSAGE_LIMIT
        text, entities = shown(message)
        texts.append(text)
        # Each paragraph kept whole, with its bold and italic.
        assert len(entity_texts(text, entities, "bold")) == text.count("Paragraph")
    whole = "\n\n".join(texts)
    for i in range(120):
        assert f"Paragraph {i}: year {2008 + i % 18} had {i} inside days < 50." in whole
    # The table fits in a message, so it is in one, whole.
    [with_table] = [t for t in texts if "year  days" in t]
    assert "2008    10" in with_table and "2025    27" in with_table


def test_a_block_longer_than_a_message_is_cut_inside_with_its_tags_closed_and_reopened() -> None:
    code = "\n".join(f"{i:05d} close=17{i % 1000:03d}.25 <tag> & more" for i in range(400))
    bold = "**" + " ".join(f"слово{i}" for i in range(900)) + "**"
    messages = answer_html(f"```\n{code}\n```\n\n{bold}")

    lines: list[str] = []
    words: list[str] = []
    for message in messages:
        assert utf16_len(message) <= MESSAGE_LIMIT
        text, entities = shown(message)
        for kind, found in (("pre", lines), ("bold", words)):
            for part in entity_texts(text, entities, kind):
                (found.extend(part.splitlines()) if kind == "pre" else found.extend(part.split()))
    assert lines == code.splitlines()  # every line, in order, none cut in two
    assert words == [f"слово{i}" for i in range(900)]


def test_a_caption_is_the_headline_then_the_commentary_only_when_both_fit() -> None:
    headline = "mean_range (Mon) = 312.4 points"
    short = "Monday's **mean range**: 312.4 points (901 days)."
    text, entities = shown(answer_caption(headline, short))
    assert text == f"{headline}\n\nMonday's mean range: 312.4 points (901 days)."
    assert entity_texts(text, entities, "bold") == [headline, "mean range"]
    # Counted as Telegram counts: in UTF-16 units, where an emoji is two.
    room = CAPTION_LIMIT - len(headline) - 2
    emoji = "📈" * (room // 2)
    assert answer_caption(headline, emoji) is not None
    assert answer_caption(headline, emoji + "📈") is None
    assert answer_caption("", "📈" * 512) is not None  # no headline: the whole caption
    assert answer_caption(headline, "word " * (CAPTION_LIMIT // 5)) is None


def test_a_long_query_is_split_with_its_pre_closed_and_its_json_whole() -> None:
    query = {
        "session": "RTH",
        "from": "5m",
        "map": {
            f"col_{i}": f"rolling_mean(close, {i + 2}) - rolling_min(low, {i + 3})"
            for i in range(120)
        },
        "select": "mean(col_1)",
    }
    parts = query_html("Barb Script behind this answer:", query, "Plan: RTH, 5 minute bars")

    assert len(parts) >= 2
    code = ""
    for part in parts:
        assert utf16_len(part) <= MESSAGE_LIMIT
        text, entities = shown(part)
        [pre] = entity_texts(text, entities, "pre")
        code += pre + "\n"
    assert json.loads(code) == query
    assert shown(parts[-1])[0].endswith("Plan: RTH, 5 minute bars")


def test_a_plan_leaves_room_for_its_status_line() -> None:
    explanation = "\n\n".join(f"Step {i}: *filter* the bars" for i in range(400))
    parts = plan_html(explanation, "Plan:", "RTH, daily, 2008–2026")

    assert all(utf16_len(p) <= MESSAGE_LIMIT - STATUS_ROOM for p in parts)
    text, entities = shown(parts[-1])
    assert text.endswith("Plan:\nRTH, daily, 2008–2026")
    assert "Plan:" in entity_texts(text, entities, "bold")


# Pieces of Markdown and of the characters that break naive renderers, in any order.
MARKDOWNISH = st.lists(
    st.sampled_from(
        [
            *"ab Яж1.-*_`~#>|[]()<>&!\n\t\\\"'📈",
            "```",
            "| a | b |\n|---|---|\n",
            "http://x.y/?a=1&b",
        ]
    ),
    max_size=300,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(MARKDOWNISH, st.sampled_from([60, 200, CAPTION_LIMIT]))
def test_whatever_the_model_writes_telegram_accepts_every_piece(markdown: str, limit: int) -> None:
    from bot.telegram.markdown import render

    for message in render(markdown, limit):
        assert utf16_len(message) <= limit
        try:
            text, _ = shown(message)
        except ApiError as exc:  # pragma: no cover - the failure message names the input
            raise AssertionError(f"Telegram would refuse {message!r}: {exc}") from exc
        assert text, f"an empty message from {markdown!r}"


def test_a_fence_language_that_is_not_a_name_is_dropped() -> None:
    """Found by the property test: a fence whose 'language' is model noise made the tags
    around the block longer than a small message could hold."""
    from bot.telegram.markdown import render

    [noisy] = render('```aaaaaa&"| a | b |\nx = 1\n```', 60)
    assert "language-" not in noisy
    [named] = render("```python\nx = 1\n```", 200)
    assert 'class="language-python"' in named


@pytest.mark.parametrize(
    ("markdown", "expected", "styled"),
    [
        ("a <b>bold</b> and <i>it</i> <u>u</u> <s>s</s>", "a bold and it u s", 4),
        ("line<br>next<br/>last", "line\nnext\nlast", 0),
        ("before <!-- hidden note --> after", "before  after", 0),
        ("<!-- hidden note -->\n\nafter", "after", 0),
        ("a <b>never closed", "a never closed", 1),
        ("a </i>stray close", "a stray close", 0),
        ("<div>\n<span>x</span> &amp; y\n</div>", "x & y", 0),
        ('<a href="javascript:alert(1)">j</a> <script>x</script>', "j x", 0),
        ("<code><b>c</b></code>", "c", 1),
        # Not HTML: a placeholder the model wrote in angle brackets stays as written.
        ("the mean <over all data> of <symbol>", "the mean <over all data> of <symbol>", 0),
        ("<column name>\n\nnext", "<column name>\n\nnext", 0),
        # Telegram has no superscript: "10<sup>6</sup> contracts" read "106 contracts".
        # A power reads as LaTeX's does ("10^{6}": "10⁶"), one way for both.
        ("10<sup>6</sup> contracts, σ<sup>2</sup>", "10⁶ contracts, σ²", 0),
        ("x<sub>t-1</sub> and σ<sub>1</sub>", "x_(t-1) and σ₁", 0),
        ("<div>R<sup>2</sup> = 0.8</div>", "R² = 0.8", 0),
        ("a<sup>b c", "a^b c", 0),
    ],
)
def test_raw_html_is_mapped_to_telegrams_tags_or_dropped(
    markdown: str, expected: str, styled: int
) -> None:
    [message] = answer_html(markdown)
    text, entities = shown(message)  # Telegram accepts it
    assert text == expected
    assert len(entities) == styled


@pytest.mark.parametrize(
    ("markdown", "expected", "bold", "italic"),
    [
        # The closing ** right after punctuation, before a letter or digit: models write it
        # often (in Russian most), and CommonMark leaves the asterisks on the screen.
        ("**Итог:**Пн — самый широкий день.", "Итог: Пн — самый широкий день.", ["Итог:"], []),
        ("**Average range:**134.5 points", "Average range: 134.5 points", ["Average range:"], []),
        (
            "1. **Пн:**312,4\n2. **Ср (RTH):**301,2",
            "1. Пн: 312,4\n2. Ср (RTH): 301,2",
            ["Пн:", "Ср (RTH):"],
            [],
        ),
        (
            "**Ответ:** 42 дня. **Доля:**3,4 %.",
            "Ответ: 42 дня. Доля: 3,4 %.",
            ["Ответ:", "Доля:"],
            [],
        ),
        ("above SMA(200) on **71.3%**of days", "above SMA(200) on 71.3% of days", ["71.3%"], []),
        ("- ✅ **Пн:**+0,12%", "• ✅ Пн:+0,12%", ["Пн:"], []),
        ("в **2020**г. рост", "в 2020 г. рост", ["2020"], []),
        # What is not emphasis stays as written.
        ("2**10 = 1024, a ** b, `x**2`", "2**10 = 1024, a ** b, x**2", [], []),
        ("x**2 + y**2 = r**2", "x**2 + y**2 = r**2", [], []),
        ("(H-L)**2 + (C-O)**2", "(H-L)**2 + (C-O)**2", [], []),
        ("(H-L)*100 and (C-O)*100", "(H-L)*100 and (C-O)*100", [], []),
        ("2*(3+4)*5 and x**(1/2) or y**(1/3)", "2*(3+4)*5 and x**(1/2) or y**(1/3)", [], []),
        ("2*3*4 and 2 * 3 * 4, 5*ATR*2", "2*3*4 and 2 * 3 * 4, 5*ATR*2", [], []),
        # CommonMark made "12.1 - 0.457" italic and dropped both stars from the formula.
        ("E = 0.543*12.1 - 0.457*10.4 = +1.82", "E = 0.543*12.1 - 0.457*10.4 = +1.82", [], []),
        ("mean_range and max_gap_up:_x", "mean_range and max_gap_up:_x", [], []),
        # Bold glued to the word before it (Russian answers): CommonMark showed the stars.
        ("Диапазон**(RTH)** — 134,5", "Диапазон (RTH) — 134,5", ["(RTH)"], []),
        ("год**2020** был лучшим", "год 2020 был лучшим", ["2020"], []),
        ("В**2020**году", "В 2020 году", ["2020"], []),
        ("__Итог:__Пн и __x:__y", "Итог: Пн и x: y", ["Итог:", "x:"], []),
        # ... while a power stays a power, even with bold after it.
        ("5**2 = 25 и год**2020** лучший", "5**2 = 25 и год 2020 лучший", ["2020"], []),
        ("x**(1/2) и Диапазон**(RTH)**", "x**(1/2) и Диапазон (RTH)", ["(RTH)"], []),
        ("x**2 + y**2 and **bold**", "x**2 + y**2 and bold", ["bold"], []),
        ("\\*\\*Итог:\\*\\*Пн", "**Итог:**Пн", [], []),
        # A space inside the opening marks: the reader sees bold "42 дня", not the stars.
        ("Итог:** 42 дня**", "Итог: 42 дня", ["42 дня"], []),
        # No space after a word's colon, comma or dash: «Итог:42 дня» (a time keeps its own).
        ("Итог:**42 дня**, всего —**7**", "Итог: 42 дня, всего — 7", ["42 дня", "7"], []),
        ("дней,**17** и в 09:**30**", "дней, 17 и в 09:30", ["17", "30"], []),
        (
            "Итог:** 42 дня** и **ровно 7 **раз",
            "Итог: 42 дня и ровно 7 раз",
            ["42 дня", "ровно 7"],
            [],
        ),
        ("**Итог:** 42 дня, a ** b", "Итог: 42 дня, a ** b", ["Итог:"], []),
        ("2** 3 = 8 and (1+1)** 3** 2", "2** 3 = 8 and (1+1)** 3** 2", [], []),
        # Underscores as the model meant them (CommonMark showed the marks) ...
        ("__bold__text и год__2020__ был", "bold text и год 2020 был", ["bold", "2020"], []),
        ("_Итог:_42 дня", "Итог: 42 дня", [], ["Итог:"]),
        ("__ 42 дня__ и __ровно 7 __раз", "42 дня и ровно 7 раз", ["42 дня", "ровно 7"], []),
        ("Итог:__ 42 дня__", "Итог: 42 дня", ["42 дня"], []),
        # ... never touching an identifier.
        (
            "a_b_c, foo__bar__baz, x:_y and _mean_range_",
            "a_b_c, foo__bar__baz, x:_y and mean_range",
            [],
            ["mean_range"],
        ),
        ("close_prev_day is __max_gap__ now", "close_prev_day is max_gap now", ["max_gap"], []),
    ],
)
def test_stars_are_read_as_the_model_meant_them(
    markdown: str, expected: str, bold: list[str], italic: list[str]
) -> None:
    [message] = answer_html(markdown)
    text, entities = shown(message)
    assert text == expected
    assert entity_texts(text, entities, "bold") == bold
    assert entity_texts(text, entities, "italic") == italic


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        (
            r"The ratio is \( \frac{312.4}{287.1} \approx 1.088 \), i.e. \(a \times b\).",
            "The ratio is 312.4/287.1 ≈ 1.088, i.e. a × b.",
        ),
        ("$$\\text{range} = \\frac{H - L}{C} \\times 100$$", "range = (H - L)/C × 100"),
        ("$$\nR = \\frac{H - L}{C} \\times 100\n$$", "R = (H - L)/C × 100"),
        (r"\[ \sigma_{1} = \sqrt{\frac{1}{N-1}\sum r_i^2} \]", "σ₁ = √(1/(N-1)Σ r_i²)"),
        (
            r"Средний диапазон \(\approx 134{,}5\) пункта, $\Delta = 3 \cdot 4$, доля $> 50\%$",
            "Средний диапазон ≈ 134,5 пункта, Δ = 3 · 4, доля > 50%",
        ),
        # Commands without delimiters, and braced powers, in plain text.
        (
            r"ATR \approx 45, т.е. 2 \times 22.5; 10^{6} contracts",
            "ATR ≈ 45, т.е. 2 × 22.5; 10⁶ contracts",
        ),
        (
            r"Шарп: $$S = \frac{\bar{r}}{\sigma_r} \sqrt{252}$$, доход \$1{,}000",
            "Шарп: S = r\u0304/σ_r √252, доход $1,000",
        ),
        (r"\(\frac{\sum_{i=1}^{n} x_i}{n}\)", "(Σ_(i=1)ⁿ x_i)/n"),
        # Spaces between commands kept, commands pylatexenc does not know by their name,
        # sizing dropped, a root's degree a superscript.
        (r"\(a \le b \ne c\), \(\Var(X) = E[X^2]\)", "a ≤ b ≠ c, Var(X) = E[X²]"),
        (r"$$\left( \frac{H}{L} \right)^{2} + \sqrt[3]{27}$$", "( H/L )² + ³√27"),
        (r"a^{2} = a<sup>2</sup>, x_{t-1} = x<sub>t-1</sub>", "a² = a², x_(t-1) = x_(t-1)"),
        # Not formulas: prices, a path, code.
        ("costs $5 and $10, or $5-$6.", "costs $5 and $10, or $5-$6."),
        (r"C:\Users\text and `\(x\)`", r"C:\Users\text and \(x\)"),
        (r"C:\temp\today\new.csv", r"C:\temp\today\new.csv"),
    ],
)
def test_latex_from_the_model_reads_as_plain_text(markdown: str, expected: str) -> None:
    """Telegram shows no formulas: the person saw "\\( \\frac{312.4}{287.1} \\approx" raw."""
    [message] = answer_html(markdown)
    text, _ = shown(message)
    assert text == expected


def test_a_formula_too_deep_to_read_is_shown_as_written() -> None:
    """pylatexenc reads a formula recursively: 2,000 nested roots raised RecursionError,
    and the answer never went out."""
    for formula in ("\\sqrt{" * 2000, "x^{" * 1500, "{" * 3000 + "x"):
        for markdown in (f"$${formula}$$", f"a {formula} b"):
            messages = answer_html(markdown)
            assert messages and all(shown(message) for message in messages)


def test_latex_in_a_table_cell_reads_as_plain_text() -> None:
    [message] = answer_html("| a | b |\n|---|---|\n| \\(x^2\\) | 3 \\times 4 |")
    text, entities = shown(message)
    [table] = entity_texts(text, entities, "pre")
    assert table.splitlines()[2] == "x²  3 × 4"

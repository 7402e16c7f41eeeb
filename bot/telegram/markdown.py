"""The model's Markdown as Telegram HTML, in pieces that each fit one message or caption.

Models write CommonMark with GitHub tables. ``markdown-it-py`` parses it; this module only
renders the syntax tree into the few tags Telegram accepts (``b``, ``i``, ``u``, ``s``,
``code``, ``pre``, ``a``, ``blockquote``) and escapes every other character, so that nothing
a model writes (a stray ``<``, ``*`` or ``_``) can make Telegram refuse the message. Raw HTML
is mapped to those tags where it means the same (``<b>``, ``<br>``), a superscript as LaTeX's
reads (``10<sup>6</sup>``: "10⁶"), else dropped.
Headings become bold lines, lists bullets with indentation, tables monospaced ``<pre>``
blocks with aligned columns.

Rendering produces a list of :class:`Piece` (open tag, text, close tag) per top-level block,
so that splitting never has to parse HTML: long answers are cut between blocks; a block too
long for one message is cut inside its text, at a line or word if possible, closing the tags
open at the cut and opening them again in the next message.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.common.utils import isPunctChar
from markdown_it.rules_inline import StateInline, emphasis
from markdown_it.tree import SyntaxTreeNode

from bot.telegram import latex


def _stars(state: StateInline, silent: bool) -> bool:
    """markdown-it's emphasis rule, with a run of ``*`` read as models mean it where
    CommonMark's flanking rules read it otherwise:

    - ``**`` (and ``__``) between punctuation and a letter or digit may close as well as
      open: ``**Итог:**Пн``, ``__x:__y`` and ``**Average range:**134.5`` are bold
      (CommonMark: the closing run is not right-flanking after ":" before a letter, so the
      person saw the marks). A single ``*`` keeps CommonMark's rule: it is multiplication in
      "(H-L)*100 and (C-O)*100", which would turn italic;
    - a run between a letter, a digit or ")" and a digit is an operator, never emphasis:
      ``x**2 + y**2``, ``(H-L)**2`` and ``2*3*4`` stay as written (CommonMark made "2 + y"
      bold, "3" italic);
    - but ``**`` glued to the word before it opens bold when a closing ``**`` follows
      (``год**2020** был``, ``Диапазон**(RTH)**``, both common in Russian answers): a
      closing run is not followed by a digit nor by "(" the way ``x**2 + y**2`` and
      ``x**(1/2) or y**(1/3)`` go on.

    ``_`` is read the same way where no identifier can be meant (``_underscores``):
    identifiers like ``mean_range``, ``a_b_c`` and ``foo__bar__baz`` never turn italic."""
    start = state.pos
    count = len(state.delimiters)
    if not emphasis.tokenize(state, silent):
        return False
    marker = state.src[start]
    run = state.pos - start
    before = state.src[start - 1] if start > 0 else " "
    after = state.src[state.pos] if state.pos < state.posMax else " "
    glued = before.isalnum() or before in ")]"
    added = state.delimiters[count:]
    if marker == "_":
        _underscores(state, state.delimiters[:count], added, run, before, after)
    elif marker == "*" and glued and after.isdecimal():
        opens = run == 2 and _closer_follows(state, marker * run)
        for delimiter in added:
            delimiter.open, delimiter.close = opens, False
    elif marker == "*" and run == 2 and before.isalpha() and isPunctChar(after):
        if _closer_follows(state, marker * run):
            for delimiter in added:
                delimiter.open = True
    elif run >= 2 and before != marker and isPunctChar(before) and after.isalnum():
        for delimiter in added:
            delimiter.close = True
    elif (
        marker == "*"
        and run == 2
        and not before.isspace()
        and not (before.isdecimal() or before in ")]")  # "2** 3": a power, spaced oddly
        and after.isspace()
        and not _open_before(state.delimiters[:count])
        and _closer_follows(state, marker * run)
    ):
        # "Итог:** 42 дня**": the space went inside the opening marker; a reader sees bold
        # "42 дня" (CommonMark: no run opens before a space, and the person saw the marks).
        for delimiter in added:
            delimiter.open = True
    elif (
        marker == "*"
        and run == 2
        and before.isspace()
        and after.isalnum()
        and _open_before(state.delimiters[:count])
    ):
        # "**ровно 7 **раз": the space went inside the closing marker, which then closes.
        for delimiter in added:
            delimiter.open, delimiter.close = False, True
    return True


def _underscores(
    state: StateInline, earlier: list, added: list, run: int, before: str, after: str
) -> None:
    """``_`` and ``__`` read as the model meant them where CommonMark showed the marks,
    only where they cannot be part of an identifier (``mean_range``, ``foo__bar__baz``):

    - ``__`` glued to the word before it opens when its closing ``__`` ends a word
      (``год__2020__ был``, ``text__bold__ x``), and one glued to the word after it closes
      an open ``__`` (``__bold__text``): an identifier has letters on both sides of both;
    - a run after punctuation before a letter or digit closes an open one
      (``_Итог:_42``, as ``__Итог:__42`` and ``**Итог:**42`` already did);
    - ``__`` with a space inside its marks (``__ 42 дня__``, ``__ровно 7 __раз``), as
      ``**`` does."""
    pending = _open_before(earlier, "_")
    if before.isalnum() and after.isalnum():
        if run == 2 and pending:
            for delimiter in added:
                delimiter.open, delimiter.close = False, True
        elif run == 2 and _closer_follows(state, "__", word_end=True):
            for delimiter in added:
                delimiter.open, delimiter.close = True, False
    elif pending and before != "_" and isPunctChar(before) and after.isalnum():
        for delimiter in added:
            delimiter.close = True
    elif (
        run == 2
        and not before.isalnum()
        and after.isspace()
        and not pending
        and _closer_follows(state, "__")
    ):
        for delimiter in added:
            delimiter.open = True
    elif run == 2 and before.isspace() and after.isalnum() and pending:
        for delimiter in added:
            delimiter.open, delimiter.close = False, True


def _open_before(delimiters: list, marker: str = "*") -> bool:
    """Whether an emphasis of ``marker`` opened earlier in the paragraph is still waiting to
    close (then a run glued to the word before it closes it: "**Итог:** 42")."""
    depth = 0
    for delimiter in delimiters:
        if delimiter.marker != ord(marker):
            continue
        if delimiter.close and depth > 0:
            depth -= 1
        elif delimiter.open:
            depth += 1
    return depth > 0


def _closer_follows(state: StateInline, run: str, word_end: bool = False) -> bool:
    """Whether the next ``run`` of stars in this paragraph can close an emphasis glued to
    the word before it: right after a non-space, and not an operator in its turn (with
    ``word_end``, not followed by a letter or digit either: ``foo__bar__baz`` is a name)."""
    src = state.src
    at = src.find(run, state.pos, state.posMax)
    while at != -1 and src[at + len(run) : at + len(run) + 1] == run[0]:
        at = src.find(run, at + len(run) + 1, state.posMax)  # part of a longer run
    if at == -1 or src[at - 1].isspace() or src[at - 1] == run[0]:
        return False
    after = src[at + len(run) : at + len(run) + 1]
    if word_end and after.isalnum():
        return False
    return not (after.isdecimal() or after == "(")


#: Math delimiters a model writes, each with its closing mark: Telegram shows no formulas.
_MATH_DELIMITERS = (("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]"), ("$", "$"))
#: What makes text between two single dollars a formula and not two prices ("$5 and $10").
_FORMULA_MARKS = re.compile(r"[\\^_{}=]")


def _math(state: StateInline, silent: bool) -> bool:
    """A formula (``\\(…\\)``, ``\\[…\\]``, ``$$…$$``, ``$…$``) as one token whose content
    ``_inline`` shows as plain text (``latex.math``). A single ``$`` opens only before a
    non-space and closes only after one, not before a digit (as Pandoc reads it), around
    something with a formula's marks: "$5 and $10" stays two prices."""
    src, start = state.src, state.pos
    for opening, closing in _MATH_DELIMITERS:
        if not src.startswith(opening, start):
            continue
        begin = start + len(opening)
        end = src.find(closing, begin)
        if opening == "$":
            while end != -1 and (
                src[end - 1].isspace() or src[end + 1 : end + 2].isdecimal() or src[end - 1] == "\\"
            ):
                end = src.find(closing, end + 1)
            body = src[begin:end]
            if (
                end == -1
                or not body
                or body[0].isspace()
                or "$" in body
                or not _FORMULA_MARKS.search(body)
            ):
                return False
        if end == -1 or end > state.posMax or not src[begin:end].strip():
            return False
        if not silent:
            token = state.push("math_inline", "", 0)
            token.content = src[begin:end]
        state.pos = end + len(closing)
        return True
    return False


#: Raw HTML is parsed (``html`` on) so that its tags can be mapped or dropped, never shown
#: as "<b>" nor passed through; tables and ~~strikethrough~~ as GitHub has them.
_PARSER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_PARSER.inline.ruler.at("emphasis", _stars)
_PARSER.inline.ruler.before("escape", "math", _math)
#: Raw HTML tags a model writes, as the Telegram tag they become (the rest are dropped,
#: their text kept).
_RAW_TAGS = {
    "b": "b", "strong": "b", "i": "i", "em": "i", "u": "u", "ins": "u",
    "s": "s", "strike": "s", "del": "s", "code": "code", "pre": "pre", "a": "a",
}  # fmt: skip
#: Raw super- and subscripts, as the mark of the power or index they are: "10<sup>6</sup>"
#: reads "10⁶" as LaTeX's "10^{6}" does (``latex.script``); a mark alone where one is not
#: closed.
_SCRIPTS = {"sup": "^", "sub": "_"}
_RAW_SCRIPT = re.compile(r"<(sup|sub)\s*>([^<]*)</\1\s*>", re.I)
#: Other HTML elements a model may write: dropped, their text kept. A name outside both
#: ("<over all data>", "<symbol>") is no tag but the model's words, shown as written.
_HTML_ELEMENTS = frozenset(
    [
        "abbr",
        "address",
        "article",
        "aside",
        "audio",
        "big",
        "blockquote",
        "body",
        "br",
        "button",
        "caption",
        "center",
        "cite",
        "col",
        "dd",
        "del",
        "details",
        "dfn",
        "div",
        "dl",
        "dt",
        "embed",
        "fieldset",
        "figcaption",
        "figure",
        "font",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hr",
        "html",
        "iframe",
        "img",
        "input",
        "kbd",
        "label",
        "legend",
        "li",
        "link",
        "main",
        "mark",
        "meta",
        "nav",
        "nobr",
        "noscript",
        "object",
        "ol",
        "option",
        "p",
        "param",
        "q",
        "samp",
        "script",
        "section",
        "select",
        "small",
        "source",
        "span",
        "strike",
        "style",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "title",
        "tr",
        "tt",
        "ul",
        "var",
        "video",
        "wbr",
        "tg-spoiler",
        "tg-emoji",
    ]
)
#: A tag, a comment, or a declaration (<!DOCTYPE …>, <?xml …?>, CDATA) in raw HTML.
_RAW_MARKUP = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<[!?][^>]*>|<(/?)([A-Za-z][A-Za-z0-9-]*)([^>]*)>", re.S
)
_HREF = re.compile(r"""\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
#: Link targets Telegram opens; anything else (javascript:, relative paths) stays plain text.
_LINK_SCHEMES = ("http://", "https://", "tg://", "mailto:")
_BULLETS = ("•", "◦", "▪")
_BLOCK_GAP = "\n\n"

#: What a fenced block's language may be (Telegram highlights by such names).
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#-]{1,12}")


@dataclass(frozen=True)
class Piece:
    """One step of rendered HTML: a tag that opens (with the tag that closes it), a tag that
    closes, or text (kept raw, escaped when written out)."""

    kind: Literal["open", "close", "text"]
    value: str
    closing: str = ""

    def html(self) -> str:
        return html.escape(self.value, quote=False) if self.kind == "text" else self.value


def _text(value: str) -> Piece:
    return Piece("text", value)


def _wrap(tag: str, inner: list[Piece], attrs: str = "") -> list[Piece]:
    return [Piece("open", f"<{tag}{attrs}>", f"</{tag}>"), *inner, Piece("close", f"</{tag}>")]


def utf16_len(text: str) -> int:
    """Telegram counts a message's length in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def to_html(pieces: list[Piece]) -> str:
    return "".join(p.html() for p in pieces)


# --- rendering -------------------------------------------------------------------------


def blocks(markdown: str) -> list[list[Piece]]:
    """The top-level blocks of ``markdown`` (paragraphs, headings, lists, tables, code),
    each rendered on its own and balanced; a heading is one block with the block under it,
    so that messages are never cut between them."""
    root = SyntaxTreeNode(_PARSER.parse(markdown))
    out: list[list[Piece]] = []
    heading_open = False  # the last block kept is a heading, still waiting for its text
    for node in root.children:
        block = _block(node, depth=0)
        # An empty heading or list item renders to tags alone: Telegram refuses an empty
        # message.
        if not any(p.kind == "text" and p.value.strip() for p in block):
            continue
        if heading_open:
            # A heading goes with the block under it: split apart, "Part 5" ended one
            # message and its paragraph opened the next.
            out[-1] = [*out[-1], _text(_BLOCK_GAP), *block]
        else:
            out.append(block)
        heading_open = node.type == "heading"
    return out


def _block(node: SyntaxTreeNode, depth: int) -> list[Piece]:
    kind = node.type
    if kind == "paragraph":
        return _inline_of(node)
    if kind == "heading":
        return _wrap("b", _inline_of(node))
    if kind in ("bullet_list", "ordered_list"):
        return _list(node, depth)
    if kind in ("fence", "code_block"):
        code = node.content.rstrip("\n")
        language = node.info.split()[0] if kind == "fence" and node.info.strip() else ""
        # A language is a short name (python, json, sql): anything else is dropped, so the
        # tags around a block stay short enough to split any message cleanly.
        if not _LANGUAGE.fullmatch(language):
            language = ""
        if language:
            attrs = f' class="language-{html.escape(language, quote=True)}"'
            return _wrap("pre", _wrap("code", [_text(code)], attrs))
        return _wrap("pre", [_text(code)])
    if kind == "table":
        return _wrap("pre", [_text(_table_text(node))])
    if kind == "blockquote":
        inner = _joined([_block(child, depth + 1) for child in node.children], _BLOCK_GAP)
        # Telegram does not nest quotes: a quote inside a quote (or a list) is shown flat.
        return inner if depth > 0 else _wrap("blockquote", inner)
    if kind == "hr":
        return [_text("———")]
    if kind == "html_block":  # raw HTML: its safe tags mapped, the rest dropped
        return _RawHtml().render(node.content.rstrip("\n"))
    return [_text(node.content)] if node.content else []


def _joined(parts: list[list[Piece]], gap: str) -> list[Piece]:
    out: list[Piece] = []
    for part in parts:
        if not part:
            continue
        if out:
            out.append(_text(gap))
        out.extend(part)
    return out


def _list(node: SyntaxTreeNode, depth: int) -> list[Piece]:
    ordered = node.type == "ordered_list"
    start = int(node.attrs.get("start", 1)) if ordered else 1
    indent = "   " * depth
    lines: list[list[Piece]] = []
    for number, item in enumerate(node.children, start=start):
        marker = f"{number}." if ordered else _BULLETS[min(depth, len(_BULLETS) - 1)]
        parts = []
        for child in item.children:
            nested = child.type in ("bullet_list", "ordered_list")
            parts.append(_list(child, depth + 1) if nested else _block(child, depth + 1))
        body = _joined([p for p in parts if p], "\n")
        lines.append([_text(f"{indent}{marker} "), *body])
    return _joined(lines, "\n")


def _inline_of(node: SyntaxTreeNode) -> list[Piece]:
    # Raw tags among the children open and close across them ("<b>", text, "</b>"); any
    # left open are closed here, so that every node's pieces stay balanced.
    raw = _RawHtml()
    pieces: list[Piece] = []
    glued = False  # the last child was bold, its closing mark glued to what follows
    children = list(node.children)
    skip_to = 0
    for at, child in enumerate(children):
        if at < skip_to:
            continue
        if child.type == "html_inline":
            closed = _script_end(children, at)
            if closed is not None:  # 10<sup>6</sup>: "10⁶", as a LaTeX power reads
                inner = "".join(_plain(c) for c in children[at + 1 : closed])
                pieces.append(_text(latex.script(_SCRIPTS[_tag_name(child.content)], inner)))
                skip_to = closed + 1
                continue
            pieces += raw.tag(child.content)
            continue
        shown = _inline(child)
        if child.type == "strong":
            shown = _spaced_bold(pieces, shown)
        elif (
            glued
            and pieces[-1].kind == "close"  # no space of the bold's own moved out after it
            and shown
            and shown[0].kind == "text"
            and shown[0].value[:1].isalnum()
        ):
            shown[0] = _text(" " + shown[0].value)
        # Italic too: «_Итог:_42» read «Итог:42».
        glued = child.type in ("strong", "em")
        pieces += shown
    return pieces + raw.close_all()


def _tag_name(raw: str) -> str:
    match = _RAW_MARKUP.fullmatch(raw.strip())
    return match.group(2).lower() if match is not None and match.group(2) else ""


def _script_end(children: list[SyntaxTreeNode], at: int) -> int | None:
    """Where the ``<sup>`` or ``<sub>`` opened at ``children[at]`` closes, with only text
    between (a power or an index); None otherwise."""
    opening = _RAW_MARKUP.fullmatch(children[at].content.strip())
    if opening is None or opening.group(1) or (opening.group(2) or "").lower() not in _SCRIPTS:
        return None
    name = opening.group(2).lower()
    for end in range(at + 1, len(children)):
        child = children[end]
        if child.type == "html_inline":
            closing = _RAW_MARKUP.fullmatch(child.content.strip())
            found = closing is not None and closing.group(1) == "/"
            return end if found and (closing.group(2) or "").lower() == name else None
        if child.type not in ("text", "math_inline", "code_inline"):
            return None
    return None


def _spaced_bold(before: list[Piece], bold: list[Piece]) -> list[Piece]:
    """Bold set apart by a space from a word it is glued to (``_glued``): «год**2020**»
    read «год2020» (Telegram draws no gap between a plain and a bold letter), so the person
    reads «год 2020». Spaces the model put inside the marks («** 42 дня**») stand outside
    the bold."""
    opening, *inner, closing = bold
    lead = inner[0].value[: len(inner[0].value) - len(inner[0].value.lstrip())] if inner else ""
    if lead and inner[0].kind == "text":
        inner[0] = _text(inner[0].value.lstrip())
    else:
        lead = ""
    trail = ""
    if inner and inner[-1].kind == "text" and inner[-1].value != inner[-1].value.rstrip():
        value = inner[-1].value
        trail = value[len(value.rstrip()) :]
        inner[-1] = _text(value.rstrip())
    if before and before[-1].kind == "text" and _glued(before[-1].value):
        lead = lead or " "
    elif "".join(p.value for p in before if p.kind == "text")[-1:] in ("", "\n", " "):
        lead = ""  # "__ 42 дня__" opening a line: no space before its first word
    out = [opening, *inner, closing]
    if lead:
        out.insert(0, _text(lead))
    if trail:
        out.append(_text(trail))
    return out


def _glued(text: str) -> bool:
    """Whether bold right after ``text`` reads glued to it: after a letter or digit, a dash,
    or a word's colon, comma or semicolon («Итог:**42 дня**» read «Итог:42 дня»); not
    after a time's colon (``09:**30**``) nor an opening bracket."""
    last = text[-1:]
    return last.isalnum() or last == "—" or (last in ":;," and text[-2:-1].isalpha())


class _RawHtml:
    """Raw HTML in the model's text as Telegram HTML: ``b``, ``i``, ``u``, ``s``, ``code``,
    ``pre`` and ``a`` (to a link Telegram opens) kept, balanced; ``<br>`` a line break;
    comments, declarations and every other tag dropped, their text kept. Nothing raw gets
    through: each piece is one we build."""

    def __init__(self) -> None:
        self.open: list[str] = []  # Telegram tags opened and not yet closed, innermost last

    def render(self, source: str) -> list[Piece]:
        """A block of raw HTML: its text (entities decoded) and tags, balanced, without the
        blank lines that dropped tags (``<div>``) leave at its ends."""
        source = _RAW_SCRIPT.sub(
            lambda m: html.escape(
                latex.script(_SCRIPTS[m.group(1).lower()], html.unescape(m.group(2))), quote=False
            ),
            source,
        )
        pieces: list[Piece] = []
        at = 0
        for match in _RAW_MARKUP.finditer(source):
            pieces += self._text(source[at : match.start()])
            pieces += self.tag(match.group(0))
            at = match.end()
        pieces += self._text(source[at:]) + self.close_all()
        texts = [i for i, p in enumerate(pieces) if p.kind == "text"]
        if texts:
            first, last = texts[0], texts[-1]
            pieces[first] = _text(pieces[first].value.lstrip())
            pieces[last] = _text(pieces[last].value.rstrip())
        return pieces

    @staticmethod
    def _text(source: str) -> list[Piece]:
        return [_text(html.unescape(source))] if source else []

    def tag(self, raw: str) -> list[Piece]:
        """One raw tag (or comment): the pieces it becomes, often none."""
        match = _RAW_MARKUP.fullmatch(raw.strip())
        if match is None or match.group(2) is None:  # a comment, a declaration
            return []
        closing, name, attrs = match.group(1) == "/", match.group(2).lower(), match.group(3)
        if name == "br":
            return [_text("\n")]
        # No superscript in Telegram: "10<sup>6</sup>" dropped to "106" was a wrong number.
        if name in _SCRIPTS:
            return [] if closing else [_text(_SCRIPTS[name])]
        tag = _RAW_TAGS.get(name)
        if tag is None:
            return [] if name in _HTML_ELEMENTS else [_text(raw)]
        if closing:
            if tag not in self.open:
                return []
            out: list[Piece] = []
            while self.open:  # tags opened inside it close with it
                inner = self.open.pop()
                out.append(Piece("close", f"</{inner}>"))
                if inner == tag:
                    break
            return out
        # Telegram shows no formatting inside code, nor a link inside a link.
        if any(t in ("code", "pre") for t in self.open) or (tag == "a" and "a" in self.open):
            return []
        attributes = ""
        if tag == "a":
            href = _HREF.search(attrs)
            target = next((g for g in href.groups() if g is not None), "") if href else ""
            target = html.unescape(target)
            if not target.lower().startswith(_LINK_SCHEMES):
                return []
            attributes = f' href="{html.escape(target, quote=True)}"'
        self.open.append(tag)
        return [Piece("open", f"<{tag}{attributes}>", f"</{tag}>")]

    def close_all(self) -> list[Piece]:
        out = [Piece("close", f"</{tag}>") for tag in reversed(self.open)]
        self.open.clear()
        return out


def _inline(node: SyntaxTreeNode) -> list[Piece]:
    kind = node.type
    if kind == "inline":
        return _inline_of(node)
    if kind == "html_inline":  # alone, outside ``_inline_of``: dropped rather than shown
        return []
    if kind == "text":
        return [_text(latex.commands(node.content))]
    if kind == "math_inline":
        return [_text(latex.math(node.content))]
    if kind in ("softbreak", "hardbreak"):
        return [_text("\n")]
    if kind == "strong":
        return _wrap("b", _inline_of(node))
    if kind == "em":
        return _wrap("i", _inline_of(node))
    if kind == "s":
        return _wrap("s", _inline_of(node))
    if kind == "code_inline":
        return _wrap("code", [_text(node.content)])
    if kind == "link":
        href = str(node.attrs.get("href", ""))
        inner = _inline_of(node)
        if not href.lower().startswith(_LINK_SCHEMES):
            return inner
        return _wrap("a", inner, f' href="{html.escape(href, quote=True)}"')
    if kind == "image":  # no pictures in a text message: the description, linked
        alt = [_text(node.content or "image")]
        src = str(node.attrs.get("src", ""))
        if not src.lower().startswith(_LINK_SCHEMES):
            return alt
        return _wrap("a", alt, f' href="{html.escape(src, quote=True)}"')
    return [_text(node.content)] if node.content else _inline_of(node)


def _plain(node: SyntaxTreeNode) -> str:
    """A table cell's text without formatting: ``<pre>`` shows no bold."""
    if node.type == "code_inline":
        return node.content
    if node.type == "text":
        return latex.commands(node.content)
    if node.type == "math_inline":
        return latex.math(node.content)
    if node.type in ("softbreak", "hardbreak"):
        return " "
    return "".join(_plain(child) for child in node.children)


def _table_text(table: SyntaxTreeNode) -> str:
    rows: list[list[str]] = []
    aligns: list[str] = []
    for section in table.children:  # thead, tbody
        for tr in section.children:
            cells = tr.children
            rows.append([_plain(cell).strip() for cell in cells])
            if not aligns:
                aligns = [str(c.attrs.get("style", "")) for c in cells]
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(width)]

    def line(row: list[str]) -> str:
        cells = []
        for i, cell in enumerate(row):
            right = i < len(aligns) and "right" in aligns[i]
            cells.append(cell.rjust(widths[i]) if right else cell.ljust(widths[i]))
        return "  ".join(cells).rstrip()

    out = [line(rows[0]), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows[1:]]
    return "\n".join(out)


# --- splitting -------------------------------------------------------------------------


def render(markdown: str, limit: int) -> list[str]:
    """``markdown`` as Telegram HTML in messages of at most ``limit`` UTF-16 units each
    (counted on the HTML, which is never shorter than what Telegram counts), cut between
    blocks where possible and never inside a tag."""
    return join(blocks(markdown), limit)


def join(parts: list[list[Piece]], limit: int) -> list[str]:
    """Blocks (each balanced pieces) as HTML messages of at most ``limit`` UTF-16 units,
    a blank line between blocks, cut between blocks where possible: only a block longer
    than a message is cut inside (``split``)."""
    messages: list[str] = []
    current = ""
    for block in parts:
        for part in split(block, limit):
            joined = f"{current}{_BLOCK_GAP}{part}" if current else part
            if utf16_len(joined) <= limit:
                current = joined
            else:
                messages.append(current)
                current = part
    if current:
        messages.append(current)
    return messages


def fits(markdown: str, limit: int) -> str | None:
    """``markdown`` as HTML if it fits in one message of ``limit``; None otherwise."""
    rendered = render(markdown, limit)
    return rendered[0] if len(rendered) == 1 else None


def split(pieces: list[Piece], limit: int) -> list[str]:
    """Balanced pieces as one or more balanced HTML strings, each within ``limit``: cut at
    a line break outside any tag where possible (between a list's items), else inside a
    line (``_split_line``). A long list was cut where the limit fell, inside an item's word
    («… — сре» | «дний диапазон …»)."""
    whole = to_html(pieces)
    if utf16_len(whole) <= limit:
        return [whole]
    out: list[str] = []
    current = ""
    for line in _lines(pieces):
        text = to_html(line)
        if utf16_len((current + text).rstrip("\n")) <= limit:
            current += text
        elif utf16_len(text.rstrip("\n")) > limit:
            # Too long for any message: cut inside, from where this one has room.
            *cut, current = _split_line(line, limit, current)
            out += cut
        else:
            out.append(current)
            current = text
    out.append(current)
    return [message.rstrip("\n") for message in out if message.strip()]


def _lines(pieces: list[Piece]) -> list[list[Piece]]:
    """Balanced pieces as lines, each ended by a line break outside any tag (kept in it)."""
    lines: list[list[Piece]] = []
    current: list[Piece] = []
    depth = 0
    for piece in pieces:
        if piece.kind == "text" and depth == 0 and "\n" in piece.value:
            *ended, rest = piece.value.split("\n")
            for text in ended:
                lines.append([*current, Piece("text", text + "\n")])
                current = []
            if rest:
                current.append(Piece("text", rest))
            continue
        depth += {"open": 1, "close": -1}.get(piece.kind, 0)
        current.append(piece)
    if current:
        lines.append(current)
    return lines


def _split_line(pieces: list[Piece], limit: int, start: str = "") -> list[str]:
    """Balanced pieces as one or more balanced HTML strings, each within ``limit``, cut
    inside the text at a line or word if possible, the tags open at a cut closed and opened
    again after it; the first after ``start`` (balanced HTML the message already holds)."""
    out: list[str] = []
    stack: list[Piece] = []  # tags open at this point
    current = start
    has_text = bool(start.strip())  # tags alone make an empty message, which Telegram refuses

    def closing() -> str:
        return "".join(p.closing for p in reversed(stack))

    def flush() -> None:
        nonlocal current, has_text
        if has_text:
            out.append(current + closing())
        current = "".join(p.value for p in stack)
        has_text = False

    for piece in pieces:
        if piece.kind == "open":
            if has_text and utf16_len(current + piece.value + piece.closing + closing()) > limit:
                flush()
            current += piece.value
            stack.append(piece)
        elif piece.kind == "close":
            current += piece.value
            stack.pop()
        else:
            rest = piece.value
            while rest:
                head, rest = _cut(rest, limit - utf16_len(current + closing()))
                if not head:
                    if not has_text:
                        raise ValueError(f"{limit} characters cannot hold the tags around text")
                    flush()
                    continue
                current += html.escape(head, quote=False)
                has_text = has_text or bool(head.strip())
                if rest:
                    flush()
    if has_text:
        out.append(current)
    return out


def _cut(text: str, room: int) -> tuple[str, str]:
    """The longest head of ``text`` whose escaped form fits in ``room`` UTF-16 units, ended
    at a line break or a space when one is in its second half; and the rest."""
    if room <= 0:
        return "", text
    used = 0
    end = 0
    for ch in text:
        size = utf16_len(html.escape(ch, quote=False))
        if used + size > room:
            break
        used += size
        end += 1
    if end >= len(text):
        return text, ""
    head = text[:end]
    for sep in ("\n", " "):
        at = head.rfind(sep)
        if at > end // 2:
            return text[: at + 1], text[at + 1 :]
    return head, text[end:]

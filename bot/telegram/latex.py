"""LaTeX a model writes in its commentary, as the plain text a trader reads in Telegram.

Telegram shows no formulas: ``\\( \\frac{312.4}{287.1} \\approx 1.09 \\)`` reached the person
with its backslashes. Here it reads "312.4/287.1 ≈ 1.09". pylatexenc parses the LaTeX and
writes its symbols as the characters they stand for (``\\approx``: ≈, ``\\sigma``: σ) and
``\\text{…}`` as its words; this module only says how a trader reads the rest: fractions
as a slash (the parts in brackets when they are sums), ``^2`` a superscript where Unicode
has one (the one way Barb writes a power: ``10<sup>6</sup>`` too, see :func:`script`), a
command pylatexenc does not know by its name without the backslash. Nothing is evaluated,
only rewritten.

:func:`math` reads what stood between math delimiters (``\\(…\\)``, ``$…$``); :func:`commands`
rewrites only commands that are surely LaTeX in ordinary text ("range \\times 2"), leaving
every other character as written ("C:\\Users\\text" is a path).
"""

from __future__ import annotations

import re

from pylatexenc import latexwalker, macrospec
from pylatexenc.latex2text import (
    LatexNodes2Text,
    MacroTextSpec,
    SpecialsTextSpec,
    get_default_latex_context_db,
)

_SUPERSCRIPTS = str.maketrans("0123456789+-=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ")
_SUBSCRIPTS = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
_SCRIPT_TABLES = {"^": _SUPERSCRIPTS, "_": _SUBSCRIPTS}
_FRACTIONS = ("frac", "dfrac", "tfrac", "cfrac")
#: What pylatexenc writes otherwise or not at all: ``\\ne`` it dropped ("a ≠ b" read
#: "a  b"); Σ and Π are in every phone's font, ∑ and ∏ not always.
_SYMBOLS = {
    "ne": "≠", "lt": "<", "gt": ">", "implies": "⇒", "degree": "°", "sum": "Σ", "prod": "Π",
    "leqslant": "≤", "geqslant": "≥", "ast": "*",
}  # fmt: skip
#: Commands that only change how a bracket or a formula is drawn: dropped ("\\left(" read
#: "left(", a name pylatexenc does not know).
_SIZING = (
    "left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl",
    "biggr", "displaystyle", "textstyle", "limits", "nolimits",
)  # fmt: skip
#: Accents over one letter, as the combining mark a mean's bar is read by (``\\bar{r}``: r̄).
_ACCENTS = {"bar": "\u0304", "overline": "\u0304"}
#: Commands that are surely LaTeX when a model writes them in ordinary text: rewritten
#: there; any other backslash is the person's text (a path, an escape).
_IN_TEXT = frozenset((
    "times", "cdot", "div", "pm", "mp", "approx", "sim", "simeq", "cong", "equiv", "propto", "le",
    "leq", "leqslant", "ge", "geq", "geqslant", "ne", "neq", "ll", "gg", "to", "rightarrow",
    "Rightarrow", "leftarrow", "implies", "uparrow", "downarrow", "infty", "in", "notin", "cdots",
    "ldots", "dots", "sum", "prod", "int", "partial", "nabla", "sqrt", "circ", "degree", "alpha",
    "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "kappa", "lambda",
    "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "phi", "varphi", "chi", "psi", "omega", "Gamma",
    "Delta", "Theta", "Lambda", "Pi", "Sigma", "Phi", "Psi", "Omega", "quad", "qquad", "mid",
    "langle", "rangle", "text", "textbf", "textit", "textrm", "mathrm", "mathbf", "mathit",
    "operatorname", "bar", "hat", "tilde", "overline", "frac", "dfrac", "tfrac", "cfrac", "left",
    "right", "displaystyle",
))  # fmt: skip
#: Of those, the ones that take an argument: LaTeX in ordinary text only when a brace
#: follows ("C:\\Users\\text and" is a path).
_TAKES_ARGUMENT = frozenset((
    "sqrt", "text", "textbf", "textit", "textrm", "mathrm", "mathbf", "mathit", "operatorname",
    "bar", "hat", "tilde", "overline", "frac", "dfrac", "tfrac", "cfrac",
))  # fmt: skip
_COMMAND_IN_TEXT = re.compile(
    r"\\(" + "|".join(sorted(_IN_TEXT, key=len, reverse=True)) + r")(?![A-Za-z])"
    r"|[\^_]\{[^{}]*\}|\{,\}"
)


def _grouped(part: str) -> str:
    """A fraction's part or a power, in brackets when it has more than one term."""
    part = part.strip()
    if len(part) > 1 and re.search(r"[\s+\-−×·/=<>≤≥]", part) and not _bracketed(part):
        return f"({part})"
    return part


def _bracketed(part: str) -> bool:
    if not (part.startswith("(") and part.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(part):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and i < len(part) - 1:
            return False
    return True


def script(mark: str, value: str) -> str:
    """A power (``mark`` "^") or an index ("_") as a trader reads it: in Unicode's
    superscript or subscript digits where it has them all ("10⁶", "σ₁"), else after the
    mark, in brackets when it has several terms ("x_(t-1)")."""
    value = value.strip()
    table = _SCRIPT_TABLES[mark]
    if value and all(ord(c) in table for c in value):
        return value.translate(table)
    return mark + _grouped(value) if value else mark


class _Plain(LatexNodes2Text):
    """pylatexenc's text of LaTeX, with the spaces a model wrote kept where LaTeX drops
    them: "a \\le b" read "a ≤b"."""

    def nodelist_to_text(self, nodelist: list) -> str:
        out = []
        for node in nodelist:
            out.append(self.node_to_text(node))
            if node.isNodeType(latexwalker.LatexMacroNode) and not _arguments(node):
                out.append(node.macro_post_space)
        return "".join(out)


def _arguments(node: latexwalker.LatexNode) -> list:
    parsed = getattr(node, "nodeargd", None)
    return [a for a in (parsed.argnlist if parsed is not None else []) if a is not None]


def _argument_text(node: latexwalker.LatexNode, l2tobj: LatexNodes2Text, index: int) -> str:
    found = _arguments(node)
    return l2tobj.nodelist_to_text([found[index]]) if len(found) > index else ""


def _fraction(n: latexwalker.LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    top, bottom = _argument_text(n, l2tobj, 0), _argument_text(n, l2tobj, 1)
    return f"{_grouped(top)}/{_grouped(bottom)}"


def _root(n: latexwalker.LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    found = _arguments(n)  # \sqrt[3]{x}: the last argument is what is under the root
    degree = l2tobj.nodelist_to_text(found[:-1]) if len(found) > 1 else ""
    root = "√" + _grouped(l2tobj.nodelist_to_text(found[-1:]))
    return script("^", degree) + root if degree.strip() else root


def _accent(n: latexwalker.LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    inner = _argument_text(n, l2tobj, 0).strip()
    return inner + _ACCENTS[n.macroname] if len(inner) == 1 else inner


def _script(n: latexwalker.LatexSpecialsNode, l2tobj: LatexNodes2Text) -> str:
    return script(n.specials_chars, _argument_text(n, l2tobj, 0))


def _unknown(n: latexwalker.LatexMacroNode) -> str:
    return n.macroname  # "\\Var(X)": "Var(X)", not "(X)"


def _walker_context() -> macrospec.LatexContextDb:
    """pylatexenc's parser, with ``^`` and ``_`` taking their one argument (a letter, a
    digit or a braced group) as LaTeX does in math."""
    db = latexwalker.get_default_latex_context_db()
    one = macrospec.MacroStandardArgsParser("{")
    db.add_context_category(
        "barb-scripts",
        prepend=True,
        specials=[macrospec.SpecialsSpec(mark, args_parser=one) for mark in "^_"],
    )
    return db


def _text_context() -> macrospec.LatexContextDb:
    db = get_default_latex_context_db()
    macros = [MacroTextSpec(name, simplify_repl=_fraction) for name in _FRACTIONS]
    macros += [MacroTextSpec(name, simplify_repl=_accent) for name in _ACCENTS]
    macros += [MacroTextSpec(name, simplify_repl=text) for name, text in _SYMBOLS.items()]
    macros += [MacroTextSpec(name, simplify_repl="") for name in _SIZING]
    macros.append(MacroTextSpec("sqrt", simplify_repl=_root))
    specials = [SpecialsTextSpec(mark, simplify_repl=_script) for mark in "^_"]
    specials.append(SpecialsTextSpec("~", simplify_repl=" "))
    db.add_context_category("barb", prepend=True, macros=macros, specials=specials)
    db.set_unknown_macro_spec(MacroTextSpec("", simplify_repl=_unknown))
    return db


_WALKER_CONTEXT = _walker_context()
_TO_TEXT = _Plain(latex_context=_text_context(), math_mode="text", strict_latex_spaces={
    "between-macro-and-chars": False, "between-latex-constructs": True, "after-comment": False,
    "in-equations": None,
})  # fmt: skip


def _walker(source: str) -> latexwalker.LatexWalker:
    return latexwalker.LatexWalker(source, latex_context=_WALKER_CONTEXT, tolerant_parsing=True)


def _tidy(text: str) -> str:
    return re.sub(r"[ \t]{2,}", " ", text)


#: What a formula too deep for pylatexenc's recursive reader raises (2,000 nested "{"):
#: shown as written, the answer still sent.
_UNREADABLE = (RecursionError, latexwalker.LatexWalkerError)


def math(source: str) -> str:
    """A formula (what stood between math delimiters) as plain text."""
    try:
        nodes, _, _ = _walker(source).get_latex_nodes()
        return _tidy(_TO_TEXT.nodelist_to_text(nodes)).strip()
    except _UNREADABLE:
        return source.strip()


def commands(text: str) -> str:
    """Ordinary text with the LaTeX commands that are surely LaTeX rewritten ("a \\times b"
    → "a × b"), every other character as written."""
    if "\\" not in text and "{" not in text:
        return text
    try:
        return _commands(text)
    except _UNREADABLE:
        return text


def _commands(text: str) -> str:
    out: list[str] = []
    at = 0
    walker: latexwalker.LatexWalker | None = None
    for match in _COMMAND_IN_TEXT.finditer(text):
        if match.start() < at:
            continue
        if match.group(0) == "{,}":  # a decimal comma: 134{,}5
            out += [text[at : match.start()], ","]
            at = match.end()
            continue
        name = match.group(1)
        if name in _TAKES_ARGUMENT and not text.startswith("{", match.end()):
            continue
        walker = walker or _walker(text)
        # The command with its arguments, or a braced power or index ("10^{6}", "x_{t-1}").
        [node], _, _ = walker.get_latex_nodes(pos=match.start(), read_max_nodes=1)
        out += [text[at : match.start()], _TO_TEXT.node_to_text(node)]
        at = node.pos + node.len
        if node.isNodeType(latexwalker.LatexMacroNode) and not _arguments(node):
            out.append(node.macro_post_space)  # "2 \\times 22.5": the space LaTeX drops
    out.append(text[at:])
    return "".join(out)

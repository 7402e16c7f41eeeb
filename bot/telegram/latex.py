"""LaTeX a model writes in its commentary, as the plain text a trader reads in Telegram.

Telegram shows no formulas: ``\\( \\frac{312.4}{287.1} \\approx 1.09 \\)`` reached the person
with its backslashes. Here it reads "312.4/287.1 ≈ 1.09": fractions become a slash (the parts
in brackets when they are sums), symbols the characters they stand for, ``^2`` a superscript
where Unicode has one, ``\\text{…}`` its words. Nothing is evaluated, only rewritten; a
command we do not know loses its backslash and keeps its name.

:func:`math` reads what stood between math delimiters (``\\(…\\)``, ``$…$``); :func:`commands`
rewrites only the known commands in ordinary text ("range \\times 2"), leaving every other
character as written.
"""

from __future__ import annotations

import re

#: Commands that stand for one character (or a few) a person reads.
_SYMBOLS = {
    "times": "×", "cdot": "·", "div": "÷", "pm": "±", "mp": "∓", "ast": "*",
    "approx": "≈", "sim": "~", "simeq": "≃", "cong": "≅", "equiv": "≡", "propto": "∝",
    "le": "≤", "leq": "≤", "leqslant": "≤", "ge": "≥", "geq": "≥", "geqslant": "≥",
    "ne": "≠", "neq": "≠", "ll": "≪", "gg": "≫", "lt": "<", "gt": ">",
    "to": "→", "rightarrow": "→", "Rightarrow": "⇒", "leftarrow": "←", "implies": "⇒",
    "uparrow": "↑", "downarrow": "↓", "infty": "∞", "in": "∈", "notin": "∉",
    "cdots": "…", "ldots": "…", "dots": "…", "vdots": "⋮", "sum": "Σ", "prod": "Π",
    "int": "∫", "partial": "∂", "nabla": "∇", "sqrt": "√", "circ": "°", "degree": "°",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε",
    "varepsilon": "ε", "zeta": "ζ", "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ",
    "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ",
    "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ",
    "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ",
    "Psi": "Ψ", "Omega": "Ω", "%": "%", "$": "$", "_": "_", "&": "&", "#": "#", "{": "{",
    "}": "}", ",": " ", ";": " ", ":": " ", " ": " ", "!": "", "quad": " ", "qquad": "  ",
    "\\": "\n", "max": "max", "min": "min", "log": "log", "ln": "ln", "exp": "exp",
    "mid": "|", "vert": "|", "lvert": "|", "rvert": "|", "lbrace": "{", "rbrace": "}",
    "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
}  # fmt: skip
#: Commands whose one argument is shown as it is (fonts, words inside a formula).
_WORDS = frozenset(
    [
        "text",
        "textbf",
        "textit",
        "textrm",
        "texttt",
        "textsf",
        "mathrm",
        "mathbf",
        "mathit",
        "mathsf",
        "mathtt",
        "mathbb",
        "mathcal",
        "operatorname",
        "boldsymbol",
        "bm",
        "emph",
        "mbox",
        "hbox",
        "overline",
        "underline",
        "bar",
        "hat",
        "tilde",
        "vec",
        "widehat",
        "widetilde",
    ]
)
#: Accents over one letter, as the combining mark that draws them (``\\bar{r}``: r̄).
_ACCENTS = {"bar": "\u0304", "overline": "\u0304", "hat": "\u0302", "tilde": "\u0303"}
#: Sizing commands that only change how a bracket is drawn: dropped.
_SIZING = frozenset(
    [
        "left",
        "right",
        "big",
        "Big",
        "bigg",
        "Bigg",
        "bigl",
        "bigr",
        "Bigl",
        "Bigr",
        "biggl",
        "biggr",
        "displaystyle",
        "textstyle",
        "limits",
        "nolimits",
    ]
)
_FRACTIONS = frozenset(["frac", "dfrac", "tfrac", "cfrac"])
_SUPERSCRIPTS = str.maketrans("0123456789+-=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ")
_SUBSCRIPTS = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
_KNOWN = _SYMBOLS.keys() | _WORDS | _SIZING | _FRACTIONS
#: A command in ordinary text that is surely LaTeX: its name is one we know, whole.
_COMMAND_IN_TEXT = re.compile(
    r"\\(" + "|".join(sorted((re.escape(k) for k in _KNOWN if k.isalpha()), key=len, reverse=True))
    + r")(?![A-Za-z])|[\^_]\{[^{}]*\}|\{,\}"
)  # fmt: skip
#: Commands that take an argument: in ordinary text, LaTeX only when a brace follows
#: ("C:\\Users\\text and" is a path).
_TAKES_ARGUMENT = _WORDS | _FRACTIONS | {"sqrt"}


class _Reader:
    """One pass over LaTeX source, writing what it means as plain text."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0

    def formula(self, end: str = "") -> str:
        """Everything up to ``end`` (a closing brace) or the end of the source."""
        out: list[str] = []
        while self.pos < len(self.src):
            ch = self.src[self.pos]
            if end and ch == end:
                self.pos += 1
                break
            out.append(self.atom())
        return _tidy("".join(out))

    def atom(self) -> str:
        ch = self.src[self.pos]
        self.pos += 1
        if ch == "{":
            inner = self.formula("}")
            return "," if inner == "," else inner  # {,} is a decimal comma: 134{,}5
        if ch == "\\":
            return self.command()
        if ch in "^_":
            return self.script(ch)
        if ch == "~":
            return " "
        return ch

    def argument(self) -> str:
        """A command's argument: a braced group, a command, or one character."""
        while self.pos < len(self.src) and self.src[self.pos] == " ":
            self.pos += 1
        if self.pos >= len(self.src):
            return ""
        return self.atom()

    def command(self) -> str:
        match = re.compile(r"[A-Za-z]+|.", re.S).match(self.src, self.pos)
        if match is None:  # a backslash at the very end
            return ""
        name = match.group(0)
        self.pos = match.end()
        if name in _FRACTIONS:
            top, bottom = self.argument(), self.argument()
            return f"{_grouped(top)}/{_grouped(bottom)}"
        if name == "sqrt":
            return "√" + _grouped(self.argument())
        if name in _ACCENTS:  # a mean's bar: r̄ (a letter with a combining mark)
            inner = self.argument()
            return inner + _ACCENTS[name] if len(inner) == 1 else inner
        if name in _WORDS:
            return self.argument()
        if name in _SIZING:
            return ""
        return _SYMBOLS.get(name, name)

    def script(self, mark: str) -> str:
        value = self.argument()
        table = _SUPERSCRIPTS if mark == "^" else _SUBSCRIPTS
        keys = "0123456789+-=()n" if mark == "^" else "0123456789+-=()"
        if value and all(c in keys for c in value):
            return value.translate(table)
        return mark + _grouped(value)


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


def _tidy(text: str) -> str:
    return re.sub(r"[ \t]{2,}", " ", text)


def math(source: str) -> str:
    """A formula (what stood between math delimiters) as plain text."""
    return _Reader(source).formula().strip()


def commands(text: str) -> str:
    """Ordinary text with the LaTeX commands we know in it rewritten ("a \\times b" →
    "a × b"), every other character as written."""
    if "\\" not in text and "{" not in text:
        return text
    out: list[str] = []
    at = 0
    for match in _COMMAND_IN_TEXT.finditer(text):
        if match.start() < at:
            continue
        name = match.group(1)
        if match.group(0) == "{,}":  # a decimal comma: 134{,}5
            out += [text[at : match.start()], ","]
            at = match.end()
            continue
        if name in _TAKES_ARGUMENT and not text.startswith("{", match.end()):
            continue
        out.append(text[at : match.start()])
        reader = _Reader(text)
        reader.pos = match.start() + 1
        # A command, or a braced power or index ("10^{6}", "x_{t-1}").
        out.append(reader.command() if name else reader.script(match.group(0)[0]))
        at = reader.pos
    out.append(text[at:])
    return "".join(out)

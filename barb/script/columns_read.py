"""Which columns an expression reads: the ones it names, the ones its functions read when an
argument is left out (``rsi()`` reads ``close``), and those of the named patterns it calls
(``nr7()`` reads ``range``).

The planner asks this so that a column the data layer derives (the 1-minute bars' ``range``,
6.4M subtractions) is built only for the queries that read it.
"""

from __future__ import annotations

from barb.script import ast
from barb.script.library import lookup


def columns_read(expr: ast.Node) -> set[str]:
    found: set[str] = set()
    pending = [expr]
    while pending:
        for node in ast.walk(pending.pop()):
            if isinstance(node, ast.Column):
                found.add(node.name)
            elif isinstance(node, ast.Call):
                spec = lookup(node.name)
                if spec is None:
                    continue
                found.update(
                    p.default_column
                    for p in spec.params[len(node.args) :]
                    if p.default_column is not None
                )
                if spec.body is not None:
                    pending.append(spec.body)
    return found

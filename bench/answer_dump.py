"""Every answer and warning of a set of queries, as text, to diff two engine trees.

    BARB_DATA_DIR=$PWD/data PYTHONPATH=$PWD .venv/bin/python bench/answer_dump.py > new.txt
    (cd ../other-tree && BARB_DATA_DIR=... PYTHONPATH=$PWD python bench/answer_dump.py) > old.txt
    diff old.txt new.txt

A change meant to make the engine faster without changing what it says (the warning checks'
caches and shortcuts) is proved by an empty diff. The queries: bench/engine.py's questions,
every reference query of the eval set (``bot/eval/questions.yaml``, on its chat's
instrument), and the query literals of the engine tests (a dict with a "select" or "from"
key that Python can read as a literal), each on NQ and every fifth on ES too. For each:
what ``barb query`` prints (the text the model reads) and the whole Result as JSON (the
table, the rows behind a number, the warnings). The query set is read from this tree, so
run the same file in both trees (copy it beside the other's code).
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _eval_queries() -> Iterator[tuple[str, dict]]:
    entries = yaml.safe_load((ROOT / "bot/eval/questions.yaml").read_text())
    for entry in entries:
        symbol = entry.get("instrument", "NQ")
        turns = entry.get("turns") or [entry]
        for turn in turns:
            if isinstance(turn.get("query"), dict):
                yield symbol, turn["query"]


def _literal_queries(folder: Path) -> Iterator[dict]:
    for path in sorted(folder.rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Dict):
                continue
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if not keys & {"select", "from"} or not keys <= _QUERY_KEYS:
                continue
            try:
                value = ast.literal_eval(node)
            except ValueError:
                continue
            yield value


_QUERY_KEYS = {
    "session", "from", "period", "map", "where", "group_by", "select", "sort", "limit",
    "then", "join", "steps", "columns", "having", "window",
}  # fmt: skip


def queries() -> Iterator[tuple[str, dict]]:
    from bench.engine import QUESTIONS

    seen: set[str] = set()

    def once(symbol: str, query: dict) -> Iterator[tuple[str, dict]]:
        key = symbol + json.dumps(query, sort_keys=True)
        if key not in seen:
            seen.add(key)
            yield symbol, query

    for question in QUESTIONS:
        yield from once("NQ", question.barb)
    for symbol, query in _eval_queries():
        yield from once(symbol, query)
    for i, query in enumerate(_literal_queries(ROOT / "tests/engine")):
        yield from once("NQ", query)
        if i % 5 == 0:
            yield from once("ES", query)


def main() -> None:
    from barb.interpreter import execute
    from barb.summary_text import render_summary

    for symbol, query in queries():
        print(f"### {symbol} {json.dumps(query, sort_keys=True)}")
        try:
            result = execute(query, symbol)
        except Exception as exc:  # a failure is part of what is compared
            print(f"raised {type(exc).__name__}: {exc}")
            continue
        if result.ok:
            print(render_summary(result))
        answer = result.to_dict()
        answer.get("metadata", {}).pop("elapsed_ms", None)  # the one figure that may differ
        print(json.dumps(answer, sort_keys=True, ensure_ascii=False, default=str))


if __name__ == "__main__":
    main()

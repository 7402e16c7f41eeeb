"""The eval's reports: a terminal table, and JSON + Markdown files in the output folder."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from bot.eval.runner import QuestionResult

JSON_NAME = "eval_report.json"
MARKDOWN_NAME = "eval_report.md"


class EvalReport(BaseModel):
    provider: str
    model: str
    questions_file: str
    started_at: dt.datetime
    results: list[QuestionResult]

    @property
    def counts(self) -> Counter[str]:
        return Counter(r.status for r in self.results)

    @property
    def scored(self) -> int:
        """Questions that ran (skipped ones are not part of the score)."""
        return len(self.results) - self.counts["skipped"]

    @property
    def score(self) -> float:
        return 100.0 * self.counts["pass"] / self.scored if self.scored else 0.0

    @property
    def cost_usd(self) -> float | None:
        costs = [r.cost_usd for r in self.results if r.status != "skipped"]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)

    def totals(self) -> dict[str, object]:
        ran = [r for r in self.results if r.status != "skipped"]
        by_lang = {
            lang: {
                "passed": sum(r.status == "pass" for r in ran if r.lang == lang),
                "ran": sum(r.lang == lang for r in ran),
            }
            for lang in sorted({r.lang for r in self.results})
        }
        return {
            "questions": len(self.results),
            "ran": self.scored,
            "passed": self.counts["pass"],
            "failed": self.counts["fail"],
            "errors": self.counts["error"],
            "skipped": self.counts["skipped"],
            "score_percent": round(self.score, 1),
            "by_language": by_lang,
            "tool_calls": sum(r.tool_calls for r in ran),
            "input_tokens": sum(r.input_tokens for r in ran),
            "output_tokens": sum(r.output_tokens for r in ran),
            "cost_usd": self.cost_usd,
            "seconds": round(sum(r.seconds for r in ran), 2),
        }

    def summary_line(self) -> str:
        t = self.totals()
        line = (
            f"Score: {t['passed']}/{t['ran']} passed ({t['score_percent']}%) with "
            f"{self.provider} {self.model}"
        )
        if t["skipped"]:
            missing = sorted({f for r in self.results for f in r.missing_features})
            line += f"; {t['skipped']} skipped until the engine has {', '.join(missing)}"
        return line + "."


def _number(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.6g}"


def _numbers(values: Sequence[float | None]) -> str:
    return ", ".join(_number(v) for v in values)


def _cost(value: float | None) -> str:
    return "—" if value is None else f"${value:.4f}"


def _verdict(result: QuestionResult) -> str:
    if result.status == "fail" and result.seen and not result.said:
        return "fail (seen, not said)"
    return result.status


def _tokens(result: QuestionResult) -> str:
    return f"{result.input_tokens + result.output_tokens:,}"


def table(report: EvalReport) -> Table:
    out = Table(title=report.summary_line(), show_lines=False)
    out.add_column("id", no_wrap=True)
    out.add_column("question", max_width=48, no_wrap=True, overflow="ellipsis")
    for name in ("expected", "got", "pass"):
        out.add_column(name, overflow="fold")
    for name in ("tool calls", "tokens", "cost", "seconds"):
        out.add_column(name, justify="right")
    for r in report.results:
        style = {"pass": "green", "skipped": "dim"}.get(r.status, "red")
        out.add_row(
            r.id,
            r.question,
            _numbers(r.expected),
            _numbers(r.got) if r.got else "—",
            _verdict(r),
            str(r.tool_calls),
            _tokens(r),
            _cost(r.cost_usd),
            f"{r.seconds:.1f}",
            style=style,
        )
    return out


def print_table(report: EvalReport, console: Console) -> None:
    console.print(table(report))


def markdown(report: EvalReport) -> str:
    t = report.totals()
    lines = [
        f"# Barb eval: {report.provider} {report.model}",
        "",
        f"{report.summary_line()}",
        "",
        f"- Questions: {report.questions_file}",
        f"- Started: {report.started_at.isoformat(timespec='seconds')}",
        f"- Passed: {t['passed']}, failed: {t['failed']}, errors: {t['errors']}, "
        f"skipped: {t['skipped']}",
        f"- Tool calls: {t['tool_calls']}, tokens in/out: {t['input_tokens']:,}/"
        f"{t['output_tokens']:,}, cost: {_cost(report.cost_usd)}, seconds: {t['seconds']}",
        "",
        "| id | lang | question | expected | got | pass | tools | tokens | cost | s |",
        "|---|---|---|---|---|---|---:|---:|---:|---:|",
    ]
    for r in report.results:
        question = r.question.replace("|", "\\|")
        lines.append(
            f"| {r.id} | {r.lang} | {question} | {_numbers(r.expected)} | "
            f"{_numbers(r.got) if r.got else '—'} | {_verdict(r)} | {r.tool_calls} | "
            f"{_tokens(r)} | {_cost(r.cost_usd)} | {r.seconds:.1f} |"
        )
    failed = [r for r in report.results if r.status in ("fail", "error")]
    if failed:
        lines += ["", "## Not passed", ""]
        for r in failed:
            lines.append(f"### {r.id}")
            lines.append("")
            if r.note:
                lines.append(f"Note: {r.note}")
                lines.append("")
            lines.append(f"Queries: `{json.dumps(r.queries, ensure_ascii=False)}`")
            lines.append("")
            lines.append("Answer:")
            lines.append("")
            lines.extend(f"> {line}" for line in (r.answer or "(none)").splitlines())
            lines.append("")
    return "\n".join(lines) + "\n"


def write_reports(report: EvalReport, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / JSON_NAME
    payload = {
        "provider": report.provider,
        "model": report.model,
        "questions_file": report.questions_file,
        "started_at": report.started_at.isoformat(),
        "totals": report.totals(),
        "results": [r.model_dump(mode="json") for r in report.results],
    }
    json_path.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    md_path = out_dir / MARKDOWN_NAME
    md_path.write_text(markdown(report), encoding="utf-8")
    return json_path, md_path

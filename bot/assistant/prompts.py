"""Everything the model reads, assembled from the files in prompts/.

System prompt = role (or the variant's persona) + the instrument block generated from its YAML
and the data's real range + rules (+ the variant's extra rules) + a short context block
(preferences, the previous data shown). Tool texts and loop messages come from prompts/ too.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from barb.data.store import DataMeta
from barb.instruments import Instrument
from barb.session_times import SessionTimes
from barb.settings import PROJECT_ROOT
from barb.yaml_text import load_yaml

PROMPTS_DIR = PROJECT_ROOT / "prompts"
# In English whatever the process's locale (strftime's %A follows it).
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class ToolFilter(BaseModel):
    include: list[str] = Field(default_factory=lambda: ["*"])
    exclude: list[str] = Field(default_factory=list)

    def allows(self, tool: str) -> bool:
        included = any(fnmatch.fnmatchcase(tool, p) for p in self.include)
        return included and not any(fnmatch.fnmatchcase(tool, p) for p in self.exclude)


class Variant(BaseModel):
    name: str
    persona: str | None = None
    extra_rules: list[str] = Field(default_factory=list)
    replace_rules: str | None = None
    tools: ToolFilter = Field(default_factory=ToolFilter)


class VariantRule(BaseModel):
    match: list[str]
    variant: str


class Prompts:
    """The prompt files of one directory, read once."""

    def __init__(self, directory: Path = PROMPTS_DIR):
        self.directory = directory

    def text(self, relative: str) -> str:
        return _read(self.directory / relative)

    def data(self, relative: str) -> Any:
        return load_yaml(self.text(relative))

    def variant(self, name: str) -> Variant:
        path = self.directory / "variants" / f"{name}.yaml"
        if not path.exists():
            known = sorted(p.stem for p in (self.directory / "variants").glob("*.yaml"))
            raise ValueError(f"Unknown prompt variant '{name}'. Known: {', '.join(known)}.")
        return Variant.model_validate(load_yaml(_read(path)))

    def variant_for_model(self, model: str, override: str | None = None) -> Variant:
        if override:
            return self.variant(override)
        for rule in (VariantRule.model_validate(r) for r in self.data("variants.yaml")):
            if any(fnmatch.fnmatch(model.lower(), p) for p in rule.match):
                return self.variant(rule.variant)
        return self.variant("default")

    def loop_text(self, key: str, **values: str) -> str:
        return str(self.data("loop.yaml")[key]).format(**values)

    def preferences_block(self, preferences: Iterable[tuple[str, str]]) -> str:
        """A person's saved preferences, ``(kind, value)`` pairs, as quoted data.

        They are rendered as one JSON object (notes as a list of strings), so that whatever
        a note says it stays a string value: quotes are escaped, and it cannot start a line
        of its own. The text around it says what they are: defaults, not instructions.
        """
        data: dict[str, Any] = {}
        for kind, value in preferences:
            if kind == "note":
                data.setdefault("notes", []).append(value)
            else:
                data[kind] = value
        quoted = json.dumps(data, ensure_ascii=False)
        return self.loop_text("preferences", preferences=quoted)

    def instrument_block(self, instrument: Instrument, meta: DataMeta | None) -> str:
        sessions = []
        for name, spec in instrument.sessions.items():
            depth = _depth(instrument, name)
            label = f"{'  ' * (depth + 1)}{name}" + (" (full day)" if depth == 0 else "") + ":"
            line = f"{label:<22} {spec.start} — {spec.end}"
            if spec.description and depth > 0:  # the full day's is its label already
                line += f"  ({spec.description})"
            sessions.append(line)
        if meta is None:
            first, last, note = "?", "?", " (no data loaded: run `barb data sample`)"
            relative = "Relative words (today, this week) have no day to count from yet."
        else:
            first, last = meta.first_date.isoformat(), meta.last_date.isoformat()
            # Roll dates and gaps were answered from the series as if it recorded them (p38d
            # Q10, Q11): a few words here, the rest in get_concept roll.
            note = (
                " (SYNTHETIC sample, not market history; one continuous series, no contract rolls)"
                if meta.source == "synthetic"
                else " (one continuous futures series; its rolls are not recorded)"
            )
            # The model has no clock; the data's last trading day is "today" for every
            # question, and the person should read which day that was.
            relative = (
                "Relative words (today, yesterday, this week, last week) count from the "
                f"data's last trading day, {last} (a {WEEKDAYS[meta.last_date.weekday()]}): "
                "say that date when you use them."
            )
        brk = instrument.maintenance_break
        return (
            self.text("system/instrument.md")
            .format(
                symbol=instrument.symbol,
                name=instrument.name,
                exchange=instrument.exchange,
                price_unit=instrument.price_unit,
                contract=_contract_line(instrument),
                first_date=first,
                last_date=last,
                data_note=note,
                relative_words=relative,
                sessions="\n".join(sessions),
                default_session=instrument.default_session,
                maintenance_break=f"{brk.start} — {brk.end}" if brk else "none",
                opening_range=SessionTimes(instrument).opening_range,
            )
            .strip()
        )

    def system_prompt(
        self,
        variant: Variant,
        instrument: Instrument,
        meta: DataMeta | None,
        context: list[str] | None = None,
    ) -> str:
        role = (variant.persona or self.text("system/role.md")).strip()
        rules = (variant.replace_rules or self.text("system/rules.md")).strip()
        extra = sum(1 for line in rules.splitlines() if line[:1].isdigit())
        for i, rule in enumerate(variant.extra_rules, start=1):
            rules += f"\n{extra + i}. {rule}"
        parts = [role, self.instrument_block(instrument, meta), "Rules:\n" + rules]
        if context:
            parts.append(self.text("system/context.md").format(context="\n".join(context)).strip())
        return "\n\n".join(parts)


def _contract_line(instrument: Instrument) -> str:
    """What a price move is worth on one contract, and its tick: "per contract" questions
    (a stop in ticks, a range in dollars) were left to what a model happens to know, and
    CL's "moves are in dollars" read as dollars per contract, 1,000 times too small."""
    one = instrument.price_unit.removesuffix("s")
    worth = f"{instrument.point_value:,g} {instrument.currency}"
    tick = f"{instrument.tick_size:g}"
    tick_worth = f"{instrument.tick_size * instrument.point_value:,g} {instrument.currency}"
    line = (
        f"One contract: a move of 1 {one} is worth {worth}; the tick is {tick} ({tick_worth}). "
        f"Per contract in {instrument.currency}: range * {instrument.point_value:g}; in ticks: "
        f"range / {tick}."
    )
    micro = instrument.micro
    if micro is not None:
        micro_tick = f"{instrument.tick_size * micro.point_value:,g} {instrument.currency}"
        line += (
            f" The micro {micro.symbol}: a move of 1 {one} is worth {micro.point_value:,g} "
            f"{instrument.currency} ({micro_tick} a tick)."
        )
    return line


def _depth(instrument: Instrument, name: str) -> int:
    depth = 0
    parent = instrument.sessions[name].parent
    while parent and parent in instrument.sessions and depth < 5:
        depth += 1
        parent = instrument.sessions[parent].parent
    return depth


@cache
def _read_cached(path: Path, mtime: float) -> str:
    return path.read_text(encoding="utf-8")


def _read(path: Path) -> str:
    return _read_cached(path, path.stat().st_mtime)

"""The eval's question set: questions with known answers, validated at load time."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from barb.yaml_text import load_yaml
from bot.eval.features import FEATURES

DEFAULT_QUESTIONS = Path(__file__).with_name("questions.yaml")


class QuestionSetError(ValueError):
    """The question file cannot be used; the message says which entry and why."""


class Turn(BaseModel):
    """One message of the person, and the Barb Script the reference answer runs for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str = Field(min_length=1)
    query: dict[str, Any]


class EvalQuestion(BaseModel):
    """A question (or a short conversation) whose last turn must produce ``expected``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    lang: Literal["en", "ru"]
    instrument: str = "NQ"
    tags: list[str] = Field(default_factory=list)
    requires: list[str] = Field(default_factory=list)
    turns: list[Turn] = Field(min_length=1)
    expected: list[float] = Field(min_length=1)
    # Relative, per expected number; 0 means exact (counts).
    tolerance: float = Field(default=0.002, ge=0, le=0.5)

    @field_validator("requires")
    @classmethod
    def _known_features(cls, names: list[str]) -> list[str]:
        unknown = [name for name in names if name not in FEATURES]
        if unknown:
            raise ValueError(f"unknown feature {', '.join(unknown)}; known: {', '.join(FEATURES)}")
        return names

    @model_validator(mode="before")
    @classmethod
    def _single_turn(cls, data: Any) -> Any:
        """``question`` + ``query`` is the one-turn form of ``turns``."""
        if isinstance(data, dict) and "question" in data:
            data = dict(data)
            if "turns" in data:
                raise ValueError("give either question + query, or turns, not both")
            data["turns"] = [{"question": data.pop("question"), "query": data.pop("query", None)}]
        return data

    @property
    def question(self) -> str:
        """The question as the table shows it: the last turn, after any earlier ones."""
        return " → ".join(turn.question for turn in self.turns)

    @property
    def follow_up(self) -> bool:
        return len(self.turns) > 1


def load_questions(path: Path | None = None) -> list[EvalQuestion]:
    """Every question of the file, in file order; a bad entry is refused with its id."""
    path = path or DEFAULT_QUESTIONS
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise QuestionSetError(f"Cannot read the questions in {path}: {exc}") from exc
    if not isinstance(raw, list) or not raw:
        raise QuestionSetError(f"{path} must be a non-empty YAML list of questions.")
    questions = []
    for position, item in enumerate(raw, start=1):
        name = item.get("id", f"#{position}") if isinstance(item, dict) else f"#{position}"
        try:
            questions.append(EvalQuestion.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "entry"
            raise QuestionSetError(f"Question {name} in {path}: {where}: {first['msg']}") from exc
    duplicates = [qid for qid, n in Counter(q.id for q in questions).items() if n > 1]
    if duplicates:
        raise QuestionSetError(f"Duplicate question ids in {path}: {', '.join(duplicates)}")
    return questions

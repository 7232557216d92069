"""The judgments format (docs/data.md), declared once (import, export, API, JSON Schema).

Only `context_id`, `system_a`, `system_b`, `judge` and `winner` are required, because files from
other tools lack the rest. The defaults for a missing field (documented in docs/data.md):

- `judge_kind`: "human" (a judge is a person unless the file says "llm"; humans get pseudonyms);
- `completion_a` / `completion_b`: null, i.e. text unknown: a placeholder completion marked
  text-unknown is made, never served to raters;
- `shown_left`: null (order unknown; position-bias statistics skip it);
- `strength` / `strength_max`: null (every verdict weighs the same); a strength without a scale
  is on 2 (human) or 5 (llm);
- `axes`: {} (no per-axis marks); `rationale`, `judge_family`: ""; `duration_ms`: null;
- `submitted_at`: null, stored as unknown (never invented); a time without offset is UTC;
- `quality_check`, `excluded`: false; `cohort`: null (an imported human judge is then "crowd").
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal, Required

from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr
from typing_extensions import TypedDict

from completions.formats import ContractModel, Name, Text

from .models import AXES

Verdict = Literal["a", "b", "tie"]
DEFAULT_SCALE = {"human": 2, "llm": 5}


class AxisMark(TypedDict, total=False):
    """One axis's mark (a TypedDict, not a model: validating it is four times cheaper)."""

    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]

    winner: Required[Verdict]
    strength: Annotated[StrictInt, Field(ge=0)] | None


class JudgmentFormat(ContractModel):
    """judgments: one judge's verdict on two completions of one context."""

    model_config = ConfigDict(title="judgment", extra="allow")

    context_id: Name
    system_a: Name
    system_b: Name
    completion_a: StrictStr | None = Field(
        None, description="Reply text; null: text unknown (a placeholder never shown to raters)."
    )
    completion_b: StrictStr | None = Field(None, description="As completion_a.")
    shown_left: Literal["a", "b"] | None = Field(None, description="null: order unknown.")
    judge: Name = Field(description="Opaque judge id; a human's is replaced by a pseudonym.")
    judge_kind: Literal["human", "llm"] | None = "human"
    judge_family: Text = ""
    winner: Verdict
    strength: Annotated[StrictInt, Field(ge=1, le=5)] | None = Field(
        None, description="On the judge's own scale; null: every verdict weighs the same."
    )
    strength_max: Annotated[StrictInt, Field(ge=1)] | None = Field(
        None, description="The scale of strength: 2 human (default), 5 LLM (default)."
    )
    axes: dict[str, AxisMark] | None = Field(
        default_factory=dict,
        description="Per-axis marks, keys among H, E, A, R, T.",
        json_schema_extra={"propertyNames": {"enum": list(AXES)}},
    )
    rationale: Text = ""
    duration_ms: Annotated[StrictInt, Field(ge=0)] | None = None
    submitted_at: datetime | None = Field(
        None, description="ISO 8601; without offset read as UTC; null: unknown (never invented)."
    )
    quality_check: StrictBool | None = False
    excluded: StrictBool | None = False
    cohort: StrictStr | None = Field(
        None,
        description="The human judge's cohort (crowd, clinician or a study's own label); "
        "null for LLM judges and when unknown (read as crowd on import).",
        max_length=40,
    )

    def _check(self) -> None:
        # Nulls read as the defaults before this check (ContractModel._normalize).
        assert self.axes is not None and self.metadata is not None and self.judge_kind is not None
        if self.system_a == self.system_b:
            raise ValueError("system_a and system_b must differ")
        for axis in self.axes:
            if axis not in AXES:
                raise ValueError(f"'axes': unknown axis {axis!r} (axes are {', '.join(AXES)})")
        if self.submitted_at is not None and self.submitted_at.tzinfo is None:
            self.submitted_at = self.submitted_at.replace(tzinfo=UTC)
        if self.winner == "tie" and self.strength is not None:
            # The human scale has no strength for "about the same": keep the verdict, and the
            # dropped value in metadata (the import report counts it).
            self.metadata["dropped_tie_strength"], self.strength = self.strength, None
        if self.strength is not None and self.strength_max is None:
            self.strength_max = DEFAULT_SCALE[self.judge_kind]
        if (
            self.strength is not None
            and self.strength_max is not None
            and self.strength > self.strength_max
        ):
            raise ValueError(f"strength {self.strength} is above strength_max {self.strength_max}")


# The contract's columns, in order (exports write exactly these; metadata stays inside).
FIELDS = [name for name in JudgmentFormat.model_fields if name != "metadata"]

"""The contexts and completions formats (docs/data.md), declared once.

These pydantic models are the single definition of the JSON Lines contracts: the importers
validate every line with them, the API documents and serializes with them, and
`manage.py format_schemas` writes them out as `docs/formats/*.schema.json`. Keys outside the
contract are kept in `metadata` (never dropped); a null where the contract has a default (a
field whose default is not null: an optional text, a flag, an object) reads as that default.

Speed: an import validates a million lines, so the per-line work stays inside pydantic-core
(strict types, `StringConstraints`) and each model runs one Python validator, `_normalize`.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    StringConstraints,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from .models import EscalationProfile, SystemKind

# A required, non-blank identifier (surrounding spaces are dropped).
Name = Annotated[StrictStr, StringConstraints(strip_whitespace=True, min_length=1)]
# An optional text: null and missing read as "" (ContractModel's rule for nulls).
Text = Annotated[
    StrictStr | None, WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]})
]
Number = Annotated[float, Field(ge=0, strict=False)]


class ContractModel(BaseModel):
    """A line of a contract file: unknown keys go into `metadata`; `line` is where it was read.

    A null for a field whose default is not null reads as the default. Subclasses check a whole
    line in `_check` (raise ValueError), called by the one model validator.
    """

    # The line number is a slot, not a pydantic PrivateAttr: private attributes cost a
    # post-init call for every line validated (a quarter of a judgment line's validation).
    __slots__ = ("_line",)
    model_config = ConfigDict(extra="allow", use_enum_values=True)

    metadata: dict[str, Any] | None = Field(default_factory=dict)

    @model_validator(mode="after")
    def _normalize(self) -> Self:
        for name, field in _null_defaults(type(self)):
            if getattr(self, name) is None:
                setattr(self, name, field.get_default(call_default_factory=True))
        if self.__pydantic_extra__:
            self.metadata = {**(self.metadata or {}), **self.__pydantic_extra__}
            self.__pydantic_extra__.clear()
        self._check()
        return self

    def _check(self) -> None:
        """Checks across fields of a validated line (raise ValueError)."""

    @property
    def line(self) -> int:
        return getattr(self, "_line", 0)

    def at_line(self, line: int) -> Self:
        """Record where the line was read (straight into the slot: pydantic's __setattr__ is
        slower than the rest of a line's bookkeeping)."""
        object.__setattr__(self, "_line", line)
        return self

    def content(self) -> dict[str, Any]:
        """The validated values (for comparing two lines that share an id)."""
        return self.model_dump()


@cache
def _null_defaults(model: type[ContractModel]) -> tuple[tuple[str, FieldInfo], ...]:
    """The fields of `model` whose default is not null (a null given for them reads as it)."""
    return tuple(
        (name, field)
        for name, field in model.model_fields.items()
        if not field.is_required() and (field.default_factory or field.default is not None)
    )


class Turn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    speaker: Literal["seeker", "supporter"]
    text: StrictStr

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("'text' must be a non-empty string")
        return value


class ContextFormat(ContractModel):
    """contexts: a multi-turn history ending in a seeker turn."""

    model_config = ConfigDict(title="context", extra="allow")

    id: Name
    turns: list[Turn]
    emotion_type: Text = ""
    problem_type: Text = ""
    adversarial: StrictBool | None = False
    escalation_profile: EscalationProfile | None = None
    source: Text = ""
    source_id: Text = ""

    @field_validator("turns")
    @classmethod
    def _ends_with_seeker(cls, turns: list[Turn]) -> list[Turn]:
        if not turns:
            raise ValueError("'turns' must be a non-empty list")
        if turns[-1].speaker != "seeker":
            raise ValueError("the last turn must be a seeker turn")
        return turns

    @property
    def external_id(self) -> str:
        return self.id

    def db_fields(self) -> dict[str, Any]:
        """The DialogueContext columns this line fills."""
        return {
            "turns": [turn.model_dump() for turn in self.turns],
            # Text fields read a null as "" (_normalize); `or ""` is for the checker.
            "emotion_type": (self.emotion_type or "")[:100],
            "problem_type": (self.problem_type or "")[:200],
            "adversarial": self.adversarial,
            "escalation_profile": self.escalation_profile or "",
            "source": (self.source or "")[:100],
            "source_id": (self.source_id or "")[:200],
            "metadata": self.metadata,
        }


class CompletionFormat(ContractModel):
    """completions: one system's final supporter turn for one context."""

    model_config = ConfigDict(title="completion", extra="allow")

    context_id: Name
    system: Name
    family: Text = ""
    kind: SystemKind | None = SystemKind.MODEL
    text: Annotated[StrictStr, Field(min_length=1)]
    ttft_ms: Number | None = None
    latency_ms: Number | None = None
    provenance: dict[str, Any] | None = Field(default_factory=dict)

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("'text' must be a non-empty string")
        return value

    @field_validator("ttft_ms", "latency_ms", mode="before")
    @classmethod
    def _plain_number(cls, value: Any) -> Any:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError("must be a non-negative number or null")
        return value


def error_reason(exc: ValidationError) -> str:
    """One short reason from a pydantic error: "'field': message, not VALUE"."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    if not where:
        return message
    if error["type"] == "missing" or (error.get("input", 0) is None and "type" in error["type"]):
        return f"'{where}' is required"
    shown = error.get("input")
    suffix = "" if isinstance(shown, dict | list) else f", not {shown!r}"
    return f"'{where}': {message}{suffix}"


def parse_line[M: ContractModel](model: type[M], obj: dict[str, Any], line: int) -> M:
    """Validate one decoded line; a ValueError carries the reason (the caller adds the line)."""
    try:
        record = model.model_validate(obj)
    except ValidationError as exc:
        raise ValueError(error_reason(exc)) from None
    return record.at_line(line)


def json_schema(model: type[BaseModel], *, name: str) -> dict[str, Any]:
    """The published JSON Schema of a format (one object a line of a JSON Lines file)."""
    schema = model.model_json_schema(mode="validation")
    properties = schema["properties"]
    properties["metadata"] = properties.pop("metadata")  # inherited, but read last
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://heart-studio.example/formats/{name}.schema.json",
        "description": (model.__doc__ or "").strip().splitlines()[0]
        + " One JSON object a line (JSON Lines, UTF-8). Keys outside the contract are kept in "
        "'metadata'.",
        **{k: v for k, v in schema.items() if k != "description"},
    }

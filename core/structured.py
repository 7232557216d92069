"""Structured replies: read a JSON reply against the exact schema its request sent.

A provider's structured outputs guarantee the schema and nothing more, so the run kinds state
every rule they enforce in the schema they send and validate a reply against that same schema
(one source of truth: a reply the schema allows is never refused). What a schema cannot state
is not refused either: the kinds normalise it and record what they changed (see `Notes`).

Two such rules apply to every kind: a JSON string may hold a NUL character or half of a UTF-16
surrogate pair, which PostgreSQL cannot store (text and jsonb refuse both); `storable` removes
them and says how many it removed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError


class InvalidReply(Exception):
    """A reply that does not fit the schema: repaired once, then the unit is invalid."""


# A NUL, or a UTF-16 surrogate standing alone (json.loads keeps "\ud800" as such).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
MAX_PROBLEMS = 5  # listed in a repair request; more would only repeat themselves
MAX_PROBLEM_CHARS = 300
MAX_SHOWN = 80  # characters of a wrong value quoted in a problem


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def reply_json(text: str) -> Any:
    """The reply parsed as JSON (strict: no NaN or Infinity, no raw control characters)."""
    try:
        return json.loads(text.strip(), parse_constant=_no_constant)
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise InvalidReply(f"not JSON: {exc}") from exc


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    """A validator for a schema we send (it is ours: checked once, in the tests)."""
    return Draft202012Validator(schema)


def _where(error: ValidationError) -> str:
    return ".".join(map(str, error.absolute_path)) or "reply"


def problem_text(error: ValidationError) -> str:
    described = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator == "anyOf":  # say what each allowed shape is
        branches = error.validator_value if isinstance(error.validator_value, list) else []
        shapes = [b.get("description") for b in branches if isinstance(b, dict)]
        if all(shapes):
            described = "one of: " + "; or ".join(str(s) for s in shapes)
    message, shown = error.message, repr(error.instance)
    if len(shown) > MAX_SHOWN and message.startswith(shown):  # jsonschema leads with the value
        message = shown[: MAX_SHOWN - 1] + "…" + message[len(shown) :]
    text = f"{_where(error)}: {message}"
    if described:
        text += f" (expected: {described})"
    if len(text) > MAX_PROBLEM_CHARS:
        text = text[: MAX_PROBLEM_CHARS - 1] + "…"
    return text


def schema_errors(check: Draft202012Validator, data: Any) -> list[ValidationError]:
    """Each way `data` breaks the schema, shortest path first (empty: it conforms)."""
    return sorted(check.iter_errors(data), key=lambda e: (len(e.absolute_path), _where(e)))


def schema_problems(check: Draft202012Validator, data: Any) -> list[str]:
    """The schema errors as short sentences fit for a repair request."""
    return [problem_text(e) for e in schema_errors(check, data)[:MAX_PROBLEMS]]


def read_reply(check: Draft202012Validator, text: str) -> Any:
    """The parsed reply if it conforms to the schema; else InvalidReply naming each problem."""
    data = reply_json(text)
    problems = schema_problems(check, data)
    if problems:
        raise InvalidReply("; ".join(problems))
    return data


def storable(text: str) -> tuple[str, int]:
    """The text without what PostgreSQL cannot store, and how many characters went."""
    cleaned, removed = _UNSTORABLE.subn("", text)
    return cleaned, removed


class Notes:
    """What normalising a reply changed, in words a study admin reads ("rationale: ...")."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, note: str) -> None:
        self.items.append(note)

    def text(self, where: str, value: str, *, limit: int | None = None) -> str:
        """`value` made storable (and cut at `limit` characters), each change noted."""
        cleaned, removed = storable(value)
        if removed:
            self.add(
                f"{where}: {removed} character(s) that cannot be stored removed (NUL or a "
                "lone surrogate)"
            )
        if limit is not None and len(cleaned) > limit:
            self.add(f"{where}: cut to {limit:,} characters (the reply had {len(cleaned):,})")
            cleaned = cleaned[:limit]
        return cleaned

    def clamp(self, where: str, value: float, low: float, high: float) -> float:
        """`value` within [low, high]; a value outside is noted with what was reported."""
        inside = min(high, max(low, value))
        if inside != value:
            self.add(f"{where}: {value!r} is outside {low:g}-{high:g}; {inside:g} kept")
        return inside

    def extend(self, notes: Iterable[str]) -> None:
        self.items.extend(notes)

"""JSON Lines readers for contexts and completions: parse and validate the whole file, no writes.

Every error names its line ("line 7: ..."); a file with any bad line is refused as a whole (the
services write only after the whole file has parsed). Blank lines are skipped. Keys outside the
contract go into `metadata`, never dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .models import EscalationProfile, SystemKind

CONTEXT_KEYS = {
    "id",
    "turns",
    "emotion_type",
    "problem_type",
    "adversarial",
    "escalation_profile",
    "source",
    "source_id",
    "metadata",
}
COMPLETION_KEYS = {
    "context_id",
    "system",
    "family",
    "kind",
    "text",
    "ttft_ms",
    "latency_ms",
    "provenance",
    "metadata",
}
SPEAKERS = {"seeker", "supporter"}
PROFILES = set(EscalationProfile.values)


class ImportFileError(ValueError):
    """A file that cannot be imported; the message names the line."""


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; bad JSON raises with the line number."""
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ImportFileError(
                    f"line {number}: invalid JSON ({exc.msg}, column "
                    f"{exc.colno}); is the file truncated?"
                ) from exc
            if not isinstance(obj, dict):
                raise ImportFileError(f"line {number}: expected a JSON object")
            yield number, obj


def read_jsonl(path: str | Path, parse) -> list:
    """Parse every line with `parse(obj)`; a ValueError becomes 'line N: reason'."""
    try:
        records = []
        for number, obj in iter_jsonl(path):
            try:
                records.append(parse(obj, number))
            except (ValueError, TypeError) as exc:
                raise ImportFileError(f"line {number}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    return records


def _str(obj: dict[str, Any], key: str, *, required: bool = False) -> str:
    value = obj.get(key)
    if value is None:
        if required:
            raise ValueError(f"'{key}' is required")
        return ""
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a string")
    if required and not value.strip():
        raise ValueError(f"'{key}' must not be empty")
    return value.strip() if key != "text" else value


def _number(obj: dict[str, Any], key: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"'{key}' must be a non-negative number or null")
    return float(value)


def _extra(obj: dict[str, Any], known: set[str]) -> dict[str, Any]:
    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError("'metadata' must be an object")
    return {**metadata, **{k: v for k, v in obj.items() if k not in known}}


@dataclass(frozen=True)
class ContextRecord:
    line: int
    external_id: str
    turns: list[dict[str, str]]
    emotion_type: str = ""
    problem_type: str = ""
    adversarial: bool = False
    escalation_profile: str = ""
    source: str = ""
    source_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


def validate_turns(turns: Any) -> list[dict[str, str]]:
    """Non-empty list of {speaker: seeker|supporter, text}; the last turn is the seeker's."""
    if not isinstance(turns, list) or not turns:
        raise ValueError("'turns' must be a non-empty list")
    clean = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get("speaker") not in SPEAKERS:
            raise ValueError(f"turn {i}: speaker must be 'seeker' or 'supporter'")
        if not isinstance(turn.get("text"), str) or not turn["text"].strip():
            raise ValueError(f"turn {i}: 'text' must be a non-empty string")
        clean.append({"speaker": turn["speaker"], "text": turn["text"]})
    if clean[-1]["speaker"] != "seeker":
        raise ValueError("the last turn must be a seeker turn")
    return clean


def parse_context(obj: dict[str, Any], line: int) -> ContextRecord:
    profile = obj.get("escalation_profile") or ""
    if profile and profile not in PROFILES:
        raise ValueError(f"escalation_profile {profile!r} is not one of {sorted(PROFILES)}")
    adversarial = obj.get("adversarial", False)
    if not isinstance(adversarial, bool):
        raise ValueError("'adversarial' must be true or false")
    return ContextRecord(
        line=line,
        external_id=_str(obj, "id", required=True),
        turns=validate_turns(obj.get("turns")),
        emotion_type=_str(obj, "emotion_type"),
        problem_type=_str(obj, "problem_type"),
        adversarial=adversarial,
        escalation_profile=profile,
        source=_str(obj, "source"),
        source_id=_str(obj, "source_id"),
        metadata=_extra(obj, CONTEXT_KEYS),
    )


@dataclass(frozen=True)
class CompletionRecord:
    line: int
    context_id: str
    system: str
    kind: str
    family: str
    text: str
    ttft_ms: float | None = None
    latency_ms: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


def parse_completion(obj: dict[str, Any], line: int) -> CompletionRecord:
    kind = obj.get("kind", SystemKind.MODEL)
    if kind not in SystemKind.values:
        raise ValueError(f"kind {kind!r} is not one of {SystemKind.values}")
    text = _str(obj, "text", required=True)
    provenance = obj.get("provenance") or {}
    if not isinstance(provenance, dict):
        raise ValueError("'provenance' must be an object")
    return CompletionRecord(
        line=line,
        context_id=_str(obj, "context_id", required=True),
        system=_str(obj, "system", required=True),
        kind=kind,
        family=_str(obj, "family"),
        text=text,
        ttft_ms=_number(obj, "ttft_ms"),
        latency_ms=_number(obj, "latency_ms"),
        provenance=provenance,
        metadata=_extra(obj, COMPLETION_KEYS),
    )


def read_contexts(path: str | Path) -> list[ContextRecord]:
    return _unique(read_jsonl(path, parse_context), key=lambda r: r.external_id, what="context")


def read_completions(path: str | Path) -> list[CompletionRecord]:
    return _unique(
        read_jsonl(path, parse_completion),
        key=lambda r: (r.context_id, r.system),
        what="completion",
    )


def _unique(records: list, *, key, what: str) -> list:
    """Drop exact repeats within a file; a repeated id with other content is an error."""
    seen: dict[Any, Any] = {}
    unique = []
    for record in records:
        k = key(record)
        if k in seen:
            if _content(seen[k]) != _content(record):
                raise ImportFileError(
                    f"line {record.line}: {what} {k!r} repeats line "
                    f"{seen[k].line} with different content"
                )
            continue
        seen[k] = record
        unique.append(record)
    return unique


def _content(record) -> dict[str, Any]:
    return {k: v for k, v in record.__dict__.items() if k != "line"}

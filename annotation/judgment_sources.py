"""Judgment files from other tools, read into the judgments contract (annotation.formats).

- `arena`: Chatbot Arena's battle export (`clean_battle_*.json`: a JSON array, or JSON Lines):
  `model_a`, `model_b`, `winner` in model_a | model_b | tie | tie (bothbad), `judge`,
  `question_id`, `turn`, `tstamp` (Unix seconds), optional `conversation_a` / `conversation_b`
  (lists of {"role", "content"}: the last assistant message is the completion).
- `mtbench`: MT-Bench's pairwise judgments, both files: the human judgments
  (`question_id`, `model_a`, `model_b`, `winner`, `judge`, `conversation_a/_b`, `turn`) and
  FastChat's GPT-4 pair file `gpt-4_pair.jsonl` (`model_1`, `model_2`, `g1_winner`,
  `g2_winner` in model_1 | model_2 | tie | error, `judge`: ["gpt-4", "pair-v2"], `turn`,
  `tstamp`). The GPT-4 file judges each pair twice, once in each order; as in FastChat's
  show_result, the verdict is the shared winner when both orders agree and a tie otherwise
  (rows with an "error" are skipped and counted). Each (question, turn) is one context.
- `csv`: a plain CSV with a header; `mapping` renames its columns to contract fields
  (e.g. {"context_id": "item", "judge": "annotator"}). Empty cells are missing values.

Every reader returns validated records (line numbers kept: the JSON Lines or CSV line, or the
record number in a JSON array), so the import stays all or nothing with "line N: reason".
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from completions.formats import parse_line
from completions.importers import (
    ImportFileError,
    check_text,
    iter_jsonl,
    iter_jsonl_model,
    read_jsonl_model,
    read_records,
)

from .formats import JudgmentFormat

# A validated line of a judgments file (the format model itself; `flip` turns it around).
JudgmentRecord = JudgmentFormat

SOURCE_FORMATS = ("jsonl", "arena", "mtbench", "csv")
WINNERS = {
    "a": "a",
    "b": "b",
    "tie": "tie",
    "model_a": "a",
    "model_b": "b",
    "model_1": "a",
    "model_2": "b",
    "tie (bothbad)": "tie",
}


class SkippedRow(Exception):
    """A row the source itself marks as unusable (e.g. an MT-Bench judge error)."""


def parse_judgment(obj: dict[str, Any], line: int) -> JudgmentFormat:
    return parse_line(JudgmentFormat, obj, line)


def read_judgments(path: str | Path) -> list[JudgmentFormat]:
    return read_jsonl_model(path, JudgmentFormat)


def iter_judgments(path: str | Path) -> Iterator[JudgmentFormat]:
    """The contract's JSON Lines, read as the import goes (its size decides no memory)."""
    return iter_jsonl_model(path, JudgmentFormat)


def read_source(
    path: str | Path, fmt: str, *, mapping: dict[str, str] | None = None
) -> tuple[list[JudgmentRecord], int]:
    """(records, rows skipped) of a judgments file in one of SOURCE_FORMATS."""
    if fmt == "jsonl":
        return read_judgments(path), 0
    if fmt == "csv":
        return read_records(_csv_rows(path, mapping or {}), parse_judgment), 0
    convert = {"arena": arena_row, "mtbench": mtbench_row}.get(fmt)
    if convert is None:
        raise ImportFileError(f"unknown format {fmt!r} (one of {', '.join(SOURCE_FORMATS)})")
    skipped = 0

    def parse(obj: dict[str, Any], line: int) -> JudgmentRecord | None:
        nonlocal skipped
        try:
            return parse_judgment(convert(obj), line)
        except SkippedRow:
            skipped += 1
            return None

    try:
        records = read_records(_json_rows(path), parse)
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    return [r for r in records if r is not None], skipped


def _json_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """A JSON array (numbered by record) or JSON Lines (numbered by line)."""
    with open(path, encoding="utf-8") as fh:
        head = fh.read(64).lstrip()
    if not head.startswith("["):
        yield from iter_jsonl(path)
        return
    try:
        text = Path(path).read_text(encoding="utf-8")
        check_text(text)
        items = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFileError(
            f"line {exc.lineno}: invalid JSON ({exc.msg}, column {exc.colno})"
        ) from exc
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise ImportFileError(f"line {number}: record {number} is not a JSON object")
        yield number, item


def _winner(value: Any) -> Any:
    return WINNERS.get(value.strip().lower(), value) if isinstance(value, str) else value


def _last_reply(conversation: Any, turn: int | None = None) -> str | None:
    """The assistant's reply (the `turn`-th one when given, else the last), as text."""
    if not isinstance(conversation, list):
        return None
    replies = [m for m in conversation if isinstance(m, dict) and m.get("role") == "assistant"]
    if not replies:
        return None
    index = turn - 1 if isinstance(turn, int) and 0 < turn <= len(replies) else -1
    content = replies[index].get("content")
    if isinstance(content, list):  # newer exports: a list of typed parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) and content.strip() else None


def _time(tstamp: Any) -> str | None:
    if isinstance(tstamp, int | float) and not isinstance(tstamp, bool):
        return datetime.fromtimestamp(tstamp, tz=UTC).isoformat()
    return None


CONVERSATION_KEYS = {"conversation_a", "conversation_b"}


def arena_row(obj: dict[str, Any]) -> dict[str, Any]:
    """A Chatbot Arena battle as a contract row (unknown keys go to metadata)."""
    question = obj.get("question_id")
    turn = obj.get("turn")
    context = f"arena-{question}" + (f"-t{turn}" if isinstance(turn, int) and turn > 1 else "")
    rest = {k: v for k, v in obj.items() if k not in CONVERSATION_KEYS | ARENA_USED}
    return {
        **rest,
        "context_id": context if question is not None else None,
        "system_a": obj.get("model_a"),
        "system_b": obj.get("model_b"),
        "completion_a": _last_reply(obj.get("conversation_a")),
        "completion_b": _last_reply(obj.get("conversation_b")),
        "judge": obj.get("judge"),
        "judge_kind": "human",
        "winner": _winner(obj.get("winner")),
        "submitted_at": _time(obj.get("tstamp")),
        "arena_winner": obj.get("winner"),
    }


ARENA_USED = {"question_id", "model_a", "model_b", "judge", "winner", "tstamp"}


def mtbench_row(obj: dict[str, Any]) -> dict[str, Any]:
    """An MT-Bench pairwise judgment (human file or GPT-4 pair file) as a contract row."""
    turn = obj.get("turn") if isinstance(obj.get("turn"), int) else 1
    context = f"mtbench-{obj.get('question_id')}-t{turn}"
    if "model_1" in obj:
        return _mtbench_gpt4(obj, context)
    judge = obj.get("judge")
    llm = isinstance(judge, str) and judge.startswith("gpt4")
    rest = {k: v for k, v in obj.items() if k not in CONVERSATION_KEYS | MTBENCH_USED}
    return {
        **rest,
        "context_id": context,
        "system_a": obj.get("model_a"),
        "system_b": obj.get("model_b"),
        "completion_a": _last_reply(obj.get("conversation_a"), turn),
        "completion_b": _last_reply(obj.get("conversation_b"), turn),
        "judge": judge,
        "judge_kind": "llm" if llm else "human",
        "judge_family": "gpt" if llm else None,
        "winner": _winner(obj.get("winner")),
    }


MTBENCH_USED = {"question_id", "model_a", "model_b", "judge", "winner", "turn"}


def _mtbench_gpt4(obj: dict[str, Any], context: str) -> dict[str, Any]:
    g1, g2 = obj.get("g1_winner"), obj.get("g2_winner")
    if "error" in (g1, g2):
        raise SkippedRow
    judge = obj.get("judge")
    name = ":".join(judge) if isinstance(judge, list) else judge
    # Both orders agreeing is a verdict; disagreeing orders (position bias) count as a tie.
    winner = _winner(g1) if g1 == g2 else "tie"
    return {
        "context_id": context,
        "system_a": obj.get("model_1"),
        "system_b": obj.get("model_2"),
        "judge": name,
        "judge_kind": "llm",
        "judge_family": "gpt" if isinstance(name, str) and name.startswith("gpt") else None,
        "winner": winner,
        "rationale": obj.get("g1_judgment"),
        "submitted_at": _time(obj.get("tstamp")),
        "g1_winner": g1,
        "g2_winner": g2,
        "g2_judgment": obj.get("g2_judgment"),
        "turn": obj.get("turn"),
    }


# CSV ------------------------------------------------------------------------------------------

INTEGERS = {"strength", "strength_max", "duration_ms"}
BOOLEANS = {"quality_check", "excluded"}
TRUE, FALSE = {"true", "1", "yes"}, {"false", "0", "no"}


def parse_mapping(items: list[str] | None) -> dict[str, str]:
    """["field=column", "field=column,field=column"] -> {field: column}."""
    mapping: dict[str, str] = {}
    for item in items or []:
        for part in item.split(","):
            field, sep, column = part.partition("=")
            if not sep or not field.strip() or not column.strip():
                raise ImportFileError(f"--map {part!r}: expected FIELD=COLUMN")
            mapping[field.strip()] = column.strip()
    return mapping


def _csv_rows(path: str | Path, mapping: dict[str, str]) -> Iterator[tuple[int, dict[str, Any]]]:
    renamed = {column: field for field, column in mapping.items()}
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in mapping.values() if c not in (reader.fieldnames or [])]
        if missing:
            raise ImportFileError(f"line 1: the CSV has no column {', '.join(map(repr, missing))}")
        try:
            for row in reader:
                cells = {renamed.get(k, k): v for k, v in row.items() if k is not None}
                if any("\x00" in v for v in cells.values() if isinstance(v, str)):
                    raise csv.Error("line contains NUL")
                yield reader.line_num, _typed(cells)
        except csv.Error as exc:  # e.g. a NUL character, which no cell may hold
            nul = "NUL" in str(exc)
            reason = "contains a NUL character (U+0000), which text cannot hold" if nul else exc
            raise ImportFileError(f"line {reader.line_num}: {reason}") from exc


def _typed(cells: dict[str, str]) -> dict[str, Any]:
    """CSV cells as JSON values: empty is missing, numbers, booleans, axes as JSON."""
    out: dict[str, Any] = {}
    for key, text in cells.items():
        value = text.strip() if isinstance(text, str) else text
        if value in ("", None):
            continue
        if key in INTEGERS:
            out[key] = int(value) if value.lstrip("-").isdigit() else value
        elif key in BOOLEANS:
            out[key] = True if value.lower() in TRUE else False if value.lower() in FALSE else value
        elif key == "axes":
            out[key] = _json_cell(key, value)
        elif key == "winner":
            out[key] = _winner(value)
        else:
            out[key] = text
    return out


def _json_cell(key: str, value: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise ValueError(f"'{key}' must be JSON, not {value!r}") from None

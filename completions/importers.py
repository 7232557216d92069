"""JSON Lines readers for contexts and completions: parse and validate the whole file, no writes.

Each line is validated by its format model (completions.formats, the one definition of the
contracts); every error names its line ("line 7: ..."), and a file with any bad line is refused as
a whole (the services write only after the whole file has parsed). Blank lines are skipped. Keys
outside the contract go into `metadata`, never dropped.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .formats import CompletionFormat, ContextFormat, ContractModel, parse_line

# The records the services write from are the format models themselves.
ContextRecord = ContextFormat
CompletionRecord = CompletionFormat


class ImportFileError(ValueError):
    """A file that cannot be imported; the message names the line."""


# Text that cannot hurt: every reader checks each line (or a whole JSON document) here before
# parsing it. PostgreSQL cannot store NUL (U+0000) in text, and a JSON value nested thousands
# deep would exhaust the parser's stack; both are refused with the line number.
MAX_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")
_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def check_text(text: str, first_line: int = 1) -> None:
    """Refuse NUL characters and JSON nested deeper than MAX_DEPTH, naming the line."""
    if "\x00" in text or ("\\u0000" in text and _ESCAPED_NUL.search(text)):
        offset = text.find("\x00")
        escaped = _ESCAPED_NUL.search(text)
        offset = offset if offset >= 0 or escaped is None else escaped.start()
        raise ImportFileError(
            f"line {first_line + text.count(chr(10), 0, offset)}: contains a NUL character "
            "(U+0000), which text cannot hold; remove it"
        )
    if text.count("[") + text.count("{") > MAX_DEPTH:
        deep_at = _too_deep_at(text)
        if deep_at is not None:
            raise ImportFileError(
                f"line {first_line + text.count(chr(10), 0, deep_at)}: nested too deep "
                f"(more than {MAX_DEPTH} levels of lists and objects)"
            )


def _too_deep_at(text: str) -> int | None:
    """Where the nesting of lists and objects outside strings first passes MAX_DEPTH."""
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub(_blank, text)):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_DEPTH:
            return match.start()
    return None


def _blank(match: re.Match[str]) -> str:
    """A string's span kept (offsets stay right) without its brackets."""
    return " " * len(match.group())


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; bad JSON raises with the line number."""
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            check_text(line, number)
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


def read_records[R](
    rows: Iterator[tuple[int, dict[str, Any]]], parse: Callable[[dict[str, Any], int], R]
) -> list[R]:
    """Parse (line, object) pairs with `parse(obj, line)`; a ValueError becomes 'line N: reason'."""
    records: list[R] = []
    number = 0
    try:
        for number, obj in rows:
            records.append(parse(obj, number))
    except ImportFileError:
        raise
    except (ValueError, TypeError) as exc:
        raise ImportFileError(f"line {number}: {exc}") from exc
    return records


def read_jsonl[R](path: str | Path, parse: Callable[[dict[str, Any], int], R]) -> list[R]:
    """Parse every line of a JSON Lines file with `parse(obj, line)`."""
    try:
        return read_records(iter_jsonl(path), parse)
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{path}: not UTF-8 text ({exc.reason})") from exc


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a bulk import builds its records.

    An import keeps millions of small objects alive to the end; the collector would walk them
    again and again without finding garbage (a quarter of the validation time). Reference
    counting still frees everything as usual.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_jsonl_model[M: ContractModel](path: str | Path, model: type[M]) -> list[M]:
    """Every line of a JSON Lines file validated by a format model (see `iter_jsonl_model`)."""
    with no_cyclic_gc():
        return list(iter_jsonl_model(path, model))


def iter_jsonl_model[M: ContractModel](path: str | Path, model: type[M]) -> Iterator[M]:
    """The lines of a JSON Lines file validated by a format model, one at a time, read from
    disk as they are needed (a large file is never held in memory whole).

    A good line is parsed and validated in one step by pydantic-core (no Python dict first:
    about a third faster; validating the whole file as one JSON array measured no faster);
    a bad one goes through json.loads and `parse_line` again so that its message is the usual
    "line N: reason".
    """
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                check_text(line, number)
                try:
                    record = model.model_validate_json(line)
                except ValidationError:
                    yield from read_records(iter([(number, _decode(line, number))]), _parser(model))
                    continue
                yield record.at_line(number)
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{path}: not UTF-8 text ({exc.reason})") from exc


def _decode(line: str, number: int) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFileError(
            f"line {number}: invalid JSON ({exc.msg}, column {exc.colno}); is the file truncated?"
        ) from exc
    if not isinstance(obj, dict):
        raise ImportFileError(f"line {number}: expected a JSON object")
    return obj


def _parser[M: ContractModel](model: type[M]) -> Callable[[dict[str, Any], int], M]:
    return lambda obj, line: parse_line(model, obj, line)


def parse_context(obj: dict[str, Any], line: int) -> ContextFormat:
    return parse_line(ContextFormat, obj, line)


def parse_completion(obj: dict[str, Any], line: int) -> CompletionFormat:
    return parse_line(CompletionFormat, obj, line)


def read_contexts(path: str | Path) -> list[ContextFormat]:
    records = read_jsonl_model(path, ContextFormat)
    return _unique(records, key=lambda r: r.external_id, what="context")


def read_completions(path: str | Path) -> list[CompletionFormat]:
    return _unique(
        read_jsonl_model(path, CompletionFormat),
        key=lambda r: (r.context_id, r.system),
        what="completion",
    )


def _unique[M: ContractModel](
    records: list[M], *, key: Callable[[M], Hashable], what: str
) -> list[M]:
    """Drop exact repeats within a file; a repeated id with other content is an error."""
    seen: dict[Hashable, M] = {}
    unique: list[M] = []
    for record in records:
        k = key(record)
        if k in seen:
            if seen[k].content() != record.content():
                raise ImportFileError(
                    f"line {record.line}: {what} {k!r} repeats line "
                    f"{seen[k].line} with different content"
                )
            continue
        seen[k] = record
        unique.append(record)
    return unique

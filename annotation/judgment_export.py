"""Streaming judgment export: CSV, JSON Lines or Parquet, in constant memory.

One row per Judgment of the study (pair judgments, and quality-check judgments with
"quality_check": true), fields in the order of FIELDS (the judgments contract). Rows come from a
single `values()` query over the joins (no per-row query), read with `iterator(chunk_size=...)`
(a server-side cursor on PostgreSQL) and written chunk by chunk: csv.writer rows, JSON lines, or
pyarrow record batches through one ParquetWriter.

- `judge` is the rater's pseudonym (Judgment.judge) or the LLM judge's name; never
  Rater.external_id, never an account name or e-mail.
- `excluded` is the rater's effective exclusion (Rater.excluded: flagged unless an admin override
  says otherwise); false for LLM judges. `cohort` is the rater's cohort (crowd, clinician or the
  study's own label), null for LLM judges: a group, never an identity.
- Orientation is canonical: system_a is the pair's completion_a (the smaller id).
- Quality-check rows: context_id "qc-<item id>", system_a/_b "qc-reply-a"/"qc-reply-b", the texts
  of the two replies shown.
- Empty judge_family and shown_left are null; `axes` is a JSON string in CSV and Parquet; CSV
  writes null as an empty field and booleans as true/false; submitted_at is ISO 8601 with offset.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Buffer, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast

from completions.csv_safe import safe_row
from completions.models import Study

from .formats import FIELDS
from .models import Judgment

if TYPE_CHECKING:
    import pyarrow as pa

FORMATS = ("csv", "jsonl", "parquet")
CHUNK = 5000
COLUMNS = {
    "context_id": "pair__context__external_id",
    "system_a": "pair__completion_a__system__name",
    "system_b": "pair__completion_b__system__name",
    "completion_a": "pair__completion_a__text",
    "completion_b": "pair__completion_b__text",
}
# Read as they are from the judgment row; "excluded" and "cohort" come from the rater.
PLAIN = [f for f in FIELDS if f not in COLUMNS and f not in ("excluded", "cohort")]
EXTRA = [
    "pair__completion_a__text_unknown",
    "pair__completion_b__text_unknown",
    "quality_item_id",
    "quality_item__text_a",
    "quality_item__text_b",
    "rater__flagged",
    "rater__exclusion_override",
    "rater__cohort",
]


def export_values(
    queryset: QuerySet[Judgment], *, axes_as_text: bool = False
) -> QuerySet[Judgment, dict[str, Any]]:
    """`values()` of a Judgment queryset with everything a contract row needs (and "id").

    `axes_as_text` has the database render the axes JSON (no decode and re-encode per row).
    """
    plain = [c for c in PLAIN if c != "axes"] if axes_as_text else PLAIN
    extra = {"axes_text": Cast("axes", TextField())} if axes_as_text else {}
    # The plugin types values() with unpacked field names as Any: the rows are plain dicts.
    rows: QuerySet[Judgment, dict[str, Any]] = queryset.values(
        "id", *COLUMNS.values(), *plain, *EXTRA, **extra
    )
    return rows


def export_rows(
    study: Study, *, chunk_size: int = CHUNK, axes_as_text: bool = False
) -> Iterator[dict[str, Any]]:
    """The study's judgments as contract rows, streamed in id order."""
    queryset = Judgment.objects.filter(study=study).order_by("id")
    rows = export_values(queryset, axes_as_text=axes_as_text).iterator(chunk_size=chunk_size)
    for row in rows:
        yield contract_row(row)


def contract_row(row: dict[str, Any]) -> dict[str, Any]:
    """One `export_values` row as the judgments contract (annotation.formats.FIELDS)."""
    if "axes_text" in row:
        row["axes"] = row.pop("axes_text")
    out = {name: row[column] for name, column in COLUMNS.items()}
    if row["quality_item_id"] is not None:
        out.update(
            context_id=f"qc-{row['quality_item_id']}",
            system_a="qc-reply-a",
            system_b="qc-reply-b",
            completion_a=row["quality_item__text_a"],
            completion_b=row["quality_item__text_b"],
        )
    out.update((k, row[k]) for k in PLAIN)
    if row.get("pair__completion_a__text_unknown") or row.get("pair__completion_b__text_unknown"):
        out["completion_a"] = (
            None if row["pair__completion_a__text_unknown"] else out["completion_a"]
        )
        out["completion_b"] = (
            None if row["pair__completion_b__text_unknown"] else out["completion_b"]
        )
    out["shown_left"] = out["shown_left"] or None
    out["judge_family"] = out["judge_family"] or None
    out["quality_check"] = bool(row["quality_check"] or row["quality_item_id"] is not None)
    override, flagged = row["rater__exclusion_override"], row["rater__flagged"]
    out["excluded"] = bool(flagged if override is None else override)
    out["cohort"] = row["rater__cohort"]  # null for LLM judges (no rater)
    return out


def judgments_export(*, study: Study, fmt: str, path: str | Path, chunk_size: int = CHUNK) -> int:
    """Write the study's judgments to `path` as csv, jsonl or parquet; returns the row count."""
    counter = [0]
    with open(path, "wb") as fh:
        for block in judgments_stream(study=study, fmt=fmt, chunk_size=chunk_size, count=counter):
            fh.write(block)
    return counter[0]


def judgments_stream(
    *, study: Study, fmt: str, chunk_size: int = CHUNK, count: list[int] | None = None
) -> Iterator[bytes]:
    """The export as blocks of bytes, one per chunk of rows (files and HTTP downloads).

    `count`, when given, gets the number of rows written in its first item.
    """
    encoder = {"csv": _csv_blocks, "jsonl": _jsonl_blocks, "parquet": _parquet_blocks}.get(fmt)
    if encoder is None:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    rows = export_rows(study, chunk_size=chunk_size, axes_as_text=fmt != "jsonl")
    count = count if count is not None else [0]

    def counted() -> Iterator[list[dict[str, Any]]]:
        for chunk in _chunks(rows, chunk_size):
            count[0] += len(chunk)
            yield chunk

    return encoder(counted())


def _chunks(rows: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    while chunk := list(islice(rows, size)):
        yield chunk


def _jsonl_blocks(chunks: Iterable[list[dict[str, Any]]]) -> Iterator[bytes]:
    for chunk in chunks:
        text = "".join(json.dumps(_jsonable(r), ensure_ascii=False) + "\n" for r in chunk)
        yield text.encode("utf-8")


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    moment = row["submitted_at"]
    return {**row, "submitted_at": moment.isoformat() if moment else None}


def _csv_row(row: dict[str, Any]) -> list[Any]:
    out = ["" if row[f] is None else row[f] for f in FIELDS]
    out[BOOL_AT[0]] = "true" if row["quality_check"] else "false"
    out[BOOL_AT[1]] = "true" if row["excluded"] else "false"
    out[TIME_AT] = row["submitted_at"].isoformat() if row["submitted_at"] else ""
    # Texts from raters and other tools could start a spreadsheet formula.
    return safe_row(out)


BOOL_AT = (FIELDS.index("quality_check"), FIELDS.index("excluded"))
TIME_AT = FIELDS.index("submitted_at")


def csv_blocks(
    header: list[str], rows: Iterator[list[Any]], *, size: int = CHUNK
) -> Iterator[bytes]:
    """CSV text in blocks of `size` rows, every cell through csv_safe (formula neutralised)."""
    buffer = io.StringIO()
    out = csv.writer(buffer)
    out.writerow(safe_row(header))
    for n, row in enumerate(rows, start=1):
        out.writerow(safe_row(row))
        if n % size == 0:
            yield _drain(buffer)
    yield _drain(buffer)


def _drain(buffer: io.StringIO) -> bytes:
    data = buffer.getvalue().encode("utf-8")
    buffer.seek(0)
    buffer.truncate(0)
    return data


def _csv_blocks(chunks: Iterable[list[dict[str, Any]]]) -> Iterator[bytes]:
    buffer = io.StringIO()
    out = csv.writer(buffer)
    out.writerow(FIELDS)
    for chunk in chunks:
        out.writerows(_csv_row(r) for r in chunk)
        yield _drain(buffer)
    yield _drain(buffer)


def parquet_schema() -> pa.Schema:
    import pyarrow as pa

    text = pa.string()
    types = {
        "strength": pa.int16(),
        "strength_max": pa.int16(),
        "duration_ms": pa.int64(),
        "submitted_at": pa.timestamp("us", tz="UTC"),
        "quality_check": pa.bool_(),
        "excluded": pa.bool_(),
    }
    return pa.schema([(name, types.get(name, text)) for name in FIELDS])


class _Sink:
    """A write-only file for pyarrow that hands its bytes out after each batch."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0
        self.closed = False

    def write(self, data: Buffer) -> int:
        data = bytes(data)
        self.parts.append(data)
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        data, self.parts = b"".join(self.parts), []
        return data


def parquet_blocks(schema: pa.Schema, batches: Iterable[dict[str, list[Any]]]) -> Iterator[bytes]:
    """Parquet bytes from an iterator of column dicts, one row group per batch."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = _Sink()
    writer = pq.ParquetWriter(pa.PythonFile(sink, mode="w"), schema)
    empty = True
    for columns in batches:
        writer.write_batch(pa.RecordBatch.from_pydict(columns, schema=schema))
        empty = False
        yield sink.take()
    if empty:
        writer.write_table(schema.empty_table())
    writer.close()
    yield sink.take()


def _parquet_blocks(chunks: Iterable[list[dict[str, Any]]]) -> Iterator[bytes]:
    batches = ({f: [r[f] for r in chunk] for f in FIELDS} for chunk in chunks)
    return parquet_blocks(parquet_schema(), batches)

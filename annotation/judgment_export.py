"""Streaming judgment export: CSV, JSON Lines or Parquet, in constant memory.

One row per Judgment of the study (pair judgments, and quality-check judgments with
"quality_check": true), fields in the order of FIELDS (the judgments contract). Rows come from a
single `values()` query over the joins (no per-row query), read with `iterator(chunk_size=...)`
(a server-side cursor on PostgreSQL) and written chunk by chunk: csv.writer rows, JSON lines, or
pyarrow record batches through one ParquetWriter.

- `judge` is the rater's pseudonym (Judgment.judge) or the LLM judge's name; never
  Rater.external_id, never an account name or e-mail.
- `excluded` is the rater's effective exclusion (Rater.excluded: flagged unless an admin override
  says otherwise); false for LLM judges.
- Orientation is canonical: system_a is the pair's completion_a (the smaller id).
- Quality-check rows: context_id "qc-<item id>", system_a/_b "qc-reply-a"/"qc-reply-b", the texts
  of the two replies shown.
- Empty judge_family and shown_left are null; `axes` is a JSON string in CSV and Parquet; CSV
  writes null as an empty field and booleans as true/false; submitted_at is ISO 8601 with offset.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from django.db.models import TextField
from django.db.models.functions import Cast

from completions.csv_safe import safe_row
from completions.models import Study

from .formats import FIELDS
from .models import Judgment

FORMATS = ("csv", "jsonl", "parquet")
CHUNK = 5000
COLUMNS = {
    "context_id": "pair__context__external_id",
    "system_a": "pair__completion_a__system__name",
    "system_b": "pair__completion_b__system__name",
    "completion_a": "pair__completion_a__text",
    "completion_b": "pair__completion_b__text",
}
# Read as they are from the judgment row; "excluded" is derived from the rater.
PLAIN = [f for f in FIELDS if f not in COLUMNS and f != "excluded"]
EXTRA = [
    "quality_item_id",
    "quality_item__text_a",
    "quality_item__text_b",
    "rater__flagged",
    "rater__exclusion_override",
]


def export_rows(
    study: Study, *, chunk_size: int = CHUNK, axes_as_text: bool = False
) -> Iterator[dict[str, Any]]:
    """The study's judgments as contract rows, streamed in id order.

    `axes_as_text` has the database render the axes JSON (no decode and re-encode per row).
    """
    plain = [c for c in PLAIN if c != "axes"] if axes_as_text else PLAIN
    extra = {"axes_text": Cast("axes", TextField())} if axes_as_text else {}
    rows = (
        Judgment.objects.filter(study=study)
        .order_by("id")
        .values(*COLUMNS.values(), *plain, *EXTRA, **extra)
        .iterator(chunk_size=chunk_size)
    )
    for row in rows:
        if axes_as_text:
            row["axes"] = row.pop("axes_text")
        yield _contract_row(row)


def _contract_row(row: dict[str, Any]) -> dict[str, Any]:
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
    out["shown_left"] = out["shown_left"] or None
    out["judge_family"] = out["judge_family"] or None
    out["quality_check"] = bool(row["quality_check"] or row["quality_item_id"] is not None)
    override, flagged = row["rater__exclusion_override"], row["rater__flagged"]
    out["excluded"] = bool(flagged if override is None else override)
    return out


def judgments_export(*, study: Study, fmt: str, path: str | Path, chunk_size: int = CHUNK) -> int:
    """Write the study's judgments to `path` as csv, jsonl or parquet; returns the row count."""
    writer = {"csv": _write_csv, "jsonl": _write_jsonl, "parquet": _write_parquet}.get(fmt)
    if writer is None:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    rows = export_rows(study, chunk_size=chunk_size, axes_as_text=fmt != "jsonl")
    return writer(_chunks(rows, chunk_size), path)


def _chunks(rows: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    while chunk := list(islice(rows, size)):
        yield chunk


def _write_jsonl(chunks, path) -> int:
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for chunk in chunks:
            fh.writelines(json.dumps(_jsonable(r), ensure_ascii=False) + "\n" for r in chunk)
            n += len(chunk)
    return n


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


def _write_csv(chunks, path) -> int:
    n = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(FIELDS)
        for chunk in chunks:
            out.writerows(_csv_row(r) for r in chunk)
            n += len(chunk)
    return n


def parquet_schema():
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


def _write_parquet(chunks, path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema, n = parquet_schema(), 0
    with pq.ParquetWriter(str(path), schema) as writer:
        for chunk in chunks:
            columns = {f: [r[f] for r in chunk] for f in FIELDS}
            writer.write_batch(pa.RecordBatch.from_pydict(columns, schema=schema))
            n += len(chunk)
        if n == 0:
            writer.write_table(schema.empty_table())
    return n

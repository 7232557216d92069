"""Every download as a stream of bytes (constant memory), with its file name and media type.

Raters appear only as pseudonyms (the judgments export); every CSV cell goes through
completions.csv_safe; texts are never decoded into memory all at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from annotation.judgment_export import csv_blocks, judgments_stream
from completions.exports import COMPLETION_FIELDS, CONTEXT_FIELDS, completion_rows, context_rows
from completions.models import Study
from ranking import services, tables

CSV = "text/csv; charset=utf-8"
JSONL = "application/x-ndjson; charset=utf-8"
PARQUET = "application/vnd.apache.parquet"


@dataclass(frozen=True)
class Download:
    name: str
    label: str
    media_type: str
    stream: Callable[[Study], Iterator[bytes]]

    def filename(self, study: Study) -> str:
        return f"{study.slug}-{self.name}"


def _jsonl(rows: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    batch: list[str] = []
    for row in rows:
        batch.append(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        if len(batch) == 2000:
            yield "".join(batch).encode("utf-8")
            batch = []
    yield "".join(batch).encode("utf-8")


def _cell(value: Any) -> Any:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


def _csv(fields: list[str], rows: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    return csv_blocks(fields, ([_cell(row[f]) for f in fields] for row in rows))


def _table(rows: Iterable[list[Any]]) -> Iterator[bytes]:
    header, *body = list(rows)
    return csv_blocks(header, iter([[_cell(v) for v in row] for row in body]))


def _time_worked(study: Study) -> Iterator[bytes]:
    from care.selectors import TIME_FIELDS, time_worked_rows

    return _csv(TIME_FIELDS, time_worked_rows(study))


def _leaderboard(study: Study) -> Iterator[bytes]:
    result = services.leaderboard_current(study, judges="all", subset="all")
    return _table(tables.leaderboard_rows(result))


def _agreement(study: Study) -> Iterator[bytes]:
    result = services.leaderboard_current(study, judges="all", subset="all")
    if not result.get("agreement"):  # no snapshot yet: compute it now
        result = {"agreement": services.agreement_compute(study)}
    return _table(tables.agreement_rows(result))


DOWNLOADS = {
    d.name: d
    for d in [
        Download(
            "judgments.csv", "Judgments (CSV)", CSV, lambda s: judgments_stream(study=s, fmt="csv")
        ),
        Download(
            "judgments.jsonl",
            "Judgments (JSON Lines)",
            JSONL,
            lambda s: judgments_stream(study=s, fmt="jsonl"),
        ),
        Download(
            "judgments.parquet",
            "Judgments (Parquet)",
            PARQUET,
            lambda s: judgments_stream(study=s, fmt="parquet"),
        ),
        Download(
            "contexts.jsonl", "Contexts (JSON Lines)", JSONL, lambda s: _jsonl(context_rows(s))
        ),
        Download(
            "contexts.csv", "Contexts (CSV)", CSV, lambda s: _csv(CONTEXT_FIELDS, context_rows(s))
        ),
        Download(
            "completions.jsonl",
            "Completions (JSON Lines)",
            JSONL,
            lambda s: _jsonl(completion_rows(s)),
        ),
        Download(
            "completions.csv",
            "Completions (CSV)",
            CSV,
            lambda s: _csv(COMPLETION_FIELDS, completion_rows(s)),
        ),
        Download("leaderboard.csv", "Leaderboard, all judges (CSV)", CSV, _leaderboard),
        Download("agreement.csv", "Agreement statistics (CSV)", CSV, _agreement),
        Download(
            "time-worked.csv", "Time worked for payment, pseudonymous (CSV)", CSV, _time_worked
        ),
    ]
}

"""Imports through the API: upload a file, get the import's report (all or nothing)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import UploadedFile
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.judgment_io import JudgmentImportReport, judgments_import
from annotation.judgment_sources import SOURCE_FORMATS, parse_mapping
from completions.esconv import EsconvFormatError
from completions.importers import ImportFileError
from completions.models import Study
from completions.services import ImportReport as FileImportReport
from completions.services import completions_import, contexts_import
from studio.services import without_server_paths

from .base import StudyAdminApi

KINDS = ("contexts", "completions", "judgments")
MAX_UPLOAD = 512 * 1024 * 1024


class ImportRequest(serializers.Serializer[None]):
    kind = serializers.ChoiceField(choices=KINDS)
    file = serializers.FileField(max_length=300)
    format = serializers.ChoiceField(
        choices=SOURCE_FORMATS,
        default="jsonl",
        help_text="judgments only: jsonl (the contract), arena, mtbench or csv",
    )
    map = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="csv only: FIELD=COLUMN,FIELD=COLUMN",
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["kind"] != "judgments" and data["format"] != "jsonl":
            raise serializers.ValidationError({"format": "contexts and completions are jsonl"})
        if data["file"].size > MAX_UPLOAD:
            raise serializers.ValidationError({"file": "larger than 512 MB"})
        return data


class ImportReport(serializers.Serializer[dict[str, Any]]):
    kind = serializers.CharField()
    report = serializers.DictField()
    lines = serializers.ListField(child=serializers.CharField())


class ImportRefusal(serializers.Serializer[dict[str, Any]]):
    detail = serializers.CharField(help_text='"import refused, nothing changed: line N: reason"')


class ImportCreate(StudyAdminApi):
    """Upload a contexts, completions or judgments file into the study; get the report.

    All or nothing: a bad line refuses the whole file (400 with "line N: reason").
    """

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ImportRequest},
        responses={201: ImportReport, 400: ImportRefusal},
    )
    def post(self, request: Request, slug: str) -> Response:
        study = self.study()
        form = ImportRequest(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            mapping = parse_mapping([data["map"]] if data.get("map") else None)
            with _on_disk(data["file"]) as path:
                try:
                    report = _run(study, data["kind"], path, data["format"], mapping)
                except (ImportFileError, EsconvFormatError) as exc:
                    reason = without_server_paths(str(exc), path=path, folder=str(path.parent))
                    raise ImportFileError(reason) from exc
        except (ImportFileError, EsconvFormatError, ValueError, UnicodeDecodeError) as exc:
            return _refused(exc)
        except RecursionError:
            return _refused("the file is nested too deep to read")
        body = {"kind": data["kind"], "report": dict(vars(report)), "lines": report.lines()}
        return Response(body, status=status.HTTP_201_CREATED)


@contextmanager
def _on_disk(upload: UploadedFile[bytes]) -> Iterator[Path]:
    """The upload as a file on disk: Django already streamed a large one to a temporary file
    (read from there line by line); a small one held in memory is written out."""
    if hasattr(upload, "temporary_file_path"):
        yield Path(upload.temporary_file_path())
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "upload"
        with open(path, "wb") as fh:
            for block in upload.chunks():
                fh.write(block)
        yield path


def _refused(reason: Exception | str) -> Response:
    return Response(
        {"detail": f"import refused, nothing changed: {reason}"},
        status=status.HTTP_400_BAD_REQUEST,
    )


def _run(
    study: Study, kind: str, path: Path, fmt: str, mapping: dict[str, str]
) -> FileImportReport | JudgmentImportReport:
    if kind == "contexts":
        return contexts_import(study=study, path=path)
    if kind == "completions":
        return completions_import(study=study, path=path)
    return judgments_import(study=study, path=path, fmt=fmt, mapping=mapping)

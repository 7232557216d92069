"""The published JSON Schemas of the file formats, generated from their one definition."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from pydantic import BaseModel

from annotation.formats import JudgmentFormat
from completions.formats import CompletionFormat, ContextFormat, json_schema

from .material_formats import ESCONV_SCHEMA

FORMATS: dict[str, type[BaseModel]] = {
    "contexts": ContextFormat,
    "completions": CompletionFormat,
    "judgments": JudgmentFormat,
}


def schema_dir() -> Path:
    return Path(settings.BASE_DIR) / "docs" / "formats"


def schema_texts() -> dict[str, str]:
    """file name -> the JSON Schema text it must hold."""
    texts = {
        f"{name}.schema.json": json.dumps(json_schema(model, name=name), indent=2) + "\n"
        for name, model in FORMATS.items()
    }
    texts["esconv.schema.json"] = json.dumps(ESCONV_SCHEMA, indent=2, ensure_ascii=False) + "\n"
    return texts


def schema_text(kind: str) -> str | None:
    """The JSON Schema of a kind's lines (ESConv: of the whole file), as published."""
    return schema_texts().get(f"{kind}.schema.json")

"""The two batch protocols: OpenAI Batch (file upload + /v1/batches) and Anthropic Message
Batches (/v1/messages/batches). The real SDKs talk to them unchanged.

Requests are answered when the batch is created, with the same replies and misbehaviour
options as the streaming endpoints (``status=CODE[*N]`` makes a request error inside the
batch, counting as an attempt, so the normal path can succeed afterwards). A batch reports
"in progress" on its first retrieval and has ended from the second on, so a poller sees both.
A batch containing a request whose model has the option ``batch=expire`` expires: the first
half of its requests succeed, the rest expire.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from . import anthropic_protocol, core, openai_protocol

BATCHES = web.AppKey("batches", dict)
FILES = web.AppKey("files", dict)


@dataclass
class FakeBatch:
    id: str
    provider: str
    results: list[dict[str, Any]]
    expired: bool
    counts: dict[str, int]
    created_at: float = field(default_factory=time.time)
    retrievals: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def ended(self) -> bool:
        return self.retrievals >= 2


def _expires(bodies: list[dict[str, Any]]) -> bool:
    return any("batch=expire" in str(b.get("model", "")) for b in bodies)


def _answer(request: web.Request, body: dict, prompt: list, schema) -> tuple[int, str, Any]:
    """(HTTP status, reply text, exchange) for one request inside a batch."""
    ex = core.start(request, body, prompt, schema)
    b = ex.behaviour
    if b.status and b.status.applies(ex.attempt):
        return int(b.status.value), "", ex
    return 200, ex.text(), ex


# --------------------------------------------------------------------------- OpenAI


async def openai_file_upload(request: web.Request) -> web.Response:
    form = await request.post()
    upload = form["file"]
    content = upload.file.read() if isinstance(upload, web.FileField) else str(upload).encode()
    file_id = f"file-{uuid.uuid4().hex[:24]}"
    request.app[FILES][file_id] = content
    return web.json_response(_file_object(file_id, len(content), str(form.get("purpose", ""))))


def _file_object(file_id: str, size: int, purpose: str) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": f"{file_id}.jsonl",
        "purpose": purpose or "batch",
        "status": "processed",
    }


async def openai_file_content(request: web.Request) -> web.Response:
    content = request.app[FILES].get(request.match_info["file_id"])
    if content is None:
        return web.json_response({"error": {"message": "no such file"}}, status=404)
    return web.Response(body=content, content_type="application/octet-stream")


def _openai_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format") or {}
    return fmt.get("json_schema", {}).get("schema") if fmt.get("type") == "json_schema" else None


async def openai_batch_create(request: web.Request) -> web.Response:
    params = await request.json()
    content = request.app[FILES].get(params.get("input_file_id"), b"")
    lines = [json.loads(line) for line in content.decode().splitlines() if line.strip()]
    expire = _expires([line["body"] for line in lines])
    batch_id = f"batch_{uuid.uuid4().hex[:24]}"
    output: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        body = line["body"]
        if expire and i >= len(lines) // 2:
            errors.append(_openai_expired(line["custom_id"]))
            continue
        status, text, ex = _answer(request, body, body.get("messages", []), _openai_schema(body))
        target = output if status == 200 else errors
        target.append(_openai_line(line["custom_id"], status, text, ex))
    files = request.app[FILES]
    meta = {"input_file_id": params.get("input_file_id"), "endpoint": params.get("endpoint")}
    if output:
        meta["output_file_id"] = f"file-{uuid.uuid4().hex[:24]}"
        files[meta["output_file_id"]] = _jsonl(output)
    if errors:
        meta["error_file_id"] = f"file-{uuid.uuid4().hex[:24]}"
        files[meta["error_file_id"]] = _jsonl(errors)
    counts = {"total": len(lines), "completed": len(output), "failed": len(errors)}
    batch = FakeBatch(batch_id, "openai", [], expire, counts, meta=meta)
    request.app[BATCHES][batch_id] = batch
    return web.json_response(_openai_batch(batch, "validating"))


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _openai_line(custom_id: str, status: int, text: str, ex) -> dict[str, Any]:
    if status != 200:
        body = {"error": {"message": f"fake server error {status}", "type": "fake"}}
    else:
        body = openai_protocol.chat_completion(ex, text)
    return {
        "id": f"batch_req_{uuid.uuid4().hex[:16]}",
        "custom_id": custom_id,
        "response": {"status_code": status, "request_id": f"req-{ex.prompt_hash}", "body": body},
        "error": None,
    }


def _openai_expired(custom_id: str) -> dict[str, Any]:
    return {
        "id": f"batch_req_{uuid.uuid4().hex[:16]}",
        "custom_id": custom_id,
        "response": None,
        "error": {
            "code": "batch_expired",
            "message": "This request could not be executed before the completion window expired.",
        },
    }


def _openai_batch(batch: FakeBatch, status: str) -> dict[str, Any]:
    ended = status in ("completed", "expired")
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": batch.meta.get("endpoint") or "/v1/chat/completions",
        "errors": None,
        "input_file_id": batch.meta.get("input_file_id") or "",
        "completion_window": "24h",
        "status": status,
        "output_file_id": batch.meta.get("output_file_id") if ended else None,
        "error_file_id": batch.meta.get("error_file_id") if ended else None,
        "created_at": int(batch.created_at),
        "completed_at": int(time.time()) if status == "completed" else None,
        "expired_at": int(time.time()) if status == "expired" else None,
        "request_counts": batch.counts,
        "metadata": None,
    }


async def openai_batch_retrieve(request: web.Request) -> web.Response:
    batch = request.app[BATCHES].get(request.match_info["batch_id"])
    if batch is None:
        return web.json_response({"error": {"message": "no such batch"}}, status=404)
    batch.retrievals += 1
    status = "in_progress" if not batch.ended else ("expired" if batch.expired else "completed")
    return web.json_response(_openai_batch(batch, status))


# --------------------------------------------------------------------------- Anthropic


def _anthropic_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = (body.get("output_config") or {}).get("format") or {}
    return fmt.get("schema") if fmt.get("type") == "json_schema" else None


async def anthropic_batch_create(request: web.Request) -> web.Response:
    payload = await request.json()
    entries = payload.get("requests", [])
    expire = _expires([e["params"] for e in entries])
    results = []
    counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    for i, entry in enumerate(entries):
        params = entry["params"]
        if expire and i >= len(entries) // 2:
            results.append({"custom_id": entry["custom_id"], "result": {"type": "expired"}})
            counts["expired"] += 1
            continue
        prompt = [params.get("system", ""), *params.get("messages", [])]
        status, text, ex = _answer(request, params, prompt, _anthropic_schema(params))
        results.append(
            {"custom_id": entry["custom_id"], "result": _anthropic_result(status, text, ex)}
        )
        counts["succeeded" if status == 200 else "errored"] += 1
    batch = FakeBatch(f"msgbatch_{uuid.uuid4().hex[:24]}", "anthropic", results, expire, counts)
    request.app[BATCHES][batch.id] = batch
    return web.json_response(_anthropic_batch(request, batch))


def _anthropic_result(status: int, text: str, ex) -> dict[str, Any]:
    if status != 200:
        error = {"type": "api_error", "message": f"fake server error {status}"}
        return {"type": "errored", "error": {"type": "error", "error": error}}
    return {"type": "succeeded", "message": anthropic_protocol.message(ex, text)}


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _anthropic_batch(request: web.Request, batch: FakeBatch) -> dict[str, Any]:
    ended = batch.ended
    counts = dict(batch.counts)
    if not ended:  # still "processing" from the outside
        counts = {**dict.fromkeys(counts, 0), "processing": len(batch.results)}
    return {
        "id": batch.id,
        "type": "message_batch",
        "processing_status": "ended" if ended else "in_progress",
        "request_counts": counts,
        "created_at": _iso(batch.created_at),
        "expires_at": _iso(batch.created_at + 86400),
        "ended_at": _iso(time.time()) if ended else None,
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": (
            f"{request.scheme}://{request.host}/v1/messages/batches/{batch.id}/results"
            if ended
            else None
        ),
    }


async def anthropic_batch_retrieve(request: web.Request) -> web.Response:
    batch = request.app[BATCHES].get(request.match_info["batch_id"])
    if batch is None:
        return web.json_response(
            {"type": "error", "error": {"type": "not_found_error"}}, status=404
        )
    batch.retrievals += 1
    return web.json_response(_anthropic_batch(request, batch))


async def anthropic_batch_results(request: web.Request) -> web.Response:
    batch = request.app[BATCHES].get(request.match_info["batch_id"])
    if batch is None or not batch.ended:
        return web.json_response(
            {"type": "error", "error": {"type": "not_found_error"}}, status=404
        )
    return web.Response(body=_jsonl(batch.results), content_type="application/binary")


def add_routes(app: web.Application) -> None:
    app[BATCHES] = {}
    app[FILES] = {}
    app.router.add_post("/v1/files", openai_file_upload)
    app.router.add_get("/v1/files/{file_id}/content", openai_file_content)
    app.router.add_post("/v1/batches", openai_batch_create)
    app.router.add_get("/v1/batches/{batch_id}", openai_batch_retrieve)
    app.router.add_post("/v1/messages/batches", anthropic_batch_create)
    app.router.add_get("/v1/messages/batches/{batch_id}", anthropic_batch_retrieve)
    app.router.add_get("/v1/messages/batches/{batch_id}/results", anthropic_batch_results)

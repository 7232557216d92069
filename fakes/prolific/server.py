"""The fake's routes and state (one process, in memory; `/_control/reset` empties it).

What it checks, as Prolific documents: the `Authorization: Token ...` header; completion-code
actions from Prolific's list; approval only of submissions awaiting review; a rejection only with
a message of at least 100 characters and a rejection category; a bonus set up before it is paid,
and each set-up paid once (paying again is recorded, as the real endpoint would pay twice).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from aiohttp import web

CODE_ACTIONS = frozenset(
    {
        "AUTOMATICALLY_APPROVE",
        "MANUALLY_REVIEW",
        "ADD_TO_PARTICIPANT_GROUP",
        "REMOVE_FROM_PARTICIPANT_GROUP",
        "REQUEST_RETURN",
    }
)
REJECTION_CATEGORIES = frozenset(
    {"TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
     "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER"}
)  # fmt: skip
MIN_REJECTION_MESSAGE = 100


@dataclass
class State:
    token: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    studies: dict[str, dict[str, Any]] = field(default_factory=dict)
    submissions: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    bonuses: dict[str, dict[str, Any]] = field(default_factory=dict)
    ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self.ids):022x}"  # 24 characters, as Prolific's ids

    def reset(self) -> None:
        token = self.token
        self.__init__(token=token)  # type: ignore[misc]


STATE: web.AppKey[State] = web.AppKey("state", State)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _error(status: int, detail: str) -> web.Response:
    return web.json_response({"error": {"status": status, "detail": detail}}, status=status)


@web.middleware
async def _record_and_authorise(request: web.Request, handler):
    state = request.app[STATE]
    if not request.path.startswith("/api/"):
        return await handler(request)
    raw = await request.read()
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = raw.decode(errors="replace")
    header = request.headers.get("Authorization", "")
    state.calls.append(
        {"method": request.method, "path": request.path, "body": body, "at": _now(),
         "authorised": header.startswith("Token ")}
    )  # fmt: skip
    given = header.removeprefix("Token ").strip() if header.startswith("Token ") else ""
    if not given or (state.token and given != state.token):
        return _error(401, "Invalid token.")
    return await handler(request)


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise web.HTTPBadRequest(text='{"error": "body is not JSON"}') from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text='{"error": "body is not an object"}')
    return body


def _study(request: web.Request, key: str = "id") -> dict[str, Any]:
    study = request.app[STATE].studies.get(request.match_info[key])
    if study is None:
        raise web.HTTPNotFound(text='{"error": "no such study"}', content_type="application/json")
    return study


# --- Studies --------------------------------------------------------------------------------


def _codes_problem(codes: Any, state: State) -> str | None:
    if not isinstance(codes, list) or not codes:
        return "completion_codes: give at least one code"
    for code in codes:
        if not isinstance(code, dict) or not code.get("code") or not code.get("code_type"):
            return "completion_codes: each needs code and code_type"
        for action in code.get("actions", []):
            name = action.get("action") if isinstance(action, dict) else None
            if name not in CODE_ACTIONS:
                return f"completion_codes: unknown action {name!r}"
            group = action.get("participant_group")
            if "PARTICIPANT_GROUP" in name and group not in state.groups:
                return f"completion_codes: no participant group {group!r}"
    return None


async def study_create(request: web.Request) -> web.Response:
    state = request.app[STATE]
    body = await _json(request)
    missing = [
        k
        for k in ("name", "external_study_url", "total_available_places", "reward")
        if k not in body
    ]
    if missing:
        return _error(400, f"missing fields: {', '.join(missing)}")
    problem = _codes_problem(body.get("completion_codes"), state)
    if problem:
        return _error(400, problem)
    study = {**body, "id": state.new_id("s"), "status": "UNPUBLISHED", "date_created": _now()}
    state.studies[study["id"]] = study
    return web.json_response(study, status=201)


async def study_get(request: web.Request) -> web.Response:
    return web.json_response(_study(request))


async def study_transition(request: web.Request) -> web.Response:
    study = _study(request)
    action = (await _json(request)).get("action")
    moves = {"PUBLISH": "ACTIVE", "PAUSE": "PAUSED", "START": "ACTIVE", "STOP": "COMPLETED"}
    if action not in moves:
        return _error(400, f"unknown study action {action!r}")
    study["status"] = moves[action]
    return web.json_response(study)


async def study_submissions(request: web.Request) -> web.Response:
    study = _study(request)
    rows = [s for s in request.app[STATE].submissions.values() if s["study_id"] == study["id"]]
    return web.json_response({"results": rows, "meta": {"count": len(rows)}})


async def study_screen_out(request: web.Request) -> web.Response:
    study = _study(request)
    body = await _json(request)
    subs = request.app[STATE].submissions
    ids = body.get("submission_ids") or []
    wrong = [i for i in ids if subs.get(i, {}).get("study_id") != study["id"]]
    if not ids or wrong:
        return _error(400, f"submission_ids: unknown or of another study: {wrong}")
    for i in ids:
        subs[i]["status"] = "SCREENED-OUT"
    return web.json_response({"submission_ids": ids, "status": "SCREENED-OUT"})


# --- Submissions ----------------------------------------------------------------------------


async def submission_get(request: web.Request) -> web.Response:
    sub = request.app[STATE].submissions.get(request.match_info["id"])
    return web.json_response(sub) if sub else _error(404, "no such submission")


async def submission_transition(request: web.Request) -> web.Response:
    sub = request.app[STATE].submissions.get(request.match_info["id"])
    if sub is None:
        return _error(404, "no such submission")
    body = await _json(request)
    action = body.get("action")
    if sub["status"] != "AWAITING REVIEW":
        return _error(400, f"a submission {sub['status']} cannot be reviewed")
    if action == "APPROVE":
        sub["status"] = "APPROVED"
    elif action == "REJECT":
        if len(body.get("message") or "") < MIN_REJECTION_MESSAGE:
            return _error(400, f"message: at least {MIN_REJECTION_MESSAGE} characters")
        if body.get("rejection_category") not in REJECTION_CATEGORIES:
            return _error(400, "rejection_category: not one of Prolific's categories")
        sub["status"] = "REJECTED"
    else:
        return _error(400, f"unknown submission action {action!r}")
    return web.json_response(sub)


async def bulk_approve(request: web.Request) -> web.Response:
    state = request.app[STATE]
    body = await _json(request)
    if "submission_ids" in body:
        chosen = [state.submissions.get(i) for i in body["submission_ids"]]
    else:
        pids = set(body.get("participant_ids") or [])
        chosen = [
            s
            for s in state.submissions.values()
            if s["study_id"] == body.get("study_id") and s["participant_id"] in pids
        ]
    if not chosen or any(s is None or s["status"] != "AWAITING REVIEW" for s in chosen):
        return _error(400, "every submission must exist and await review")
    for sub in chosen:
        sub["status"] = "APPROVED"  # type: ignore[index]
    return web.json_response({"approved": len(chosen)})


# --- Bonuses --------------------------------------------------------------------------------


async def bonus_setup(request: web.Request) -> web.Response:
    state = request.app[STATE]
    body = await _json(request)
    study = state.studies.get(body.get("study_id", ""))
    if study is None:
        return _error(400, "study_id: no such study")
    participants = {s["participant_id"] for s in state.submissions.values()}
    total = Decimal(0)
    lines = [line for line in str(body.get("csv_bonuses", "")).splitlines() if line.strip()]
    for line in lines:
        pid, _, amount = line.partition(",")
        try:
            value = Decimal(amount.strip())
        except InvalidOperation:
            return _error(400, f"csv_bonuses: {line!r} is not 'participant_id,amount'")
        if pid.strip() not in participants or value <= 0:
            return _error(400, f"csv_bonuses: {pid.strip()!r} took no part, or amount not > 0")
        total += value
    if not lines:
        return _error(400, "csv_bonuses: no lines")
    bonus = {
        "id": state.new_id("b"),
        "study": study["id"],
        "amount": float(total),
        "fees": float(total * Decimal("0.333")),
        "total_amount": float(total * Decimal("1.333")),
        "csv_bonuses": body["csv_bonuses"],
        "paid": 0,
    }
    state.bonuses[bonus["id"]] = bonus
    return web.json_response(bonus, status=201)


async def bonus_pay(request: web.Request) -> web.Response:
    bonus = request.app[STATE].bonuses.get(request.match_info["id"])
    if bonus is None:
        return _error(404, "no such bulk bonus payment")
    bonus["paid"] += 1  # not idempotent, as documented: a second call pays again
    return web.json_response({}, status=202)


# --- Participant groups ---------------------------------------------------------------------


async def group_create(request: web.Request) -> web.Response:
    state = request.app[STATE]
    body = await _json(request)
    if not body.get("name"):
        return _error(400, "name: required")
    group = {"id": state.new_id("g"), "name": body["name"], "participant_ids": []}
    state.groups[group["id"]] = group
    return web.json_response(group, status=201)


async def group_participants(request: web.Request) -> web.Response:
    group = request.app[STATE].groups.get(request.match_info["id"])
    if group is None:
        return _error(404, "no such participant group")
    if request.method == "POST":
        for pid in (await _json(request)).get("participant_ids") or []:
            if pid not in group["participant_ids"]:
                group["participant_ids"].append(pid)
    rows = [{"participant_id": p} for p in group["participant_ids"]]
    return web.json_response({"results": rows})


# --- Control (the tests play the participants) ----------------------------------------------


async def control_calls(request: web.Request) -> web.Response:
    return web.json_response(request.app[STATE].calls)


async def control_state(request: web.Request) -> web.Response:
    state = request.app[STATE]
    return web.json_response(
        {"studies": state.studies, "submissions": state.submissions, "groups": state.groups,
         "bonuses": state.bonuses}
    )  # fmt: skip


async def control_reset(request: web.Request) -> web.Response:
    request.app[STATE].reset()
    return web.json_response({"ok": True})


async def control_submission_add(request: web.Request) -> web.Response:
    """A participant starts the study: {"study_id", "participant_id"} -> an ACTIVE submission."""
    state = request.app[STATE]
    body = await _json(request)
    if body.get("study_id") not in state.studies:
        return _error(400, "study_id: no such study")
    sub = {
        "id": state.new_id("x"),
        "study_id": body["study_id"],
        "participant_id": body["participant_id"],
        "status": "ACTIVE",
        "started_at": _now(),
        "completed_at": None,
        "study_code": None,
    }
    state.submissions[sub["id"]] = sub
    return web.json_response(sub, status=201)


async def control_submission_move(request: web.Request) -> web.Response:
    """complete (with {"code"}), return or time-out a participant's submission."""
    state = request.app[STATE]
    sub = state.submissions.get(request.match_info["id"])
    if sub is None:
        return _error(404, "no such submission")
    move = request.match_info["move"]
    if move == "complete":
        code = (await _json(request)).get("code")
        study = state.studies[sub["study_id"]]
        codes = {c["code"]: c for c in study["completion_codes"]}
        if code not in codes:
            return _error(400, "not one of the study's completion codes")
        actions = {a["action"]: a for a in codes[code].get("actions", [])}
        sub["study_code"] = code
        sub["completed_at"] = _now()
        sub["status"] = "APPROVED" if "AUTOMATICALLY_APPROVE" in actions else "AWAITING REVIEW"
        if "REQUEST_RETURN" in actions:
            sub["status"] = "ACTIVE"
        if "ADD_TO_PARTICIPANT_GROUP" in actions:
            group = state.groups[actions["ADD_TO_PARTICIPANT_GROUP"]["participant_group"]]
            if sub["participant_id"] not in group["participant_ids"]:
                group["participant_ids"].append(sub["participant_id"])
    elif move == "return":
        sub["status"] = "RETURNED"
    elif move == "time-out":
        sub["status"] = "TIMED-OUT"
    else:
        return _error(404, f"unknown move {move!r}")
    return web.json_response(sub)


def create_app(*, token: str = "") -> web.Application:
    app = web.Application(middlewares=[_record_and_authorise])
    app[STATE] = State(token=token)
    v1 = "/api/v1"
    routes = [
        web.post(f"{v1}/studies/", study_create),
        web.get(f"{v1}/studies/{{id}}/", study_get),
        web.post(f"{v1}/studies/{{id}}/transition/", study_transition),
        web.get(f"{v1}/studies/{{id}}/submissions/", study_submissions),
        web.post(f"{v1}/studies/{{id}}/screen-out-submissions/", study_screen_out),
        web.post(f"{v1}/submissions/bulk-approve/", bulk_approve),
        web.post(f"{v1}/submissions/bonus-payments/", bonus_setup),
        web.get(f"{v1}/submissions/{{id}}/", submission_get),
        web.post(f"{v1}/submissions/{{id}}/transition/", submission_transition),
        web.post(f"{v1}/bulk-bonus-payments/{{id}}/pay/", bonus_pay),
        web.post(f"{v1}/participant-groups/", group_create),
        web.get(f"{v1}/participant-groups/{{id}}/participants/", group_participants),
        web.post(f"{v1}/participant-groups/{{id}}/participants/", group_participants),
        web.get("/_control/calls", control_calls),
        web.get("/_control/state", control_state),
        web.post("/_control/reset", control_reset),
        web.post("/_control/submissions", control_submission_add),
        web.post("/_control/submissions/{id}/{move}", control_submission_move),
        web.get("/healthz", _health),
    ]
    app.add_routes(routes)
    return app


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})

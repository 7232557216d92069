"""The REST API under /api/: every endpoint for every role, the data it returns, imports."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.access import RATER_COOKIE, rater_cookie_value
from annotation.judgment_io import judgments_import
from annotation.models import Judgment
from completions.access import STUDY_ADMINS, WRITERS
from llm.models import Run
from tests.factories import RaterFactory, RunFactory, StudyFactory

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).parents[1] / "annotation" / "samples"
MINIMAL = [
    {"context_id": "q1", "system_a": "m1", "system_b": "m2", "judge": "u1", "winner": "a"},
    {"context_id": "q1", "system_a": "m2", "system_b": "m3", "judge": "u1", "winner": "tie"},
    {
        "context_id": "q2",
        "system_a": "m1",
        "system_b": "m3",
        "judge": "gpt",
        "winner": "b",
        "judge_kind": "llm",
        "strength": 4,
        "submitted_at": "2026-01-02T03:04:05Z",
    },
]


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()  # throttling counters and leaderboard caches
    yield
    cache.clear()


def _jsonl(rows) -> io.BytesIO:
    data = io.BytesIO("".join(json.dumps(r) + "\n" for r in rows).encode())
    data.name = "judgments.jsonl"
    return data


def _study_admin(username: str, *studies) -> User:
    user = User.objects.create_user(username, password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    for study in studies:
        study.admins.add(user)
    return user


@pytest.fixture
def world(tmp_path):
    study = StudyFactory(slug="mine")
    other = StudyFactory(slug="theirs")
    path = tmp_path / "in.jsonl"
    path.write_bytes(_jsonl(MINIMAL).getvalue())
    judgments_import(study=study, path=path)
    judgments_import(study=other, path=path)
    admin = _study_admin("admin", study)
    _study_admin("other-admin", other)
    RunFactory(study=study, kind="judge")
    return study, admin


def _endpoints(slug: str) -> list[tuple[str, str]]:
    return [
        ("get", reverse("api:studies")),
        ("get", reverse("api:study", args=[slug])),
        ("get", reverse("api:contexts", args=[slug])),
        ("get", reverse("api:systems", args=[slug])),
        ("get", reverse("api:completions", args=[slug])),
        ("get", reverse("api:judgments", args=[slug])),
        ("get", reverse("api:leaderboard", args=[slug])),
        ("get", reverse("api:snapshots", args=[slug])),
        ("get", reverse("api:agreement", args=[slug])),
        ("post", reverse("api:imports", args=[slug])),
        ("get", reverse("api:llm-runs", args=[slug])),
        ("post", reverse("api:llm-runs", args=[slug])),
        ("get", reverse("api:llm-run", args=[slug, _run_id(slug)])),
        ("post", reverse("api:llm-launch", args=[slug, _run_id(slug)])),
        ("post", reverse("api:llm-cancel", args=[slug, _run_id(slug)])),
        ("get", reverse("api:schema")),
        ("get", reverse("api:docs")),
    ]


def _run_id(slug: str) -> int:
    run = Run.objects.filter(study__slug=slug).first()
    return run.pk if run else 0


def _call(client: APIClient, method: str, url: str):
    if method == "post" and "/llm-runs/" in url:
        return client.post(url, {"kind": "nope", "endpoints": ["none"]}, format="json")
    if method == "post":
        return client.post(url, {"kind": "judgments", "file": _jsonl(MINIMAL)}, format="multipart")
    return client.get(url)


def _as(role: str, study) -> APIClient:
    client = APIClient()
    if role == "anonymous":
        return client
    if role == "rater":
        rater = RaterFactory(study=study)
        client.cookies[RATER_COOKIE] = rater_cookie_value([rater.token])  # as a rater's browser
        return client
    user = User.objects.create_user(role, password="pw", is_staff=role == "staff-no-role")
    if role == "writer":
        user.groups.add(Group.objects.get_or_create(name=WRITERS)[0])
    client.force_authenticate(user)
    return client


@pytest.mark.parametrize("role", ["anonymous", "rater", "writer", "no-role", "staff-no-role"])
def test_everyone_but_study_admins_is_refused_everywhere(world, role):
    study, _ = world
    client = _as(role, study)
    for method, url in _endpoints(study.slug):
        response = _call(client, method, url)
        assert response.status_code in (401, 403), (role, url, response.status_code)
        assert study.slug.encode() not in response.content or url.endswith("/docs/")
    assert Judgment.objects.filter(study=study).count() == len(MINIMAL)


def test_an_admin_of_another_study_cannot_read_or_write_this_one(world):
    study, _ = world
    client = APIClient()
    client.force_authenticate(User.objects.get(username="other-admin"))
    for method, url in _endpoints(study.slug):
        response = _call(client, method, url)
        if url.endswith(("/api/studies/", "/schema/", "/docs/")):
            assert response.status_code == 200, url
            assert b'"mine"' not in response.content, url
        else:
            assert response.status_code == 403, (url, response.status_code)
    # Their own study is theirs.
    assert client.get(reverse("api:judgments", args=["theirs"])).status_code == 200


@pytest.mark.parametrize("who", ["study-admin", "superuser", "token"])
def test_a_study_admin_reaches_every_endpoint(world, who):
    study, admin = world
    client = APIClient()
    if who == "superuser":
        client.force_authenticate(User.objects.create_superuser("root", password="pw"))
    elif who == "token":
        out = io.StringIO()
        call_command("api_token", "admin", stdout=out)
        client.credentials(HTTP_AUTHORIZATION=f"Token {out.getvalue().strip()}")
    else:
        client.force_authenticate(admin)
    for method, url in _endpoints(study.slug):
        response = _call(client, method, url)
        # Reached: 2xx, or the endpoint's own answer to the request (400 bad run, 409 state).
        assert response.status_code in (200, 201, 202, 400), (url, response.status_code)


def test_the_session_login_of_a_study_admin_works_and_csrf_protects_imports(world):
    study, admin = world
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(admin)
    assert client.get(reverse("api:judgments", args=[study.slug])).status_code == 200
    url = reverse("api:imports", args=[study.slug])
    refused = client.post(url, {"kind": "judgments", "file": _jsonl(MINIMAL)}, format="multipart")
    assert refused.status_code == 403 and b"CSRF" in refused.content


@pytest.fixture
def admin_api(world):
    study, admin = world
    client = APIClient()
    client.force_authenticate(admin)
    return study, client


def test_judgments_come_in_the_contract_format_with_filters_and_cursor_pages(admin_api):
    study, client = admin_api
    url = reverse("api:judgments", args=[study.slug])
    body = client.get(url, {"page_size": 2}).json()
    assert len(body["results"]) == 2 and body["next"]
    rest = client.get(body["next"]).json()
    rows = body["results"] + rest["results"]
    assert len(rows) == 3 and rest["next"] is None
    assert all(r["judge"] != "u1" for r in rows)  # pseudonyms, never the file's id
    assert {r["submitted_at"] for r in rows} == {None, "2026-01-02T03:04:05Z"}
    llm = client.get(url, {"judge_kind": "llm"}).json()["results"]
    assert [(r["judge"], r["strength"], r["strength_max"]) for r in llm] == [("gpt", 4, 5)]
    assert len(client.get(url, {"system": "m3"}).json()["results"]) == 2
    human = [r for r in rows if r["judge_kind"] == "human"]
    by_rater = client.get(url, {"rater": human[0]["judge"]}).json()["results"]
    assert len(by_rater) == 2
    assert client.get(url, {"quality_check": "true"}).json()["results"] == []
    assert len(client.get(url, {"excluded": "false"}).json()["results"]) == 3
    after = client.get(url, {"submitted_after": "2026-01-01T00:00:00Z"}).json()["results"]
    assert [r["judge"] for r in after] == ["gpt"]
    # ISO 8601 allows an offset PostgreSQL refuses: read in UTC, never a server error.
    far = client.get(url, {"submitted_after": "2026-01-02T23:00:00+20:02"})
    assert far.status_code == 200 and [r["judge"] for r in far.json()["results"]] == ["gpt"]
    assert client.get(url, {"judge_kind": "robot"}).status_code == 400


def test_the_schema_lists_every_judgment_filter_with_its_type(admin_api):
    _, client = admin_api
    schema = client.get("/api/schema/", {"format": "json"}).json()
    get = schema["paths"]["/api/studies/{slug}/judgments/"]["get"]
    params = {p["name"]: p for p in get["parameters"] if p["in"] == "query"}
    expected = {
        "judge_kind": "string", "rater": "string", "quality_check": "boolean",
        "excluded": "boolean", "submitted_after": "string", "submitted_before": "string",
        "system": "string", "cohort": "string",
    }  # fmt: skip
    assert {name: params[name]["schema"]["type"] for name in expected} == expected
    assert params["judge_kind"]["schema"]["enum"] == ["human", "llm"]
    assert params["submitted_after"]["schema"]["format"] == "date-time"
    assert all(params[name]["description"] for name in expected)


def test_a_filter_value_of_the_wrong_kind_is_refused_saying_which(admin_api):
    study, client = admin_api
    url = reverse("api:judgments", args=[study.slug])
    refused = client.get(url, {"submitted_after": "yesterday", "excluded": "maybe"})
    assert refused.status_code == 400
    assert {"submitted_after", "excluded"} <= set(refused.json())


def test_completions_show_text_unknown_placeholders_to_admins(admin_api):
    study, client = admin_api
    rows = client.get(reverse("api:completions", args=[study.slug])).json()["results"]
    assert rows and all(r["text_unknown"] is True and r["text"] is None for r in rows)
    contexts = client.get(reverse("api:contexts", args=[study.slug])).json()["results"]
    assert {c["id"] for c in contexts} == {"q1", "q2"}


def test_the_leaderboard_agreement_and_snapshots(admin_api):
    study, client = admin_api
    from ranking.services import snapshot_refit_study

    snapshot_refit_study(study_id=study.pk, trigger="manual")  # the API reads what it stored
    board = client.get(reverse("api:leaderboard", args=[study.slug]), {"judges": "all"}).json()
    assert {s["system"] for s in board["systems"]} == {"m1", "m2", "m3"}
    agreement = client.get(reverse("api:agreement", args=[study.slug])).json()
    assert "fleiss_kappa" in agreement and "human_llm_agreement" in agreement
    snapshots = client.get(reverse("api:snapshots", args=[study.slug])).json()["results"]
    assert {s["judges"] for s in snapshots} == {"human", "llm", "all"}


def test_an_upload_returns_the_report_and_a_bad_file_changes_nothing(admin_api):
    study, client = admin_api
    url = reverse("api:imports", args=[study.slug])
    with open(SAMPLES / "arena_battles.json", "rb") as fh:
        response = client.post(
            url, {"kind": "judgments", "format": "arena", "file": fh}, format="multipart"
        )
    assert response.status_code == 201
    n = len(json.loads((SAMPLES / "arena_battles.json").read_text()))
    assert response.json()["report"]["created"] == n
    before = Judgment.objects.count()
    bad = _jsonl([MINIMAL[0] | {"context_id": "new", "judge": "z"}, {"winner": "a"}])
    refused = client.post(url, {"kind": "judgments", "file": bad}, format="multipart")
    assert refused.status_code == 400
    assert refused.json()["detail"].startswith("import refused, nothing changed: line 2:")
    assert Judgment.objects.count() == before
    wrong = client.post(url, {"kind": "contexts", "format": "arena", "file": _jsonl([])})
    assert wrong.status_code == 400
    latin = io.BytesIO("Ça".encode("latin-1"))
    latin.name = "latin.jsonl"
    undecodable = client.post(url, {"kind": "contexts", "file": latin}, format="multipart")
    detail = undecodable.json()["detail"]
    assert undecodable.status_code == 400 and "not UTF-8 text" in detail
    assert tempfile.gettempdir() not in detail  # never a path on the server


def test_the_api_is_throttled(admin_api, settings):
    study, client = admin_api
    from rest_framework.throttling import UserRateThrottle

    rates = {"user": "3/minute", "anon": "3/minute"}
    original = UserRateThrottle.THROTTLE_RATES
    UserRateThrottle.THROTTLE_RATES = rates
    try:
        url = reverse("api:systems", args=[study.slug])
        codes = [client.get(url).status_code for _ in range(5)]
    finally:
        UserRateThrottle.THROTTLE_RATES = original
    assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]


def test_the_docs_page_loads_swagger_from_the_sidecar_without_inline_code(admin_api):
    study, client = admin_api
    html = client.get(reverse("api:docs")).content.decode()
    assert "<style" not in html and "style=" not in html and "onload=" not in html
    scripts = [line.strip() for line in html.splitlines() if "<script" in line]
    assert len(scripts) == 3 and all('src="' in s and "http" not in s for s in scripts)
    assert "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    init = client.get(reverse("api:docs") + "?script=")
    assert init.status_code == 200 and b"SwaggerUIBundle" in init.content
    assert "javascript" in init["Content-Type"]
    schema = client.get(reverse("api:schema"), {"format": "json"})
    assert schema.json()["openapi"].startswith("3.1")

"""Text that cannot hurt: NUL characters, deep nesting and oversized texts on every public entry.

Each answer is a 400 (or the form again) with a clear message, never a 500, and a refused
oversized text is never sent back whole.
"""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Judgment, Rater
from completions.importers import MAX_DEPTH, ImportFileError, check_text
from completions.models import DialogueContext
from core.text_guard import NUL_MESSAGE
from studio.models import ImportJob
from tests.factories import StudyFactory
from tests.factories.annotation import build_study
from tests.factories.writing import build_writing_study
from tests.writing.test_views import _enter, _page
from writing.models import Writing
from writing.services import writing_settings

pytestmark = pytest.mark.django_db
DEEP = "[" * 100_000 + "]" * 100_000
BIG = "x" * 1_500_000


def _refused_with_nul(response) -> None:
    assert response.status_code == 400
    assert "NUL character" in response.content.decode()


def test_a_nul_in_the_rater_and_writer_links_is_refused_clearly():
    rater_study = build_study()
    _refused_with_nul(Client().get(f"/r/{rater_study.invite_token}/?PROLIFIC_PID=a%00b"))
    writer_study = build_writing_study(n_contexts=1)
    invite = writing_settings(writer_study).invite_token
    _refused_with_nul(Client().get(f"/w/{invite}/?PROLIFIC_PID=a%00b&STUDY_ID=s"))
    _refused_with_nul(Client().get(f"/w/{invite}/?na%00me=x"))  # in a name too
    assert not Rater.objects.exists()


def test_a_nul_in_a_form_is_refused_and_nothing_is_stored(client):
    study = build_writing_study(n_contexts=1)
    invite = _enter(client, study)
    _page_, submit = _page(client, invite)
    token = submit.split("/")[3]
    _refused_with_nul(client.post(f"/w/t/{token}/save/", {"text": "half\x00a reply"}))
    _refused_with_nul(client.post(submit, {"text": "a reply\x00"}))
    assert Writing.objects.get().text == ""
    rater_study = build_study()
    rater = Client()
    rater.get(f"/r/{rater_study.invite_token}/")
    _refused_with_nul(rater.post(f"/r/{rater_study.invite_token}/consent/", {"agree": "o\x00n"}))


@pytest.fixture
def api():
    study = StudyFactory(slug="guarded")
    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("root", password="pw"))
    return study, client


def test_a_nul_or_an_oversized_json_body_to_the_api_is_a_400(api, settings):
    study, client = api
    url = reverse("api:llm-runs", args=[study.slug])
    nul = client.post(
        url, '{"kind": "judge\\u0000", "endpoints": ["x"]}', content_type="application/json"
    )
    assert nul.status_code == 400 and nul.json() == {"detail": NUL_MESSAGE}
    # A backslash followed by "u0000" is text, not a NUL: it reaches the view.
    text = client.post(
        url, '{"kind": "a\\\\u0000", "endpoints": ["x"]}', content_type="application/json"
    )
    assert text.status_code != 500 and text.json() != {"detail": NUL_MESSAGE}
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
    big = client.post(
        url, json.dumps({"kind": BIG, "endpoints": []}), content_type="application/json"
    )
    assert big.status_code == 400 and "larger than 1024 KB" in big.json()["detail"]
    assert len(big.content) < 1000  # not echoed


def _upload(client, study, body: bytes, kind: str = "judgments", fmt: str = "jsonl"):
    url = reverse("api:imports", args=[study.slug])
    data = {"kind": kind, "format": fmt, "file": io.BytesIO(body)}
    data["file"].name = "upload"
    return client.post(url, data, format="multipart")


GOOD = {"context_id": "q1", "system_a": "m1", "system_b": "m2", "judge": "u1", "winner": "a"}


@pytest.mark.parametrize(
    ("body", "fmt", "message"),
    [
        (json.dumps(GOOD) + "\n" + json.dumps(GOOD | {"judge": "u\x002"}), "jsonl", "line 2: "),
        (json.dumps(GOOD) + '\n{"context_id": "q\\u0000"}', "jsonl", "line 2: "),
        (json.dumps(GOOD | {"deep": json.loads("[" * 60 + "]" * 60)}), "jsonl", None),
        (json.dumps(GOOD) + "\n" + '{"a": ' + DEEP + "}", "jsonl", "line 2: nested too deep"),
        ("[" + DEEP + "]", "arena", "line 1: nested too deep"),
        ("context_id,system_a,system_b,judge,winner\nq1,m1,m2,u\x001,a\n", "csv", "line 2: "),
    ],
)
def test_api_imports_refuse_nul_and_deep_nesting_with_the_line(api, body, fmt, message):
    study, client = api
    response = _upload(client, study, body.encode(), fmt=fmt)
    if message is None:  # 60 levels: within the limit, imported
        assert response.status_code == 201, response.content[:300]
        return
    assert response.status_code == 400, response.content[:300]
    detail = response.json()["detail"]
    assert detail.startswith(f"import refused, nothing changed: {message}"), detail
    assert "NUL" in detail or "nested too deep" in detail
    assert not Judgment.objects.filter(study=study).exists()


def test_a_contexts_import_with_deep_json_or_a_nul_is_refused(api):
    study, client = api
    deep = _upload(client, study, ('{"id": "c1", "turns": ' + DEEP + "}\n").encode(), "contexts")
    assert deep.status_code == 400 and "line 1: nested too deep" in deep.json()["detail"]
    turns = [{"speaker": "seeker", "text": "hello\x00"}]
    nul = _upload(client, study, json.dumps({"id": "c1", "turns": turns}).encode(), "contexts")
    assert nul.status_code == 400 and "line 1: contains a NUL" in nul.json()["detail"]
    assert not DialogueContext.objects.filter(study=study).exists()


def test_a_studio_upload_of_deep_json_ends_failed_with_the_line(django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile

    study = StudyFactory(slug="studio-deep")
    admin = Client()
    admin.force_login(User.objects.create_superuser("boss", password="pw"))
    with django_capture_on_commit_callbacks(execute=True):
        admin.post(
            reverse("studio:material", args=[study.slug]),
            {"kind": "judgments", "file": SimpleUploadedFile("deep.jsonl", DEEP.encode())},
        )
    job = ImportJob.objects.get(study=study)
    assert job.status == "failed" and "line 1: nested too deep" in job.error


def test_check_text_names_the_line_and_leaves_escaped_backslashes_alone():
    check_text('{"text": "a \\\\u0000 is six characters"}')
    check_text("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    check_text('{"text": "' + "[" * 200 + '"}')  # brackets inside a string do not nest
    with pytest.raises(ImportFileError, match="line 3: nested too deep"):
        check_text("[\n[\n" + "[" * MAX_DEPTH, first_line=1)
    with pytest.raises(ImportFileError, match="line 8: contains a NUL"):
        check_text('{"a": "\\u0000"}', first_line=8)


def test_a_huge_writer_text_is_refused_and_not_sent_back(client):
    study = build_writing_study(n_contexts=1)
    invite = _enter(client, study)
    _page_, submit = _page(client, invite)
    token = submit.split("/")[3]
    saved = client.post(f"/w/t/{token}/save/", {"text": BIG})
    assert saved.status_code == 400 and saved.json()["saved"] is False
    assert "1,500,000 characters" in saved.json()["error"] and len(saved.content) < 500
    page = client.post(submit, {"text": BIG}, follow=True)  # refused: back to the writing page
    html = page.content.decode()
    assert [status for _, status in page.redirect_chain] == [302]
    assert page.status_code == 200 and "1,500,000 characters" in html
    assert len(page.content) < 50_000  # the limit's worth of it, not 1.5 MB
    writing = Writing.objects.get()
    limit = writing.writer.study.writing_settings.max_chars
    assert writing.status == "draft" and writing.text == BIG[:limit]  # the limit's worth kept


@pytest.mark.parametrize(
    "path",
    [
        "/r/{rater}%00/",
        "/r/{rater}%00/consent/",
        "/r/{rater}%00/qualify/",
        "/r/{rater}%00/break/",
        "/r/{rater}%00/support/",
        "/w/{writer}%00/",
        "/w/t/ab%00/skip/",
        "/studio/a%00b/",
    ],
)
def test_a_nul_in_the_path_is_refused_clearly_for_anyone(path):
    rater_study = build_study()
    writer_study = build_writing_study(n_contexts=1)
    url = path.format(
        rater=rater_study.invite_token, writer=writing_settings(writer_study).invite_token
    )
    _refused_with_nul(Client().get(url))
    _refused_with_nul(Client().post(url, {"agree": "on"}))
    assert not Rater.objects.exists()

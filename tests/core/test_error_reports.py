"""Sentry error reports: on only with SENTRY_DSN, and no rater identity in what would be sent.

The events are the ones sentry-sdk's own Django integration builds, caught at its transport
(nothing leaves the machine)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sentry_sdk
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client, RequestFactory
from django.urls import reverse
from sentry_sdk.transport import Transport

from annotation.models import Assignment, Rater
from core.error_reports import FILTERED, scrub, sentry_init
from tests.factories.annotation import build_study

ROOT = Path(__file__).resolve().parents[2]
DSN = "https://public@sentry.invalid/1"
CSRF = "c" * 32
NAME = " ".join(["Jane", "Example"])
PID = "-".join(["PID", "sentry", "42"])


class _Captured(Transport):
    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.events: list[dict] = []

    def capture_envelope(self, envelope) -> None:
        for item in envelope.items:
            if item.type in ("event", "transaction"):
                self.events.append(item.payload.json)


@pytest.fixture
def sentry_events():
    transport = _Captured()
    sentry_init(dsn=DSN, environment="test", transport=transport)
    yield transport.events
    sentry_sdk.get_client().close()
    sentry_sdk.get_global_scope().set_client(None)  # back to no reporting for the next tests


@pytest.mark.django_db
def test_an_error_on_the_rater_path_is_reported_without_who_the_rater_is(
    sentry_events, monkeypatch
):
    study = build_study(quality_check_rate=0)
    client = Client(raise_request_exception=False)
    invite = study.invite_token
    entry = reverse("annotation:entry", kwargs={"invite_token": invite})
    client.get(entry + f"?PROLIFIC_PID={PID}&STUDY_ID=S-sentry&SESSION_ID=X-sentry")
    client.post(reverse("annotation:consent", kwargs={"invite_token": invite}), {"agree": "on"})
    rater = Rater.objects.get(study=study, external_id=PID)
    client.get(reverse("annotation:item", kwargs={"invite_token": invite}))
    token = Assignment.objects.get(rater=rater, status="leased").token
    submit = reverse("annotation:submit", kwargs={"token": token})
    cookie = client.cookies["heart_rater"].value

    def broken(**kwargs):
        logging.getLogger("annotation").warning(
            "slow submit %s for %s (came from %s?PROLIFIC_PID=%s)",
            submit,
            kwargs["rater"].pseudonym,
            entry,
            PID,
        )
        raise RuntimeError(f"the database went away during {submit}")

    monkeypatch.setattr("annotation.views.judgment_submit_and_next", broken)
    # Built at run time: the reported stack frames carry this file's source lines.
    rationale = " ".join(["I am", NAME, "from Leeds and B reminded me of my divorce."])
    # Through Django's WSGI application, as gunicorn calls it (sentry-sdk hooks in there).
    environ = (
        RequestFactory()
        .post(
            submit,
            {"choice": "2", "rationale": rationale},
            HTTP_HX_REQUEST="true",
            HTTP_COOKIE=f"heart_rater={cookie}; csrftoken={CSRF}",
            HTTP_X_CSRFTOKEN=CSRF,
        )
        .environ
    )
    statuses = []
    # As Django's test client does: the test's transaction stays open across the request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        app = get_wsgi_application()
        b"".join(app(environ, lambda status, headers: statuses.append(status)))
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    assert statuses[0].startswith("500")
    sentry_sdk.flush()

    errors = [e for e in sentry_events if e.get("exception")]
    assert len(errors) == 1
    event = errors[0]
    assert event["exception"]["values"][-1]["type"] == "RuntimeError"
    assert event["transaction"] == "/r/a/{token}/submit/"
    assert event["request"]["url"].endswith(f"/r/a/{FILTERED}/submit/")
    sent = json.dumps(event)
    for identity in (
        token,
        invite,
        rater.token,
        rater.pseudonym,
        cookie,
        PID,
        "S-sentry",
        "X-sentry",
        NAME,
    ):
        assert identity not in sent, identity
    assert "user" not in event or not event["user"].get("ip_address")
    crumbs = [c.get("message", "") for c in event.get("breadcrumbs", {}).get("values", [])]
    assert any("slow submit" in c and FILTERED in c for c in crumbs)


def test_scrub_hides_tokens_prolific_ids_and_the_rater_cookie_wherever_they_are():
    event = {
        "request": {"url": "https://h/r/AbC123/?PROLIFIC_PID=p1&STUDY_ID=s1&SESSION_ID=x1"},
        "message": "writer /w/t/tok-9/save/ and /w/inv-3/write/, review /writers/t/tok-7/accept/",
        "extra": {"headers": ["Cookie: heart_rater=signed:value; csrftoken=c"]},
        "tags": [("url", "/labelling/lab-tok/"), ("page", "/studio/s/raters/r-pseudo1/")],
        "transaction": "/r/a/{token}/submit/",
        "contexts": {"rater": {"pseudonym": "opaque-1", "external_id": "panel-9", "n": 3}},
    }
    text = json.dumps(scrub(event))
    for secret in ("AbC123", "p1&", "s1&", "x1", "tok-9", "inv-3", "tok-7", "signed:value"):
        assert secret not in text, secret
    for secret in ("lab-tok", "r-pseudo1", "opaque-1", "panel-9"):
        assert secret not in text, secret
    assert '"n": 3' in text  # what names no one stays
    assert "/r/a/{token}/submit/" in text  # a URL pattern names no one: kept for grouping


def _sentry_active(extra_env: dict) -> str:
    env = {k: v for k, v in os.environ.items() if k != "SENTRY_DSN"}
    env.update(DJANGO_SETTINGS_MODULE="heart_site.settings", **extra_env)
    code = (
        "import django, sentry_sdk; django.setup(); c = sentry_sdk.get_client(); "
        "d = c.options.get('data_collection') or {}; "
        "print(c.is_active(), d.get('user_info'), d.get('cookies'), d.get('http_bodies'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_sentry_is_on_only_when_sentry_dsn_is_set():
    assert _sentry_active({}).startswith("False")
    assert _sentry_active({"SENTRY_DSN": DSN}) == "True False {'mode': 'off'} []"

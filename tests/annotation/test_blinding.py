"""Blinding: nothing a rater can receive names a system, family or writer, or leaks an id."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Rater
from annotation.quality import quality_items_seed_from_rubric
from tests.factories.annotation import build_study, forbidden_strings

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


class RecordingClient(Client):
    """A test client that keeps every response it receives, headers included."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen: list = []

    def request(self, **request):
        response = super().request(**request)
        self.seen.append(response)
        return response


def _text(response) -> str:
    headers = "\n".join(f"{k}: {v}" for k, v in response.items())
    cookies = "\n".join(str(c) for c in response.cookies.values())
    return f"{response.status_code}\n{headers}\n{cookies}\n{response.content.decode()}"


def _walk_the_whole_journey(client: RecordingClient, study) -> Rater:
    url = lambda name: reverse(f"annotation:{name}", args=[study.invite_token])  # noqa: E731
    client.get(url("entry") + "?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X")
    client.get(url("consent"))
    client.post(url("consent"), {})  # the consent error page
    client.post(url("consent"), {"agree": "on"})
    client.get(url("instructions"))
    client.get(url("done"))  # too early: redirected
    client.get(url("item"))
    rater = Rater.objects.get(study=study)
    for step in range(100):
        current = Assignment.objects.filter(rater=rater, status="leased").first()
        if current is None:
            break
        submit = reverse("annotation:submit", args=[current.token])
        client.get(url("item"))  # full page of this item
        client.post(submit, {}, **HTMX)  # validation error fragment
        client.post(submit, {"choice": "2", "axis_E": "A", "rationale": "kind"}, **HTMX)
        client.post(submit, {"choice": "2"}, **HTMX)  # replay
        if step == 1:
            client.post(submit, {"choice": "2"})  # plain (non-htmx) replay: a redirect
    client.post(reverse("annotation:submit", args=["not-a-token"]), {"choice": "1"})  # 404
    client.get(url("done"))
    rater.refresh_from_db()
    return rater


def test_no_rater_facing_response_names_a_system_family_or_writer():
    study = build_study(
        n_contexts=3,
        quality_check_rate=0.25,
        items_per_rater=5,
        show_rubric=True,
        axis_marks=True,
        prolific_redirect_url="https://app.prolific.com/submissions/complete",
    )
    quality_items_seed_from_rubric(study=study)
    client = RecordingClient()
    rater = _walk_the_whole_journey(client, study)
    assert rater.finished_at is not None
    kinds = {a.quality_item_id is None for a in Assignment.objects.filter(rater=rater)}
    assert kinds == {True, False}  # the journey included real items and quality checks
    statuses = {r.status_code for r in client.seen}
    assert {200, 302, 404} <= statuses
    forbidden = forbidden_strings(study)
    assert "zorblax-gpt-9" in forbidden and "writer_wilhelmina_q" in forbidden
    for response in client.seen:
        text = _text(response).lower()
        for word in forbidden:
            assert word.lower() not in text, f"{word!r} leaked in {response.status_code}"


def test_rater_pages_carry_no_database_ids_only_opaque_tokens():
    study = build_study(n_contexts=2, quality_check_rate=0.25, items_per_rater=4)
    quality_items_seed_from_rubric(study=study)
    client = RecordingClient()
    rater = _walk_the_whole_journey(client, study)
    tokens = set(Assignment.objects.filter(rater=rater).values_list("token", flat=True))
    for response in client.seen:
        html = response.content.decode()
        # Any path the page links to or posts to holds only the invite or an assignment token.
        for path in re.findall(r'(?:href|action|hx-post|hx-get)="([^"]+)"', html):
            if path.startswith("/r/a/"):
                assert path.split("/")[3] in tokens
            elif path.startswith("/r/"):
                assert path.split("/")[2] == study.invite_token
        assert not re.search(
            r"(pair|completion|context|system|rater)[_-]?(id|pk)\b", html, re.IGNORECASE
        )
        assert not re.search(r'data-[a-z-]*id="', html)


def _add_form_writers(study, n: int = 3) -> list[str]:
    """Writers who wrote through the writer form, accepted and paired: their names are secret."""
    from annotation.services.pairs import pairs_design
    from writing.models import Writer
    from writing.services import (
        writer_enter,
        writing_accept,
        writing_contexts_open,
        writing_next,
        writing_settings,
        writing_submit,
    )

    settings = writing_settings(study)
    settings.enabled = True
    settings.save()
    writing_contexts_open(study=study)
    text = "That sounds so hard, and it makes sense you feel lost. What would help most today?"
    for index in range(n):
        writer = writer_enter(study=study, external_id=f"WRITER-PID-{index}")
        while (writing := writing_next(writer=writer)) is not None:
            result = writing_submit(writing=writing, text=text, raw_behaviour={})
            writing_accept(writing=result.writing)
    pairs_design(study=study)
    secret = []
    for writer in Writer.objects.filter(study=study):
        secret += [writer.pseudonym, writer.token, writer.external_id]
        secret += list(writer.writings.values_list("token", flat=True))
    return secret


def test_no_rater_facing_response_names_a_writer_pseudonym():
    study = build_study(n_contexts=2, quality_check_rate=0, items_per_rater=12)
    writer_secrets = _add_form_writers(study)
    forbidden = forbidden_strings(study) + writer_secrets
    assert any(word.startswith("writer-") for word in forbidden)
    client = RecordingClient()
    rater = _walk_the_whole_journey(client, study)
    judged = Assignment.objects.filter(rater=rater, status="submitted")
    from django.db.models import Q

    by_writer = Q(pair__completion_a__system__writer__isnull=False) | Q(
        pair__completion_b__system__writer__isnull=False
    )
    assert judged.filter(by_writer).exists()  # the rater judged form writers' texts
    for response in client.seen:
        text = _text(response).lower()
        for word in forbidden:
            assert word.lower() not in text, f"{word!r} leaked in {response.status_code}"

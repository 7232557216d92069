"""50 writers at once through the real HTTP views on PostgreSQL: exactly N texts per context."""

from __future__ import annotations

import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.factories.writing import GOOD_TEXT, behaviour, build_writing_study
from writing.models import Writing
from writing.services import writing_settings

pytestmark = pytest.mark.integration

N_WRITERS = 50
THREADS = 25  # below PostgreSQL's 100 connections, which other test runs share
PER_CONTEXT = 3
N_CONTEXTS = 8
SUBMIT = re.compile(r'action="(/w/t/([^/"]+)/submit/)"')
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _writer_session(base_url: str, invite: str, index: int) -> dict:
    """One writer: Prolific entry, consent, then write/submit until there is nothing left."""
    submitted: list[str] = []
    with httpx.Client(base_url=base_url, timeout=60, follow_redirects=True) as client:
        client.get(f"/w/{invite}/?PROLIFIC_PID=W{index:03d}&STUDY_ID=S&SESSION_ID=X{index}")
        consent = client.get(f"/w/{invite}/consent/")
        token = CSRF_INPUT.search(consent.text).group(1)
        client.post(f"/w/{invite}/consent/", data={"agree": "on", "csrfmiddlewaretoken": token})
        for _ in range(N_CONTEXTS + 1):
            page = client.get(f"/w/{invite}/write/")
            match = SUBMIT.search(page.text)
            if match is None:
                assert "completion code" in page.text.lower()
                break
            url, writing_token = match.groups()
            data = {
                "text": GOOD_TEXT,
                "csrfmiddlewaretoken": CSRF_INPUT.search(page.text).group(1),
                **behaviour(),
            }
            repeats = 2 if index % 4 == 0 else 1  # some double-submits of the same POST
            for _ in range(repeats):
                assert client.post(url, data=data).status_code == 200
            submitted.append(writing_token)
    return {"index": index, "submitted": submitted}


def test_50_concurrent_writers_leave_exactly_n_texts_per_context(
    postgres, transactional_db, live_server
):
    study = build_writing_study(n_contexts=N_CONTEXTS, per_context=PER_CONTEXT)
    invite = writing_settings(study).invite_token
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        results = list(
            pool.map(lambda i: _writer_session(live_server.url, invite, i), range(N_WRITERS))
        )
    written = Writing.objects.filter(study=study, status="pending")
    per_context = Counter(written.values_list("context_id", flat=True))
    assert len(per_context) == N_CONTEXTS
    assert set(per_context.values()) == {PER_CONTEXT}
    # Never the same writer twice on a context.
    assert max(Counter(written.values_list("writer_id", "context_id")).values()) == 1
    # Every submit the writers saw accepted is stored, once.
    tokens = [t for r in results for t in r["submitted"]]
    assert len(tokens) == len(set(tokens)) == N_CONTEXTS * PER_CONTEXT
    assert set(written.values_list("token", flat=True)) == set(tokens)
    assert not Writing.objects.filter(study=study, status="draft").exists()

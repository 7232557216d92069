"""200 raters at once through the real HTTP views on PostgreSQL: nothing lost, nothing doubled."""

from __future__ import annotations

import random
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from annotation.models import Assignment, Judgment, Pair
from tests.factories.annotation import build_study

pytestmark = pytest.mark.integration

N_RATERS = 200
THREADS = 40  # below PostgreSQL's 100 connections, which other test runs share
QUOTA = 5
SYSTEMS = [(f"sys-{i}", f"fam-{i}", "model") for i in range(5)]  # 10 pairs per context
SUBMIT = re.compile(r'action="(/r/a/([^/"]+)/submit/)"')
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _rater_session(base_url: str, invite: str, index: int) -> dict:
    """One rater: entry via a Prolific link, consent, then get-item/submit until done."""
    rng = random.Random(index)
    accepted: list[str] = []
    posts = 0
    with httpx.Client(base_url=base_url, timeout=60) as client:
        pid = f"PID{index:04d}"
        client.get(f"/r/{invite}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X{index}")
        consent = client.get(f"/r/{invite}/consent/")
        token = CSRF_INPUT.search(consent.text).group(1)
        client.post(f"/r/{invite}/consent/", data={"agree": "on", "csrfmiddlewaretoken": token})
        page = client.get(f"/r/{invite}/item/", follow_redirects=True)
        headers = {"HX-Request": "true", "X-CSRFToken": client.cookies["csrftoken"]}
        for _ in range(20):
            match = SUBMIT.search(page.text)
            if match is None:
                break  # the done page
            url, assignment_token = match.groups()
            data = {"choice": str(rng.randint(1, 5))}
            repeats = 2 if rng.random() < 0.3 else 1  # some double-submits of the same POST
            for _ in range(repeats):
                page = client.post(url, data=data, headers=headers)
                posts += 1
                assert page.status_code == 200, page.status_code
            accepted.append(assignment_token)
            if "HX-Redirect" in page.headers:
                page = client.get(page.headers["HX-Redirect"])
        # A code only for work done; a rater who found every pair full is asked to return.
        if accepted:
            assert "completion code" in page.text.lower()
        else:
            assert "no items are available" in page.text.lower()
            assert "completion code" not in page.text.lower()
    return {"pid": pid, "accepted": accepted, "posts": posts}


# Five times in a row: a race that shows once in ten runs (a deadlock between two claims did)
# must fail CI, not pass it by luck.
@pytest.mark.parametrize("run", range(5))
def test_200_concurrent_raters_fill_every_pair_exactly(
    run, postgres, transactional_db, live_server
):
    study = build_study(
        n_contexts=4, quota=QUOTA, systems=SYSTEMS, items_per_rater=3, quality_check_rate=0
    )
    assert Pair.objects.filter(study=study).count() == 40
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        results = list(
            pool.map(
                lambda i: _rater_session(live_server.url, study.invite_token, i), range(N_RATERS)
            )
        )

    # Every pair holds exactly its quota, counted from the Judgment rows and the counter.
    per_pair = Counter(Judgment.objects.filter(study=study).values_list("pair_id", flat=True))
    for pair in Pair.objects.filter(study=study):
        assert per_pair[pair.pk] == pair.quota == pair.n_judgments == QUOTA
    # No rater judged a pair twice.
    rater_pairs = Counter(Judgment.objects.values_list("rater_id", "pair_id"))
    assert max(rater_pairs.values()) == 1
    # No judgment lost: every accepted submit is a stored row; duplicate POSTs stored once.
    accepted = [t for r in results for t in r["accepted"]]
    assert len(accepted) == len(set(accepted)) == 40 * QUOTA
    stored = set(Judgment.objects.values_list("assignment__token", flat=True))
    assert stored == set(accepted)
    assert sum(r["posts"] for r in results) > len(accepted)  # the replays really happened
    assert not Assignment.objects.filter(status="leased").exists()

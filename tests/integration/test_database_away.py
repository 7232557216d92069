"""Raters while PostgreSQL is briefly away: "please try again" (503), never the error page.

A throw-away cluster this test starts itself (tests/servers.py) serves a real gunicorn. Four
raters work through their items the way the item page does (htmx submits; a 503 with
Retry-After is sent again after the wait, as static/js/rater.js does). Part-way through, the
cluster is stopped for a few seconds and started again. No request may get a 500, some must get
the 503 page (the test would prove nothing otherwise), and every answer the server acknowledged
is stored exactly once.
"""

from __future__ import annotations

import re
import threading
import time

import httpx
import pytest

from tests.integration.test_postgres_restart import (
    CSRF_INPUT,
    DATABASE,
    SUBMIT,
    _run,
    cluster,  # noqa: F401  # the module's throw-away PostgreSQL, migrated
    gunicorn,  # noqa: F401
)
from tests.servers import PostgresCluster, wait_for

pytestmark = pytest.mark.integration
RATERS = 4
BUILD_STUDY = (
    "import django; django.setup();"
    "from tests.factories.annotation import build_study;"
    "print(build_study(slug='away', n_contexts=6, quota=4, quality_check_rate=0,"
    " items_per_rater=15, status='open').invite_token)"
)


class Log:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statuses: list[int] = []
        self.acknowledged: list[str] = []
        self.retry_pages: list[str] = []

    def saw(self, response: httpx.Response) -> None:
        with self.lock:
            self.statuses.append(response.status_code)
            if response.status_code == 503:
                self.retry_pages.append(response.text)


def _patiently(log: Log, send) -> httpx.Response:
    """Send; on a 503 wait Retry-After and send the same again (what the page does)."""
    for _ in range(60):
        try:
            response = send()
        except httpx.TransportError:
            time.sleep(1)
            continue
        log.saw(response)
        if response.status_code != 503:
            return response
        assert response.headers.get("Retry-After") == "5"
        time.sleep(1)  # the page waits 5 s; the test need not
    raise AssertionError("still 503 after a minute")


def _rater(base: str, invite: str, index: int, log: Log, started: threading.Event) -> None:
    with httpx.Client(base_url=base, timeout=30, follow_redirects=True) as client:
        _patiently(log, lambda: client.get(f"/r/{invite}/?PROLIFIC_PID=PID{index}&STUDY_ID=S"))
        consent = _patiently(log, lambda: client.get(f"/r/{invite}/consent/"))
        token = CSRF_INPUT.search(consent.text).group(1)
        data = {"agree": "on", "csrfmiddlewaretoken": token}
        _patiently(log, lambda: client.post(f"/r/{invite}/consent/", data=data))
        page = _patiently(log, lambda: client.get(f"/r/{invite}/item/"))
        headers = {"HX-Request": "true", "X-CSRFToken": client.cookies["csrftoken"]}
        while (match := SUBMIT.search(page.text)) is not None:
            url, assignment = match.groups()
            started.set()
            page = _patiently(
                log, lambda u=url: client.post(u, data={"choice": "4"}, headers=headers)
            )
            assert page.status_code == 200, page.status_code
            with log.lock:
                log.acknowledged.append(assignment)
            if "HX-Redirect" in page.headers:
                page = _patiently(log, lambda p=page: client.get(p.headers["HX-Redirect"]))
            time.sleep(0.3)  # a rater reads before answering: the outage lands mid-queue


def _stop(server: PostgresCluster) -> None:
    """A fast shutdown, as an operator's restart or a failover does: every connection is cut,
    mid-request or not, and what was committed stays committed. (The cluster runs with
    synchronous_commit off for speed, so the "immediate" stop of PostgresCluster.stop, a
    crash, could lose commits the server already acknowledged.)"""
    server.pg_ctl("-m", "fast", "-w", "stop")


def _stored(server: PostgresCluster, tokens: list[str]) -> dict[str, int]:
    import psycopg

    with psycopg.connect(server.url(DATABASE)) as conn:
        rows = conn.execute(
            "SELECT a.token, count(j.id) FROM annotation_assignment a"
            " JOIN annotation_judgment j ON j.assignment_id = a.id"
            " WHERE a.token = ANY(%s) GROUP BY a.token",
            [tokens],
        ).fetchall()
    return dict(rows)


def test_raters_get_a_page_that_retries_while_postgresql_is_away(cluster, gunicorn):  # noqa: F811
    invite = _run(cluster.url(DATABASE), "-c", BUILD_STUDY).strip().splitlines()[-1]
    log = Log()
    started = threading.Event()
    raters = [
        threading.Thread(target=_rater, args=(gunicorn, invite, i, log, started))
        for i in range(RATERS)
    ]
    for thread in raters:
        thread.start()
    assert started.wait(60)
    time.sleep(1.5)
    _stop(cluster)
    time.sleep(4)
    cluster.start()
    for thread in raters:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in raters)

    assert 500 not in log.statuses, sorted(set(log.statuses))
    assert log.retry_pages, "no request landed in the outage"
    page = log.retry_pages[0]
    assert "Please try again in a moment" in page and "Something went wrong" not in page
    assert len(log.acknowledged) >= RATERS * 3
    stored = _stored(cluster, log.acknowledged)
    assert stored == {token: 1 for token in log.acknowledged}  # acknowledged == stored, once
    assert wait_for(lambda: httpx.get(gunicorn + "/healthz").status_code == 200, 30)


def test_a_form_sent_while_the_database_is_away_comes_back_to_send_again(cluster, gunicorn):  # noqa: F811
    """Without JavaScript: the consent form comes back as the same form, sent again by
    static/js/retry.js after the wait (or by its button)."""
    invite = (
        _run(cluster.url(DATABASE), "-c", BUILD_STUDY.replace("slug='away'", "slug='away-form'"))
        .strip()
        .splitlines()[-1]
    )
    with httpx.Client(base_url=gunicorn, timeout=30) as client:
        consent = client.get(f"/r/{invite}/consent/", follow_redirects=True)
        token = CSRF_INPUT.search(consent.text).group(1)
        _stop(cluster)
        try:
            away = client.post(
                f"/r/{invite}/consent/", data={"agree": "on", "csrfmiddlewaretoken": token}
            )
            item = client.get(f"/r/{invite}/item/")
        finally:
            cluster.start()
    assert away.status_code == 503 and away.headers["Retry-After"] == "5"
    assert 'id="retry-form"' in away.text and f'action="/r/{invite}/consent/"' in away.text
    assert re.search(r'name="agree" value="on"', away.text)
    assert f'name="csrfmiddlewaretoken" value="{token}"' in away.text
    assert "js/retry.js" in away.text
    assert item.status_code == 503 and '<meta http-equiv="refresh" content="5">' in item.text


def test_a_writer_page_gets_the_same_page_in_the_writers_style(cluster, gunicorn):  # noqa: F811
    _stop(cluster)
    try:
        away = httpx.get(f"{gunicorn}/w/some-invite/", timeout=30)
    finally:
        cluster.start()
    assert away.status_code == 503 and away.headers["Retry-After"] == "5"
    assert "Reply writing study" in away.text and "Please try again in a moment" in away.text
    assert '<meta http-equiv="refresh" content="5">' in away.text

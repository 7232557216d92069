"""`/metrics`: who may read it, and what a scrape shows (read back with prometheus_client's own
parser): request latency per view, the rater round trip without any identity, Celery queue
lengths on the real Redis broker, and LLM run progress."""

from __future__ import annotations

import re
import uuid

import pytest
from django.test import Client
from django.urls import reverse
from prometheus_client.parser import text_string_to_metric_families

from annotation.models import Assignment, Rater
from core.enqueue import enqueue
from llm import services as llm_services
from llm.executor import run_execute
from llm.models import RunStatus, Unit
from tests.factories import RunFactory, StudyFactory, UnitFactory
from tests.factories.annotation import build_study, forbidden_strings
from tests.factories.llm import endpoint, study_with_pairs

pytestmark = pytest.mark.django_db
TOKEN = "metrics-token-for-tests"
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def metrics_on(settings):
    """Metrics as a deployment with METRICS_TOKEN set has them (the middleware first)."""
    settings.METRICS_TOKEN = TOKEN
    settings.METRICS_ALLOWED_IPS = []
    settings.MIDDLEWARE = ["core.metrics.MetricsMiddleware", *settings.MIDDLEWARE]
    return settings


def _scrape(client: Client | None = None) -> dict:
    """{(metric sample name, frozenset(labels)): value} of one authorised scrape."""
    response = (client or Client()).get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    text = response.content.decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    samples["__text__"] = text
    return samples


def _value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_metrics_are_refused_to_everyone_when_not_configured(settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", []
    response = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer ")
    assert response.status_code == 403
    assert "METRICS_TOKEN" in response.content.decode()
    assert "heart_" not in response.content.decode()


def test_a_wrong_token_another_scheme_or_a_forwarded_address_is_refused(metrics_on):
    metrics_on.METRICS_ALLOWED_IPS = ["10.0.0.0/8"]
    client = Client()
    for headers in (
        {"HTTP_AUTHORIZATION": "Bearer not-the-token"},
        {"HTTP_AUTHORIZATION": f"Basic {TOKEN}"},
        {"HTTP_AUTHORIZATION": TOKEN},
        # Only the connecting address counts: a header anyone can send does not.
        {"HTTP_X_FORWARDED_FOR": "10.1.2.3", "HTTP_X_REAL_IP": "10.1.2.3"},
    ):
        assert client.get("/metrics", **headers).status_code == 403, headers
    assert client.post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 405


def test_the_token_or_an_allowed_address_reads_the_metrics(metrics_on):
    assert "django_http_requests_latency_seconds_by_view_method" in _scrape()["__text__"]
    metrics_on.METRICS_TOKEN = ""
    metrics_on.METRICS_ALLOWED_IPS = ["10.0.0.0/8", "192.0.2.7"]
    assert Client().get("/metrics", REMOTE_ADDR="10.20.30.40").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="192.0.2.7").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="192.0.2.8").status_code == 403
    assert Client().get("/metrics").status_code == 403  # the test client's 127.0.0.1


def test_a_rater_round_trip_is_timed_and_the_metrics_name_no_one(metrics_on):
    study = build_study(quality_check_rate=0)
    client = Client()
    invite = study.invite_token
    entry = reverse("annotation:entry", kwargs={"invite_token": invite})
    client.get(entry + "?PROLIFIC_PID=PID-metrics-77&STUDY_ID=S1&SESSION_ID=X1")
    client.post(reverse("annotation:consent", kwargs={"invite_token": invite}), {"agree": "on"})
    rater = Rater.objects.get(study=study, external_id="PID-metrics-77")
    client.get(reverse("annotation:item", kwargs={"invite_token": invite}))
    token = Assignment.objects.get(rater=rater, status="leased").token
    before = _scrape()

    submit = reverse("annotation:submit", kwargs={"token": token})
    response = client.post(submit, {"choice": "2"}, **HTMX)
    assert response.status_code == 200
    after = _scrape()

    trips = "heart_rater_round_trip_seconds_count"
    assert _value(after, trips, status="200") == _value(before, trips, status="200") + 1
    view = "django_http_requests_latency_seconds_by_view_method_count"
    labels = {"view": "annotation:submit", "method": "POST"}
    assert _value(after, view, **labels) == _value(before, view, **labels) + 1
    text = after["__text__"]
    for identity in [token, invite, rater.token, rater.pseudonym, "PID-metrics-77", study.slug]:
        assert identity not in text
    for name in forbidden_strings(study):
        assert not re.search(rf'"{re.escape(name)}"', text), name


def test_celery_queue_lengths_are_read_from_the_redis_broker(metrics_on):
    import redis

    url = metrics_on.CELERY_BROKER_URL
    if not url.startswith("redis://"):
        pytest.skip("needs REDIS_URL (the broker)")
    queue = f"metrics-test-{uuid.uuid4().hex[:8]}"
    metrics_on.CELERY_TASK_ROUTES = {
        **metrics_on.CELERY_TASK_ROUTES,
        "tests.metrics.*": {"queue": queue},
    }
    client = redis.Redis.from_url(url)
    try:
        client.lpush(queue, "m1", "m2", "m3")
        client.lpush(f"{queue}\x06\x169", "urgent-1", "urgent-2")  # kombu's priority-9 list
        samples = _scrape()
    finally:
        client.delete(queue, f"{queue}\x06\x169")
        client.close()
    assert _value(samples, "heart_celery_queue_length", queue=queue) == 5
    for configured in ("default", "llm", "refit"):
        assert ("heart_celery_queue_length", frozenset({("queue", configured)})) in samples


def test_llm_run_progress_is_shown_per_kind_for_running_runs(metrics_on, fake_llm):
    study = StudyFactory()
    judge = endpoint(fake_llm, "metrics-judge")
    running = RunFactory(study=study, kind="judge", status=RunStatus.RUNNING)
    finished = RunFactory(study=study, kind="label", status=RunStatus.FINISHED)
    statuses = ["done", "done", "failed", "invalid", "pending", "in_flight"]
    for i, status in enumerate(statuses):
        UnitFactory(run=running, key=f"u{i}", endpoint=judge, status=status)
        UnitFactory(run=finished, key=f"u{i}", endpoint=judge, status="done")
    samples = _scrape()
    units = {
        status: _value(samples, "heart_llm_running_units", kind="judge", status=status)
        for status in ("done", "failed", "invalid", "pending", "in_flight")
    }
    assert units == {"done": 2, "failed": 1, "invalid": 1, "pending": 1, "in_flight": 1}
    assert ("heart_llm_running_units", frozenset({("kind", "label"), ("status", "done")})) not in (
        samples
    )
    assert _value(samples, "heart_llm_runs", kind="label", status="finished") >= 1
    assert _value(samples, "heart_llm_runs", kind="judge", status="running") >= 1


def test_finished_units_are_counted_per_kind_once_stored(
    metrics_on, fake_llm, django_capture_on_commit_callbacks
):
    study = study_with_pairs(n_contexts=1)
    judge = endpoint(fake_llm, "metrics-count-judge", family="gemini")
    run = llm_services.run_plan(study=study, kind="judge", endpoints=[judge])
    llm_services.run_start(run=run)
    name = "heart_llm_units_finished_total"
    before = _value(_scrape(), name, kind="judge", status="done")
    with django_capture_on_commit_callbacks(execute=True):
        run_execute(run.pk)
    done = Unit.objects.filter(run=run, status="done").count()
    assert done > 0
    assert _value(_scrape(), name, kind="judge", status="done") == before + done


def test_tasks_are_counted_per_name_queue_and_state(metrics_on):
    labels = {"task": "core.tasks.deferred_tasks_send", "queue": "eager", "state": "SUCCESS"}
    before = _value(_scrape(), "heart_celery_tasks_total", **labels)
    enqueue("core.tasks.deferred_tasks_send")  # eager in tests: runs here, with Celery's signals
    assert _value(_scrape(), "heart_celery_tasks_total", **labels) == before + 1

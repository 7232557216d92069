"""Batch mode end to end against the fake server's batch protocols, with the real SDKs:
a batch that completes, one that partly errors, one that expires; both providers."""

from __future__ import annotations

import pytest

from annotation.models import Judgment
from fakes.llm.batches import BATCHES
from labelling.models import CompletionLabels
from llm import services
from llm.executor import run_execute
from llm.models import BatchStatus, CachedCall, ProviderBatch, RunStatus, UnitStatus
from llm.selectors import run_counts
from llm.services import batches as batch_services
from tests.factories.labelling import build_labelled_study
from tests.factories.llm import endpoint, study_with_pairs

pytestmark = pytest.mark.django_db


def _batch_run(study, kind, eps):
    run = services.run_plan(study=study, kind=kind, endpoints=eps)
    assert batch_services.batch_run_start(run=run)
    # Tests run inside a transaction: on_commit never fires, so the steps are called here.
    batches = batch_services.batches_submit(run_id=run.pk)
    return run, batches


def _poll_until_ingested(batches, rounds: int = 3):
    states = []
    for _ in range(rounds):
        batch_services.batches_poll()
        states.append([ProviderBatch.objects.get(pk=b.pk).status for b in batches])
        if all(s != BatchStatus.SUBMITTED for s in states[-1]):
            break
    return states


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_label_run_completes_at_batch_prices(fake_llm, provider):
    study = build_labelled_study(n_contexts=2)
    ep = endpoint(fake_llm, f"batch-{provider}", provider=provider, price_in=2.0, price_out=8.0)
    run, (batch,) = _batch_run(study, "label", [ep])
    batch.refresh_from_db()
    assert batch.status == BatchStatus.SUBMITTED and batch.n_requests == 6
    assert run.units.filter(status=UnitStatus.IN_FLIGHT).count() == 6
    # While the batch is out, an executor (e.g. the stalled-run resumer) leaves at once.
    assert run_execute(run.pk) == "stopped"
    states = _poll_until_ingested([batch])
    assert states[0] == [BatchStatus.SUBMITTED]  # the provider said "in progress" first
    assert states[-1] == [BatchStatus.INGESTED]
    batch.refresh_from_db()
    assert batch.n_succeeded == 6 and batch.n_routed_back == 0
    assert run_execute(run.pk) == "finished"  # what the poller dispatches: finishes the run
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED and run_counts(run)["done"] == 6
    assert CompletionLabels.objects.filter(label_set__run=run).count() == 6
    units = list(run.units.all())
    assert all(u.request_hash and u.sends == 1 and u.ttft_ms is None for u in units)
    full_price = sum(ep.cost(u.tokens_in, u.tokens_out) for u in units)
    assert run.cost == pytest.approx(full_price / 2)
    assert CachedCall.objects.count() == 6  # a later normal run pays nothing


def test_a_partly_erroring_batch_routes_the_errors_back_to_the_normal_path(fake_llm):
    study = build_labelled_study(n_contexts=2)
    # Every distinct prompt fails on its first attempt (inside the batch), then succeeds.
    ep = endpoint(fake_llm, "batch-err", model="batch-err@status=500*1")
    run, (batch,) = _batch_run(study, "label", [ep])
    _poll_until_ingested([batch])
    batch.refresh_from_db()
    assert batch.n_succeeded == 0 and batch.n_routed_back == 6
    assert run.units.filter(status=UnitStatus.PENDING, claim_token="").count() == 6
    assert run_execute(run.pk) == "finished"
    assert run_counts(run)["done"] == 6
    assert all(u.sends == 2 for u in run.units.all())  # once in the batch, once normally


def test_a_mixed_batch_keeps_what_succeeded(fake_llm):
    study = build_labelled_study(n_contexts=2)
    ep = endpoint(fake_llm, "batch-mixed", provider="anthropic")
    run, (batch,) = _batch_run(study, "label", [ep])
    # Make one request error: the fake server answered already; rewrite its stored result.
    fake = fake_llm.app[BATCHES][batch.provider_batch_id]
    fake.results[0]["result"] = {
        "type": "errored",
        "error": {"type": "error", "error": {"type": "api_error", "message": "overloaded"}},
    }
    _poll_until_ingested([batch])
    batch.refresh_from_db()
    assert batch.n_succeeded == 5 and batch.n_routed_back == 1
    assert run_counts(run)["done"] == 5
    run_execute(run.pk)
    assert run_counts(run)["done"] == 6


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_expired_batch_sends_the_unanswered_half_through_the_normal_path(fake_llm, provider):
    study = build_labelled_study(n_contexts=2)
    ep = endpoint(
        fake_llm, f"batch-exp-{provider}", model="expiring@batch=expire", provider=provider
    )
    run, (batch,) = _batch_run(study, "label", [ep])
    _poll_until_ingested([batch])
    batch.refresh_from_db()
    assert batch.provider_status in ("expired", "ended")
    assert batch.n_succeeded == 3 and batch.n_routed_back == 3
    assert run_counts(run)["done"] == 3
    assert run_execute(run.pk) == "finished"
    assert run_counts(run)["done"] == 6 and run_counts(run)["failed"] == 0


def test_a_batch_judge_run_gives_the_same_verdict_count_as_a_normal_one(fake_llm):
    study = study_with_pairs(n_contexts=2)
    judges = [
        endpoint(fake_llm, "bj-gpt", family="gpt"),
        endpoint(fake_llm, "bj-claude", family="claude", provider="anthropic"),
    ]
    run, batches = _batch_run(study, "judge", judges)
    assert len(batches) == 2
    _poll_until_ingested(batches)
    run_execute(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED
    batch_verdicts = Judgment.objects.filter(study=study, judge_kind="llm").count()

    other = study_with_pairs(n_contexts=2)
    normal = services.run_plan(
        study=other,
        kind="judge",
        endpoints=[
            endpoint(fake_llm, "nj-gpt", family="gpt"),
            endpoint(fake_llm, "nj-claude", family="claude", provider="anthropic"),
        ],
    )
    services.run_start(run=normal)
    run_execute(normal.pk)
    normal_verdicts = Judgment.objects.filter(study=other, judge_kind="llm").count()
    assert batch_verdicts == normal_verdicts > 0
    assert run_counts(run)["done"] == run_counts(normal)["done"]


def test_a_failed_submission_leaves_the_work_to_the_normal_path(fake_llm):
    study = build_labelled_study(n_contexts=1)
    ep = endpoint(fake_llm, "batch-nokey", api_key_env="HEART_TEST_UNSET_KEY_VARIABLE")
    run, (batch,) = _batch_run(study, "label", [ep])
    batch.refresh_from_db()
    assert batch.status == BatchStatus.FAILED and "HEART_TEST_UNSET_KEY_VARIABLE" in batch.error
    assert run.units.filter(status=UnitStatus.PENDING).count() == 3


def test_batch_mode_is_refused_for_adversarial_runs(fake_llm):
    study = build_labelled_study(n_contexts=1)
    run = services.run_plan(
        study=study,
        kind="adversarial",
        endpoints=[endpoint(fake_llm, "rw")],
        params={"profile": "Always-10"},
    )
    with pytest.raises(batch_services.BatchError, match="batch mode is for"):
        batch_services.batch_run_start(run=run)


def test_the_run_page_shows_the_batch_state(fake_llm, client):
    from django.urls import reverse

    from tests.factories.labelling import user

    study = build_labelled_study(n_contexts=1)
    run, (batch,) = _batch_run(study, "label", [endpoint(fake_llm, "batch-page")])
    client.force_login(user("lead", admin=True))
    page = client.get(reverse("llm:run", args=[study.slug, run.pk])).content.decode()
    assert "Provider batches" in page and batch.provider_batch_id in page
    assert "Submitted" in page


def test_the_studio_launches_a_batch_label_run_and_an_adversarial_run(fake_llm, client):
    from django.urls import reverse

    from llm.models import Run
    from tests.factories.labelling import user

    study = build_labelled_study(n_contexts=1)
    labeller = endpoint(fake_llm, "hub-labeller")
    client.force_login(user("lead", admin=True))
    plan = client.post(
        reverse("llm:plan", args=[study.slug]),
        {"kind": "label", "endpoints": [labeller.pk], "batch": "on"},
    )
    run = Run.objects.get(kind="label")
    assert plan.status_code == 302 and run.params["batch_requested"] is True
    assert "Batch mode" in client.get(plan.url).content.decode()
    client.post(reverse("llm:run-action", args=[study.slug, run.pk, "start"]))
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.params["batch"] is True
    # Two classifiers for one label run, or an adversarial run without profile: told, not run.
    second = endpoint(fake_llm, "hub-labeller-2")
    refused = client.post(
        reverse("llm:plan", args=[study.slug]),
        {"kind": "label", "endpoints": [labeller.pk, second.pk]},
    )
    assert refused.status_code == 400 and "exactly one" in refused.content.decode()
    refused = client.post(
        reverse("llm:plan", args=[study.slug]), {"kind": "adversarial", "endpoints": [second.pk]}
    )
    assert refused.status_code == 400 and "escalation profile" in refused.content.decode()
    made = client.post(
        reverse("llm:plan", args=[study.slug]),
        {"kind": "adversarial", "endpoints": [second.pk], "profile": "Mid-Ramp", "contexts": 3},
    )
    assert made.status_code == 302
    assert Run.objects.get(kind="adversarial").params["profile"] == "Mid-Ramp"


def test_a_schema_breaking_batch_reply_goes_back_to_the_normal_path_and_is_repaired(fake_llm):
    study = build_labelled_study(n_contexts=1)
    ep = endpoint(fake_llm, "batch-fixme", model="labeller-offtaxonomy-once")
    run, (batch,) = _batch_run(study, "label", [ep])
    _poll_until_ingested([batch])
    batch.refresh_from_db()
    assert batch.n_succeeded == 3 and batch.n_routed_back == 3  # answered, but invalid
    assert run_counts(run)["done"] == 0
    assert run_execute(run.pk) == "finished"
    assert run_counts(run)["done"] == 3
    assert all(u.repairs == 1 for u in run.units.all())


def test_beat_polls_the_batches_on_the_llm_queue():
    from celery import current_app
    from django.conf import settings

    # What a worker does when it starts: import every app's tasks module (autodiscovery). Without
    # it the registry holds only the tasks some earlier test happened to import: this test
    # passed or failed with the order the tests ran in.
    current_app.loader.import_default_modules()
    entry = settings.CELERY_BEAT_SCHEDULE["llm-poll-batches"]
    current_app.loader.import_default_modules()  # as a worker or beat does when it starts
    assert entry["task"] in current_app.tasks
    route = current_app.amqp.router.route({}, entry["task"])
    assert route["queue"].name == "llm"

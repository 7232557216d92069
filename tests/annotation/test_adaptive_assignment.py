"""Adaptive assignment: the engine follows the refit's plan inside every rule of the engine."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment, Judgment, Pair, PairPriority
from annotation.services import (
    assignment_next,
    judgment_submit_and_next,
    rater_consent,
    rater_enter,
)
from ranking.design import design_refresh, priorities_write
from ranking.models import DesignStatus
from ranking.services import params_resolve, study_data_load
from tests.factories.annotation import SYSTEMS, build_study, forbidden_strings

pytestmark = pytest.mark.django_db
FOUR = SYSTEMS + [("wombat-llama-3", "famllamarho", "model")]


def _rater(study):
    return rater_consent(rater=rater_enter(study=study))


def _favour(study, first: str, second: str) -> None:
    """Priorities that put nearly all weight on one system pair."""
    names = list(study.systems.order_by("name").values_list("name", flat=True))
    weights = np.full((len(names), len(names)), 1e-6)
    i, j = names.index(first), names.index(second)
    weights[i, j] = weights[j, i] = 1.0
    priorities_write(study=study, systems=names, weights=weights)


def _systems(pair: Pair) -> set[str]:
    return {pair.completion_a.system.name, pair.completion_b.system.name}


def test_it_serves_the_pairs_the_plan_favours():
    study = build_study(n_contexts=6, quality_check_rate=0, adaptive_assignment=True)
    _favour(study, "zorblax-gpt-9", "quillon-claude-7")
    served = [Pair.objects.get(pk=assignment_next(rater=_rater(study)).pair_id) for _ in range(6)]
    assert all(_systems(p) == {"zorblax-gpt-9", "quillon-claude-7"} for p in served)


def test_the_per_pair_cap_holds_when_every_rater_wants_the_same_pair():
    study = build_study(
        n_contexts=1, quota=2, quality_check_rate=0, adaptive_assignment=True, systems=FOUR
    )
    _favour(study, "zorblax-gpt-9", "quillon-claude-7")
    favoured = next(
        p
        for p in study.pairs.all()
        if len(_systems(p) & {"zorblax-gpt-9"}) and len(_systems(p) & {"quillon-claude-7"})
    )
    got = [assignment_next(rater=_rater(study)).pair_id for _ in range(4)]
    assert got[:2] == [favoured.pk, favoured.pk]
    assert favoured.pk not in got[2:]
    assert Assignment.objects.filter(pair=favoured).count() == 2


def test_a_rater_gets_one_context_and_never_the_same_pair_twice():
    study = build_study(
        n_contexts=4, quality_check_rate=0, adaptive_assignment=True, items_per_rater=4
    )
    _favour(study, "zorblax-gpt-9", "quillon-claude-7")
    rater = _rater(study)
    assignment = assignment_next(rater=rater)
    seen = []
    while assignment is not None:
        seen.append(Pair.objects.get(pk=assignment.pair_id))
        _, assignment = judgment_submit_and_next(rater=rater, assignment=assignment, choice=2)
    contexts = [p.context_id for p in seen]
    assert len(seen) == 4 and len(set(contexts)) == 4  # max_items_per_context = 1
    assert all(_systems(p) == {"zorblax-gpt-9", "quillon-claude-7"} for p in seen)
    assert len({p.pk for p in seen}) == len(seen)


def test_without_written_priorities_the_least_judged_pair_comes_next():
    study = build_study(n_contexts=2, quality_check_rate=0, adaptive_assignment=True)
    pairs = list(study.pairs.order_by("pk"))
    Pair.objects.exclude(pk=pairs[3].pk).update(n_judgments=2)
    assert assignment_next(rater=_rater(study)).pair_id == pairs[3].pk


def test_the_refit_writes_a_priority_per_pair_and_the_stopping_rule():
    study = build_study(n_contexts=3, quality_check_rate=0, adaptive_assignment=True)
    for _ in range(3):
        rater = _rater(study)
        assignment = assignment_next(rater=rater)
        while assignment is not None:
            _, assignment = judgment_submit_and_next(rater=rater, assignment=assignment, choice=1)
    design_refresh(study=study, data=study_data_load(study), params=params_resolve("default"))
    assert PairPriority.objects.filter(study=study).count() == study.pairs.count()
    assert PairPriority.objects.filter(study=study, rate__gt=0).count() == study.pairs.count()
    status = DesignStatus.objects.get(study=study)
    judged = Judgment.objects.filter(study=study).count()
    assert judged == 27 and status.n_judgments == judged  # 3 raters x 9 pairs
    assert status.level == 95 and status.pairs
    assert status.judgments_open == study.pairs.count() * 5 - judged


def test_the_refit_leaves_full_pairs_out_of_the_draw():
    study = build_study(n_contexts=2, quality_check_rate=0, adaptive_assignment=True)
    names = list(study.systems.order_by("name").values_list("name", flat=True))
    uniform = np.ones((len(names), len(names)))
    priorities_write(study=study, systems=names, weights=uniform)
    full = study.pairs.order_by("pk").first()
    Pair.objects.filter(pk=full.pk).update(n_judgments=full.quota)
    priorities_write(study=study, systems=names, weights=uniform)
    drawn = set(PairPriority.objects.filter(study=study).values_list("pair_id", flat=True))
    assert drawn == set(study.pairs.exclude(pk=full.pk).values_list("pk", flat=True))


def test_when_the_ranked_window_is_taken_the_least_judged_pair_comes_next(monkeypatch):
    from annotation.services import adaptive

    monkeypatch.setattr(adaptive, "WINDOW", 1)
    study = build_study(n_contexts=2, quality_check_rate=0, adaptive_assignment=True)
    _favour(study, "zorblax-gpt-9", "quillon-claude-7")
    top = PairPriority.objects.filter(study=study).order_by("rank").first().pair
    Pair.objects.filter(pk=top.pk).update(n_judgments=top.quota)  # full since the refit
    pairs = list(study.pairs.exclude(pk=top.pk).order_by("pk"))
    Pair.objects.exclude(pk__in=[top.pk, pairs[-1].pk]).update(n_judgments=2)
    assert assignment_next(rater=_rater(study)).pair_id == pairs[-1].pk


def test_an_adaptive_item_page_stays_blind(client):
    study = build_study(quality_check_rate=0, adaptive_assignment=True)
    _favour(study, "zorblax-gpt-9", "human-writers-yarrow")
    client.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    client.get(f"/r/{study.invite_token}/")
    html = client.get(reverse("annotation:item", args=[study.invite_token])).content.decode()
    assert "Reply" in html
    assert not [s for s in forbidden_strings(study) if s in html]


def _round_trip_queries(client, study) -> tuple[int, int]:
    client.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    item_url = reverse("annotation:item", args=[study.invite_token])
    client.get(item_url)
    with CaptureQueriesContext(connection) as item:
        client.get(item_url)
    token = Assignment.objects.filter(status="leased").latest("pk").token
    with CaptureQueriesContext(connection) as submit:
        client.post(
            reverse("annotation:submit", args=[token]), {"choice": "2"}, HTTP_HX_REQUEST="true"
        )
    return len(item), len(submit)


def test_adaptive_assignment_sends_no_more_queries_per_round_trip(client):
    plain = build_study(slug="plain", n_contexts=3, quality_check_rate=0)
    adaptive = build_study(
        slug="adaptive", n_contexts=3, quality_check_rate=0, adaptive_assignment=True
    )
    _favour(adaptive, "zorblax-gpt-9", "quillon-claude-7")
    assert _round_trip_queries(client, adaptive) == _round_trip_queries(client, plain)


def test_beat_refreshes_the_plan_of_an_adaptive_study_whose_judgments_moved_on(
    django_capture_on_commit_callbacks,
):
    from ranking import tasks

    adaptive = build_study(n_contexts=2, quality_check_rate=0, adaptive_assignment=True)
    plain = build_study(slug="plain", n_contexts=2, quality_check_rate=0)
    draft = build_study(slug="draft", status="draft", adaptive_assignment=True)
    for study in (adaptive, plain):
        rater = _rater(study)
        assignment = assignment_next(rater=rater)
        for _ in range(3):
            _, assignment = judgment_submit_and_next(rater=rater, assignment=assignment, choice=1)
    with django_capture_on_commit_callbacks(execute=True):
        queued = tasks.adaptive_plans_refresh()
    assert queued == [adaptive.pk]  # not the study without it, not the draft
    assert not DesignStatus.objects.filter(study__in=[plain, draft]).exists()
    assert DesignStatus.objects.get(study=adaptive).n_judgments == 3
    assert PairPriority.objects.filter(study=adaptive).exists()
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.adaptive_plans_refresh() == []  # its plan follows every judgment now
    rater = _rater(adaptive)
    judgment_submit_and_next(rater=rater, assignment=assignment_next(rater=rater), choice=3)
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.adaptive_plans_refresh() == [adaptive.pk]
    assert DesignStatus.objects.get(study=adaptive).n_judgments == 4

"""The assignment engine and judgment submission (annotation/services/)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Judgment, Pair
from annotation.selectors import queue_plan
from annotation.services import (
    AssignmentNotFound,
    assignment_next,
    axes_to_canonical,
    choice_to_verdict,
    judgment_submit,
    judgment_submit_and_next,
    rater_consent,
    rater_enter,
)
from tests.factories import AssignmentFactory, QualityCheckItemFactory
from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db


def _rater(study, external_id=""):
    return rater_consent(rater=rater_enter(study=study, external_id=external_id))


def test_choice_maps_to_canonical_winner_and_strength():
    assert choice_to_verdict(choice=1, shown_left="a") == ("a", 2)
    assert choice_to_verdict(choice=2, shown_left="a") == ("a", 1)
    assert choice_to_verdict(choice=3, shown_left="b") == ("tie", None)
    assert choice_to_verdict(choice=1, shown_left="b") == ("b", 2)
    assert choice_to_verdict(choice=4, shown_left="b") == ("a", 1)
    assert choice_to_verdict(choice=5, shown_left="a") == ("b", 2)


def test_axis_marks_are_stored_in_canonical_orientation():
    assert axes_to_canonical(marks={"H": "A", "E": "B"}, shown_left="b") == {
        "H": {"winner": "b"},
        "E": {"winner": "a"},
    }


def test_it_claims_the_least_judged_pair_first():
    study = build_study(n_contexts=2, quality_check_rate=0)
    pairs = list(study.pairs.order_by("pk"))
    Pair.objects.exclude(pk=pairs[3].pk).update(n_judgments=2)
    assignment = assignment_next(rater=_rater(study))
    assert assignment.pair_id == pairs[3].pk
    assert assignment.status == "leased" and assignment.shown_left in ("a", "b")


def test_it_resumes_the_current_unexpired_lease():
    study = build_study(quality_check_rate=0)
    rater = _rater(study)
    first = assignment_next(rater=rater)
    assert assignment_next(rater=rater).pk == first.pk
    assert Assignment.objects.filter(rater=rater).count() == 1


def test_a_returning_prolific_rater_is_the_same_rater():
    study = build_study()
    first = rater_enter(study=study, external_id="PID123")
    again = rater_enter(study=study, external_id="PID123")
    assert first.pk == again.pk and first.source == "prolific"
    assert "PID123" not in first.pseudonym


def test_leases_count_against_the_quota():
    study = build_study(
        n_contexts=1,
        quota=2,
        quality_check_rate=0,
        systems=[("s1", "f1", "model"), ("s2", "f2", "model")],
    )
    raters = [_rater(study) for _ in range(3)]
    got = [assignment_next(rater=r) for r in raters]
    assert got[0] is not None and got[1] is not None
    assert got[2] is None  # the only pair has two running leases


def test_an_expired_lease_returns_to_the_pool():
    study = build_study(
        n_contexts=1,
        quota=1,
        quality_check_rate=0,
        lease_seconds=60,
        systems=[("s1", "f1", "model"), ("s2", "f2", "model")],
    )
    first, second = _rater(study), _rater(study)
    leased = assignment_next(rater=first)
    assert assignment_next(rater=second) is None
    later = timezone.now() + timedelta(seconds=61)
    taken = assignment_next(rater=second, now=later)
    assert taken is not None and taken.pair_id == leased.pair_id
    # The first rater comes back: no room any more, so their lease is marked expired.
    assert assignment_next(rater=first, now=later) is None
    leased.refresh_from_db()
    assert leased.status == "expired"


def test_a_returning_rater_gets_the_same_item_back_when_the_pair_has_room():
    study = build_study(quality_check_rate=0, lease_seconds=60)
    rater = _rater(study)
    leased = assignment_next(rater=rater)
    later = timezone.now() + timedelta(seconds=120)
    again = assignment_next(rater=rater, now=later)
    assert again.pk == leased.pk and again.lease_expires_at > later


def test_submit_stores_the_canonical_verdict_and_server_side_time():
    study = build_study(quality_check_rate=0)
    rater = _rater(study)
    assignment = assignment_next(rater=rater)
    assignment.shown_left = "b"
    assignment.save(update_fields=["shown_left"])
    now = assignment.served_at + timedelta(seconds=12, milliseconds=345)
    result = judgment_submit(
        rater=rater,
        assignment=assignment,
        choice=2,
        axes={"H": "A"},
        rationale=" warmer ",
        now=now,
    )
    j = result.judgment
    assert result.created
    assert (j.winner, j.strength, j.strength_max, j.shown_left) == ("b", 1, 2, "b")
    assert j.axes == {"H": {"winner": "b"}} and j.rationale == "warmer"
    assert j.duration_ms == 12345 and j.judge == rater.pseudonym and not j.quality_check
    assert Pair.objects.get(pk=assignment.pair_id).n_judgments == 1


def test_a_double_submit_stores_one_judgment():
    study = build_study(quality_check_rate=0)
    rater = _rater(study)
    assignment = assignment_next(rater=rater)
    first = judgment_submit(rater=rater, assignment=assignment, choice=1)
    second = judgment_submit(rater=rater, assignment=assignment, choice=5)
    assert not second.created and second.judgment.pk == first.judgment.pk
    assert Judgment.objects.count() == 1
    assert Pair.objects.get(pk=assignment.pair_id).n_judgments == 1


def test_it_rejects_another_raters_assignment():
    study = build_study(quality_check_rate=0)
    owner, intruder = _rater(study), _rater(study)
    assignment = assignment_next(rater=owner)
    with pytest.raises(AssignmentNotFound):
        judgment_submit(rater=intruder, assignment=assignment, choice=1)
    assert Judgment.objects.count() == 0


def test_a_late_submit_is_accepted_while_the_pair_has_room():
    study = build_study(quality_check_rate=0, lease_seconds=60)
    rater = _rater(study)
    assignment = assignment_next(rater=rater)
    later = timezone.now() + timedelta(seconds=300)
    result = judgment_submit(rater=rater, assignment=assignment, choice=3, now=later)
    assert result.created and result.judgment.winner == "tie"


def test_a_late_submit_is_refused_when_others_filled_the_pair():
    study = build_study(
        n_contexts=1,
        quota=1,
        quality_check_rate=0,
        lease_seconds=60,
        systems=[("s1", "f1", "model"), ("s2", "f2", "model")],
    )
    slow, fast = _rater(study), _rater(study)
    stale = assignment_next(rater=slow)
    later = timezone.now() + timedelta(seconds=61)
    fresh = assignment_next(rater=fast, now=later)
    judgment_submit(rater=fast, assignment=fresh, choice=1, now=later)
    result = judgment_submit(rater=slow, assignment=stale, choice=5, now=later)
    assert result.refused
    assert Judgment.objects.count() == 1
    assert Pair.objects.get().n_judgments == 1
    stale.refresh_from_db()
    assert stale.status == "expired"


def test_a_rater_never_gets_the_same_pair_twice_and_stops_after_items_per_rater():
    study = build_study(n_contexts=3, quality_check_rate=0, items_per_rater=5)
    rater = _rater(study)
    seen = []
    while (assignment := assignment_next(rater=rater)) is not None:
        seen.append(assignment.pair_id)
        judgment_submit(rater=rater, assignment=assignment, choice=3)
        assert len(seen) <= 5
    assert len(seen) == 5 and len(set(seen)) == 5


def test_a_rater_stops_when_no_pair_has_room():
    study = build_study(n_contexts=1, quality_check_rate=0, items_per_rater=10)
    rater = _rater(study)
    count = 0
    while (assignment := assignment_next(rater=rater)) is not None:
        judgment_submit(rater=rater, assignment=assignment, choice=2)
        count += 1
    assert count == 3  # three systems -> three pairs on the only context


def test_quality_checks_are_mixed_in_at_the_study_rate():
    study = build_study(n_contexts=4, quality_check_rate=0.2, items_per_rater=8)
    for i in range(4):
        QualityCheckItemFactory(
            study=study, kind="gold", turns=[], text_a=f"good {i}", text_b=f"bad {i}", expected="a"
        )
    rater = _rater(study)
    plan = queue_plan(study=study, rater=rater, n_quality_items=4)
    assert plan.n_checks == 2 and plan.total == 10  # 8 * 0.2 / 0.8 = 2
    kinds = []
    while (assignment := assignment_next(rater=rater)) is not None:
        kinds.append("check" if assignment.quality_item_id else "real")
        judgment_submit(rater=rater, assignment=assignment, choice=1)
    assert kinds.count("check") == 2 and kinds.count("real") == 8
    assert [i for i, k in enumerate(kinds) if k == "check"] == sorted(plan.check_positions)


def test_submit_and_next_renews_another_expired_lease_outside_the_submit_transaction():
    study = build_study(quality_check_rate=0, lease_seconds=60)
    rater = _rater(study)
    current = assignment_next(rater=rater)
    now = timezone.now()
    other_pair = study.pairs.exclude(pk=current.pair_id).first()
    stale = AssignmentFactory(
        rater=rater,
        pair=other_pair,
        shown_left="a",
        position=0,
        served_at=now - timedelta(minutes=5),
        lease_expires_at=now - timedelta(minutes=4),
    )
    result, following = judgment_submit_and_next(rater=rater, assignment=current, choice=4)
    assert result.created and result.judgment.winner != "tie"
    assert following.pk == stale.pk and following.lease_expires_at > timezone.now()


def test_submit_and_next_says_done_after_the_last_item():
    study = build_study(quality_check_rate=0, items_per_rater=1)
    rater = _rater(study)
    result, following = judgment_submit_and_next(
        rater=rater, assignment=assignment_next(rater=rater), choice=3
    )
    assert result.created and following is None

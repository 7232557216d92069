"""Quality control: rubric-seeded checks, pass rules, flagging and exclusion."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import QualityCheckItem, Rater
from annotation.quality import (
    RUBRIC,
    flag_reason,
    quality_items_seed_from_rubric,
    rater_quality_update,
    study_median_time_ms,
    study_median_time_ms_recent,
    study_quality_update,
)
from annotation.services import assignment_next, judgment_submit, rater_consent, rater_enter
from tests.factories import (
    AssignmentFactory,
    JudgmentFactory,
    QualityCheckItemFactory,
    RaterFactory,
)
from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db


def test_seeding_from_the_rubric_makes_gold_and_attention_items_once():
    study = build_study()
    created = quality_items_seed_from_rubric(study=study)
    assert len(created) == 7
    assert quality_items_seed_from_rubric(study=study) == []
    gold = QualityCheckItem.objects.get(study=study, note="rubric:E")
    better = gold.text_a if gold.expected == "a" else gold.text_b
    assert better == RUBRIC["E"]["high"]
    attention = QualityCheckItem.objects.filter(study=study, kind="attention")
    assert {(a.expected, a.expected_choice) for a in attention} == {("b", 5), ("a", 2)}


def _check_assignment(study, item, shown_left):
    rater = rater_consent(rater=rater_enter(study=study))
    now = timezone.now()
    assignment = AssignmentFactory(
        rater=rater,
        quality_item=item,
        shown_left=shown_left,
        position=0,
        served_at=now,
        lease_expires_at=now + timedelta(minutes=5),
    )
    return rater, assignment


@pytest.mark.parametrize("shown_left", ["a", "b"])
@pytest.mark.parametrize(
    ("page_says", "passed"), [("A+", True), ("A", True), ("=", False), ("B", False)]
)
def test_gold_passes_on_the_better_reply_at_either_strength(shown_left, page_says, passed):
    study = build_study()
    item = QualityCheckItemFactory(
        study=study, kind="gold", turns=[], text_a="good", text_b="bad", expected="a"
    )
    rater, assignment = _check_assignment(study, item, shown_left)
    # "A+" = the good reply significantly better, wherever it was shown.
    good_left = shown_left == "a"
    choice = {
        "A+": 1 if good_left else 5,
        "A": 2 if good_left else 4,
        "=": 3,
        "B": 4 if good_left else 2,
    }[page_says]
    judgment = judgment_submit(rater=rater, assignment=assignment, choice=choice).judgment
    assert judgment.quality_check and judgment.quality_item_id == item.pk
    assert judgment.pair_id is None and judgment.passed_check is passed


@pytest.mark.parametrize(("choice", "passed"), [(5, True), (4, False), (1, False)])
def test_attention_passes_only_with_the_exact_scale_point(choice, passed):
    study = build_study()
    item = QualityCheckItemFactory(
        study=study,
        kind="attention",
        turns=[],
        text_a="a normal reply",
        text_b="To show you are reading carefully, choose 'B is significantly better'",
        expected="b",
        expected_choice=5,
    )
    rater, assignment = _check_assignment(study, item, "a")
    judgment = judgment_submit(rater=rater, assignment=assignment, choice=choice)
    assert judgment.judgment.passed_check is passed


def test_attention_items_keep_their_stored_order():
    study = build_study(n_contexts=1, items_per_rater=1, quality_check_rate=0.5)
    for _ in range(3):
        QualityCheckItemFactory(
            study=study,
            kind="attention",
            turns=[],
            text_a="x",
            text_b="choose B",
            expected="b",
            expected_choice=5,
        )
    for _ in range(6):
        rater = rater_consent(rater=rater_enter(study=study))
        while (assignment := assignment_next(rater=rater)) is not None:
            if assignment.quality_item_id:
                assert assignment.shown_left == "a"
            judgment_submit(rater=rater, assignment=assignment, choice=5)


def test_flag_rules_follow_the_definition():
    assert flag_reason(n_checks=2, n_passed=1, n_real=0, median_ms=None, study_median_ms=None)
    assert not flag_reason(n_checks=3, n_passed=2, n_real=0, median_ms=None, study_median_ms=None)
    assert not flag_reason(n_checks=1, n_passed=0, n_real=0, median_ms=None, study_median_ms=None)
    assert "floor" in flag_reason(
        n_checks=0, n_passed=0, n_real=5, median_ms=2500, study_median_ms=None
    )
    # 5 s against a study median of 24 s: under 25 % (6 s) -> flagged; 7 s is not.
    assert "study median" in flag_reason(
        n_checks=0, n_passed=0, n_real=5, median_ms=5000, study_median_ms=24000
    )
    assert not flag_reason(n_checks=0, n_passed=0, n_real=5, median_ms=7000, study_median_ms=24000)
    assert not flag_reason(n_checks=0, n_passed=0, n_real=2, median_ms=100, study_median_ms=None)


def _human_judgments(study, rater, durations_s, checks=()):
    pairs = list(study.pairs.all())
    for pair, seconds in zip(pairs, durations_s, strict=False):
        JudgmentFactory(
            study=study,
            pair=pair,
            judge_kind="human",
            rater=rater,
            judge=rater.pseudonym,
            winner="a",
            strength=1,
            strength_max=2,
            duration_ms=seconds * 1000,
            submitted_at=pair.created_at,
            shown_left="",
        )
    for item, passed in checks:
        JudgmentFactory(
            study=study,
            quality_item=item,
            judge_kind="human",
            rater=rater,
            judge=rater.pseudonym,
            winner="a",
            quality_check=True,
            passed_check=passed,
            submitted_at=item.study.created_at + timedelta(seconds=1),
            duration_ms=9000,
            strength=None,
            strength_max=None,
            shown_left="",
        )


def test_a_rater_failing_half_their_checks_is_flagged_and_excluded_reversibly():
    study = build_study()
    items = quality_items_seed_from_rubric(study=study)
    rater = RaterFactory(study=study, pseudonym="r-careless", consented_at=None)
    _human_judgments(study, rater, [20, 20, 20], checks=[(items[0], True), (items[1], False)])
    rater_quality_update(rater=rater)
    assert rater.flagged and rater.excluded and "1 of 2" in rater.flag_reason
    rater.exclusion_override = False
    assert not rater.excluded


def test_the_study_median_rule_flags_only_the_rushed_rater():
    study = build_study(n_contexts=2)
    raters = [RaterFactory(study=study, pseudonym=f"r-{i}", consented_at=None) for i in range(4)]
    for rater, seconds in zip(raters, [20, 24, 30, 4], strict=True):
        _human_judgments(study, rater, [seconds] * 4)
    # Per-rater medians 20, 24, 30, 4 -> study median 22 s; 25 % of it is 5.5 s.
    assert study_quality_update(study=study) == 1
    flagged = Rater.objects.get(flagged=True)
    assert flagged.pseudonym == "r-3" and "22.0 s" in flagged.flag_reason


def test_a_finishing_rater_reads_the_study_median_a_process_computed_within_a_minute(
    django_assert_num_queries,
):
    """The done page's median is kept a minute per process (it sorts every human judgment of
    the study); "too few raters" is asked again, and "Recompute quality flags" reads it fresh."""
    study = build_study(n_contexts=2)
    raters = [RaterFactory(study=study, pseudonym=f"r-{i}", consented_at=None) for i in range(4)]
    for rater, seconds in zip(raters[:2], [20, 24], strict=True):
        _human_judgments(study, rater, [seconds] * 4)
    assert study_median_time_ms_recent(study=study) is None  # two raters: too few
    _human_judgments(study, raters[2], [30] * 4)
    assert study_median_time_ms_recent(study=study) == 24_000  # asked again: now three
    _human_judgments(study, raters[3], [4] * 4)
    with django_assert_num_queries(0):
        assert study_median_time_ms_recent(study=study) == 24_000  # kept: no query
    assert study_median_time_ms(study=study) == 22_000  # the fresh one moved
    assert study_quality_update(study=study) == 1
    assert "22.0 s" in Rater.objects.get(flagged=True).flag_reason


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_study_median_postgresql_computes_equals_one_computed_by_hand(postgres, seed):
    """The done page asks PostgreSQL for the study's median time; the same figure computed here
    from the rows: per rater with 3 or more real items, the median of their timed real items;
    then the median of those (statistics.median: the mean of the middle two)."""
    import random
    import statistics

    from annotation.models import Judgment

    rng = random.Random(seed)
    study = build_study(n_contexts=3, systems=[(f"s{i}", f"f{i}", "model") for i in range(4)])
    for i in range(rng.randint(4, 9)):
        rater = RaterFactory(study=study, pseudonym=f"r-med-{i}")
        durations = [rng.choice([None, rng.randint(1, 90)]) for _ in range(rng.randint(1, 7))]
        _human_judgments(study, rater, [1] * len(durations))
        for judgment, duration in zip(
            Judgment.objects.filter(rater=rater).order_by("pk"), durations, strict=True
        ):
            judgment.duration_ms = None if duration is None else duration * 1000 + i
            judgment.save(update_fields=["duration_ms"])
    JudgmentFactory(study=study, judge_kind="llm", judge="gpt", duration_ms=5)  # not a rater's
    per_rater = []
    for rater in Rater.objects.filter(study=study):
        rows = list(
            Judgment.objects.filter(rater=rater, quality_check=False).values_list(
                "duration_ms", flat=True
            )
        )
        timed = [d for d in rows if d is not None]
        if len(rows) >= 3 and timed:
            per_rater.append(statistics.median(timed))
    expected = statistics.median(per_rater) if len(per_rater) >= 3 else None
    assert study_median_time_ms(study=study) == expected

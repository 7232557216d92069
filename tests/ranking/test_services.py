from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from annotation.models import Rater
from ranking import selectors, services
from ranking.models import LeaderboardSnapshot, RefitJob
from tests.factories.ranking import (
    X,
    Y,
    add_known_verdicts,
    add_noise_that_must_not_count,
    build_study,
    judge,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("few_judgments_shown")]
GAP_UNWEIGHTED = 400 * math.log10(3)  # x won 3 of 4
GAP_NORMALIZED = 400 * math.log10(6)  # x's wins weigh 2, y's single win weighs 1


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def built():
    built = build_study()
    add_known_verdicts(built)
    add_noise_that_must_not_count(built)
    return built


def _gap(result: dict) -> float:
    elo = {row["system"]: row["elo"] for row in result["systems"]}
    return elo[X] - elo[Y]


def test_it_ranks_the_winner_first_with_the_hand_computed_elo_gap(built):
    result = services.leaderboard_compute(built.study, judges="human", weights="none", ci="fisher")
    assert [row["system"] for row in result["systems"]] == [X, Y]
    assert _gap(result) == pytest.approx(GAP_UNWEIGHTED, abs=0.5)
    assert sum(row["elo"] for row in result["systems"]) == pytest.approx(3000, abs=0.2)


def test_normalized_strength_weights_double_a_significant_win(built):
    result = services.leaderboard_compute(built.study, judges="human", ci="fisher")
    assert _gap(result) == pytest.approx(GAP_NORMALIZED, abs=0.5)


def test_excluded_raters_and_quality_checks_do_not_count(built):
    result = services.leaderboard_compute(built.study, judges="all", ci="fisher")
    assert result["n_comparisons"] == 4
    assert result["n_excluded_raters"] == 1
    assert {row["system"]: row["n"] for row in result["systems"]} == {X: 4, Y: 4}


def test_an_admin_override_beats_the_flag_in_both_directions(built):
    flagged = Rater.objects.get(study=built.study, flagged=True)
    flagged.exclusion_override = False
    flagged.save(update_fields=["exclusion_override"])
    honest = Rater.objects.filter(study=built.study, flagged=False).order_by("id").first()
    honest.exclusion_override = True
    honest.save(update_fields=["exclusion_override"])
    frame = selectors.judgments_frame(built.study)
    assert set(frame["judge"]) == {flagged.pseudonym}
    assert len(frame) == 4


def test_winners_stay_canonical_when_x_is_completion_b(built):
    frame = selectors.judgments_frame(built.study, judges="human")
    won_by_x = frame[
        ((frame["winner"] == "a") & (frame["system_a"] == X))
        | ((frame["winner"] == "b") & (frame["system_b"] == X))
    ]
    assert len(won_by_x) == 3
    assert set(frame["system_a"]) == {X, Y}  # x is "a" on two contexts, "b" on two


def test_the_judgments_frame_reads_the_judgments_once(built, django_assert_num_queries):
    # The judgments, their pairs, then the study's completions, systems, contexts and raters
    # (joined in memory): six queries whatever the study's size.
    with django_assert_num_queries(6) as queries:
        frame = selectors.judgments_frame(built.study)
    reads = [q["sql"] for q in queries.captured_queries if 'FROM "annotation_judgment"' in q["sql"]]
    assert len(reads) == 1
    assert list(frame.columns[:4]) == ["id", "item", "context", "adversarial"]


def test_judge_and_subset_filters_select_their_judgments(built):
    judge(
        built,
        0,
        Y,
        judge="judge-gpt",
        kind="llm",
        rater=None,
        strength=5,
        strength_max=5,
        family="gpt",
    )
    llm = services.leaderboard_compute(built.study, judges="llm", ci=None)
    assert llm["n_comparisons"] == 1
    assert llm["systems"][0]["system"] == Y
    adversarial = services.leaderboard_compute(
        built.study, judges="human", subset="adversarial", ci=None
    )
    assert adversarial["n_comparisons"] == 2  # contexts 2 and 3: one win each
    assert _gap(adversarial) == pytest.approx(400 * math.log10(2), abs=0.5)


def test_the_result_carries_axes_head_to_head_and_split(built):
    judge(
        built,
        0,
        X,
        judge="judge-axes",
        kind="llm",
        strength=4,
        strength_max=5,
        axes={"H": {"winner": built.side(0, X), "strength": 3}, "E": {"winner": "tie"}},
    )
    result = services.leaderboard_compute(built.study, ci=None)
    rows = {row["system"]: row for row in result["systems"]}
    assert rows[X]["axes"]["H"] == 1.0
    assert rows[Y]["axes"]["H"] == 0.0
    assert rows[X]["axes"]["E"] == 0.5
    assert rows[X]["win_rate"] == pytest.approx(4 / 5)  # raw share, ties half
    # weighted: x's wins weigh 2, 2, 2 (human) and 1.75 (LLM 4 of 5); y's one win weighs 1.
    # By source (the default): humans (7 of the 8.75) and the LLM (1.75) get half of 8.75
    # each, so human verdicts are scaled by 4.375 / 7 and the LLM's by 4.375 / 1.75.
    human, llm = 4.375 / 7, 4.375 / 1.75
    assert rows[X]["weighted_win_rate"] == pytest.approx((6 * human + 1.75 * llm) / 8.75, abs=1e-4)
    by_count = services.leaderboard_compute(built.study, ci=None, combined="by_count")
    x = next(row for row in by_count["systems"] if row["system"] == X)
    assert x["weighted_win_rate"] == pytest.approx(7.75 / 8.75, abs=1e-4)
    shares = result["head_to_head"]["overall"]
    assert shares == {"model_preferred": 0.8, "human_preferred": 0.2, "tie": 0.0, "n": 5}
    assert result["split"]["regular"]["n_comparisons"] == 3
    assert result["split"]["adversarial"]["n_comparisons"] == 2
    assert result["win_matrix"]["systems"] == [X, Y]
    assert result["win_matrix"]["rates"][0][1] == pytest.approx(0.8)


def test_strategy_usage_is_per_family_in_percent(built):
    result = services.leaderboard_compute(built.study, ci=None)
    strategies = result["strategies"]
    usage = dict(
        zip(
            strategies["strategies"],
            zip(*[strategies["usage"][i] for i in range(len(strategies["usage"]))], strict=False),
            strict=False,
        )
    )
    families = strategies["families"]
    assert set(families) == {"gpt", "human"}
    affirmation = dict(
        zip(
            families,
            strategies["usage"][strategies["strategies"].index("Affirmation")],
            strict=True,
        )
    )
    clarification = dict(
        zip(
            families,
            strategies["usage"][strategies["strategies"].index("Clarification")],
            strict=True,
        )
    )
    assert affirmation == {"gpt": 100.0, "human": 100.0}
    assert clarification == {"gpt": 50.0, "human": 50.0}
    assert strategies["spread"]["gpt"]["completions"] == 4
    assert usage  # both strategies listed


def test_correlations_use_median_completion_ttft_when_the_system_has_none(built):
    from completions.models import Completion

    Completion.objects.filter(system=built.y).update(ttft_ms=2000.0)
    result = services.leaderboard_compute(built.study, ci=None)
    rows = {row["system"]: row for row in result["systems"]}
    assert rows[X]["ttft_ms"] == 500.0
    assert rows[Y]["ttft_ms"] == 2000.0
    tests = {(t["y"], t["x"]): t for t in result["correlations"]}
    assert set(tests) == {
        ("elo", "log10_ttft_ms"),
        ("elo", "external_score"),
        ("win_rate", "external_score"),
    }
    assert tests[("elo", "log10_ttft_ms")]["n"] == 2  # fewer than 3 points: no statistic
    assert tests[("elo", "log10_ttft_ms")]["pearson_r"] is None


def test_agreement_compute_reports_the_contract_keys(built):
    built.study.human_majority_min = 1  # one human verdict a pair here
    built.study.save(update_fields=["human_majority_min"])
    judge(built, 0, X, judge="judge-a", kind="llm", strength=4, strength_max=5, family="gpt")
    judge(built, 0, X, judge="judge-b", kind="llm", strength=3, strength_max=5, family="claude")
    summary = services.agreement_compute(built.study)
    assert {
        "fleiss_kappa",
        "krippendorff_alpha",
        "inter_human_agreement",
        "human_llm_agreement",
        "cross_judge_agreement",
    } <= set(summary)
    assert summary["cross_judge_agreement"] == {"judge-a|judge-b": 1.0}
    assert summary["human_llm_agreement"]["n"] == 1
    assert summary["human_llm_agreement"]["rate"] == 1.0


def test_a_snapshot_over_unchanged_inputs_is_stored_once(built):
    first = services.snapshot_create(study=built.study, judges="human", trigger="manual")
    again = services.snapshot_create(study=built.study, judges="human", trigger="nightly")
    assert again.pk == first.pk
    assert LeaderboardSnapshot.objects.count() == 1
    assert first.n_judgments == 4
    assert first.n_excluded_raters == 1
    assert first.n_systems == 2
    assert first.result["agreement"]["inter_human_n"] == 0
    judge(built, 1, Y, judge="late-rater", strength=1)
    third = services.snapshot_create(study=built.study, judges="human", trigger="nightly")
    assert third.pk != first.pk
    assert third.n_judgments == 5


def test_a_refit_stores_human_llm_and_all_snapshots(built):
    snapshots = services.snapshot_refit_study(study_id=built.study.pk, trigger="nightly")
    assert [s.judges for s in snapshots] == ["human", "llm", "all"]
    assert [s.n_comparisons for s in snapshots] == [4, 0, 4]
    assert snapshots[2].result["systems"][0]["system"] == X
    assert snapshots[2].params["ci"] == "bootstrap"
    low, high = (
        snapshots[2].result["systems"][0]["ci_low"],
        snapshots[2].result["systems"][0]["ci_high"],
    )
    assert low <= snapshots[2].result["systems"][0]["elo"] <= high


def test_the_page_uses_a_current_snapshot_and_refits_a_stale_one(built):
    services.snapshot_refit_study(study_id=built.study.pk, trigger="nightly")
    current = services.leaderboard_current(built.study, judges="all")
    assert current["status"] == "current"
    judge(built, 1, Y, judge="late-rater", strength=1)
    # In-process Celery (tests, the demo): the refit runs before the page reads.
    fresh = services.leaderboard_current(built.study, judges="all")
    assert fresh["status"] == "current"
    assert fresh["snapshot"]["id"] != current["snapshot"]["id"]
    assert fresh["snapshot"]["trigger"] == "stale"
    assert fresh["n_comparisons"] == 5


@pytest.fixture
def with_a_worker(monkeypatch):
    """Celery as in production: tasks go to a worker; here they are only recorded."""
    from celery import current_app

    sent = []
    eager = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = False
    monkeypatch.setattr(
        "core.enqueue.enqueue",
        lambda task, *args: sent.append((getattr(task, "name", task), args)),
    )
    cache.clear()
    yield sent
    current_app.conf.task_always_eager = eager
    cache.clear()


def test_with_a_worker_a_stale_page_shows_the_last_snapshot_as_updating(
    built, with_a_worker, django_capture_on_commit_callbacks
):
    services.snapshot_refit_study(study_id=built.study.pk, trigger="nightly")
    judge(built, 1, Y, judge="late-rater", strength=1)
    # Within a minute of the last refit a busy study waits: shown as updating, none queued.
    with django_capture_on_commit_callbacks(execute=True):
        waiting = services.leaderboard_current(built.study, judges="all")
    assert waiting["status"] == "updating" and waiting["refit"] is None
    assert with_a_worker == []
    LeaderboardSnapshot.objects.update(created_at=timezone.now() - timedelta(minutes=2))
    with django_capture_on_commit_callbacks(execute=True):
        shown = services.leaderboard_current(built.study, judges="all")
        again = services.leaderboard_current(built.study, judges="all")
    assert shown["status"] == again["status"] == "updating"
    assert shown["n_comparisons"] == 4  # the stored snapshot, not a fit in the request
    assert shown["refit"]["since"]
    # One refit queued, by name, for the whole standard set; the second read queues nothing.
    job = RefitJob.objects.get()
    assert with_a_worker == [("ranking.tasks.refit_job_run", (job.pk,))]
    assert (job.study_id, job.trigger, job.boards) == (
        built.study.pk,
        "stale",
        services.full_refit_boards(),
    )


def test_with_a_worker_a_filter_without_a_snapshot_is_computing(
    built, with_a_worker, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        shown = services.leaderboard_current(built.study, judges="human", preset="paper")
    assert shown["status"] == "computing"
    assert shown["systems"] == [] and shown["snapshot"] is None
    job = RefitJob.objects.get()
    assert with_a_worker == [("ranking.tasks.refit_job_run", (job.pk,))]
    assert job.boards == [["human", "all", "paper"]]


def test_an_empty_study_gives_an_empty_leaderboard():
    built = build_study()
    result = services.leaderboard_compute(built.study)
    assert result["systems"] == []
    assert result["n_comparisons"] == 0


def test_reading_an_unchanged_study_refits_nothing(built):
    first = services.leaderboard_current(built.study, judges="human")
    count = LeaderboardSnapshot.objects.count()
    assert services.leaderboard_current(built.study, judges="human") == first
    assert LeaderboardSnapshot.objects.count() == count

"""The board's record (ranking.record): systems stay on record, taking one off is a dated event
with a reason, snapshots state their sampling policy and shares, `board_history` prints it all,
and the refit serves the study's adaptive goal."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import Q
from django.test import Client
from django.urls import reverse

from annotation.models import Judgment, PairPriority
from annotation.services import (
    assignment_next,
    judgment_submit,
    judgment_submit_and_next,
    rater_consent,
    rater_enter,
)
from completions.models import Completion
from ranking import record
from ranking.design import design_refresh, study_goal
from ranking.models import BoardEvent, DesignStatus, LeaderboardSnapshot
from ranking.services import params_resolve, snapshot_refit_study, study_data_load
from tests.factories.annotation import SYSTEMS, build_study

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("few_judgments_shown")]
GPT, CLAUDE, HUMAN = (name for name, _, _ in SYSTEMS)


def _judged_study(**fields):
    """Three systems, every pair judged by three raters, each finding the reply of the system
    first in SYSTEMS much better (by system, not by side: the sides are drawn at random, and
    a verdict by side could leave the three in a circle, tied, on an unlucky draw)."""
    study = build_study(n_contexts=3, quality_check_rate=0, **fields)
    rank = {GPT: 0, CLAUDE: 1, HUMAN: 2}
    system_of = dict(
        Completion.objects.filter(system__study=study).values_list("pk", "system__name")
    )
    for _ in range(3):
        rater = rater_consent(rater=rater_enter(study=study))
        assignment = assignment_next(rater=rater)
        while assignment is not None:
            a, b = assignment.pair.completion_a_id, assignment.pair.completion_b_id
            left, right = (a, b) if assignment.shown_left == "a" else (b, a)
            choice = 1 if rank[system_of[left]] < rank[system_of[right]] else 5
            _, assignment = judgment_submit_and_next(
                rater=rater, assignment=assignment, choice=choice
            )
    return study


@pytest.fixture
def admin_client(client):
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(user)
    return client


def _history(slug: str) -> dict:
    out = io.StringIO()
    call_command("board_history", "--study", slug, stdout=out)
    return json.loads(out.getvalue())


def test_a_system_taken_off_stays_on_record_and_leaves_the_boards_fitted_after():
    study = _judged_study()
    judged = Judgment.objects.filter(study=study).count()
    snapshot_refit_study(study_id=study.pk, trigger="manual")
    before = LeaderboardSnapshot.objects.filter(study=study, judges="human").latest()
    assert {row["system"] for row in before.result["systems"]} == {GPT, CLAUDE, HUMAN}
    with pytest.raises(ValueError, match="say why"):
        record.system_take_off(study=study, system=CLAUDE, reason="  ")
    record.system_take_off(study=study, system=CLAUDE, reason="model retired by vendor", by="boss")
    with pytest.raises(ValueError, match="already off"):
        record.system_take_off(study=study, system=CLAUDE, reason="again")
    snapshot_refit_study(study_id=study.pk, trigger="manual")
    after = LeaderboardSnapshot.objects.filter(study=study, judges="human").latest()
    assert {row["system"] for row in after.result["systems"]} == {GPT, HUMAN}
    assert after.result["sampling"]["off_board"] == [CLAUDE]
    assert Judgment.objects.filter(study=study).count() == judged  # nothing deleted
    # The older snapshot still shows it; the record lists it as off the board.
    before.refresh_from_db()
    assert CLAUDE in {row["system"] for row in before.result["systems"]}
    history = _history(study.slug)
    assert {"system": CLAUDE, "on_board": False} in history["systems"]
    removed = [e for e in history["events"] if e["kind"] == "system_removed"]
    assert removed[0]["system"] == CLAUDE and removed[0]["reason"] == "model retired by vendor"
    assert removed[0]["at"] and removed[0]["by"] == "boss"
    added = [e["system"] for e in history["events"] if e["kind"] == "system_added"]
    assert sorted(added) == sorted([GPT, CLAUDE, HUMAN])  # each once, however often synced
    record.system_put_back(study=study, system=CLAUDE, reason="back in service")
    assert record.off_board(study) == []


def test_each_snapshot_states_its_sampling_policy_and_each_systems_share():
    study = _judged_study(adaptive_assignment=True, adaptive_goal="top_k", adaptive_k=1)
    snapshot_refit_study(study_id=study.pk, trigger="manual")
    snapshot = LeaderboardSnapshot.objects.filter(study=study, judges="human").latest()
    sampling = snapshot.result["sampling"]
    assert sampling["policy"] == {"policy": "adaptive", "goal": "top_k", "k": 1}
    # Three systems, every pair judged alike: each is in two thirds of the judgments.
    assert sampling["shares"] == {GPT: 0.6667, CLAUDE: 0.6667, HUMAN: 0.6667}
    rows = _history(study.slug)["snapshots"]
    assert rows and all(r["at"] and r["sampling"] for r in rows)


def test_changing_the_goal_in_the_studio_is_an_event(admin_client):
    study = build_study(n_contexts=1)
    url = reverse("studio:edit", args=[study.slug])
    form = admin_client.get(url).context["form"]
    data = {k: v for k, v in form.initial.items() if v is not None and k != "family_aliases"}
    data.update(adaptive_assignment="on", adaptive_goal="anchor", adaptive_anchor="nobody")
    refused = admin_client.post(url, data).content.decode()
    assert "No system is called &#x27;nobody&#x27;" in refused
    data["adaptive_anchor"] = HUMAN
    assert admin_client.post(url, data).status_code == 302
    assert admin_client.post(url, data).status_code == 302  # unchanged: no second event
    events = list(BoardEvent.objects.filter(study=study, kind="policy_changed"))
    assert [e.detail for e in events] == [{"policy": "adaptive", "goal": "anchor", "anchor": HUMAN}]
    assert events[0].by == "boss"


def test_taking_a_system_off_in_the_studio_needs_a_study_admin_and_a_reason(admin_client):
    study = _judged_study()
    url = reverse("ranking:system-take-off", args=[study.slug])
    assert Client().post(url, {"system": GPT, "reason": "x"}).status_code in (302, 403)
    assert not BoardEvent.objects.filter(kind="system_removed").exists()
    admin_client.post(url, {"system": GPT, "reason": ""})
    assert not BoardEvent.objects.filter(kind="system_removed").exists()
    response = admin_client.post(url, {"system": GPT, "reason": "duplicate of another entry"})
    assert response.status_code == 302
    assert record.off_board(study) == [GPT]
    page = admin_client.get(reverse("ranking:history", args=[study.slug])).content.decode()
    assert "duplicate of another entry" in page and "(off the board)" in page
    assert "pairs closed to raters" in page
    assert "System taken off the board" in page and "system_removed" not in page  # in words


def test_the_refit_plans_for_the_studys_goal_and_the_planner_reads_it():
    study = _judged_study(adaptive_assignment=True, adaptive_goal="best")
    design_refresh(study=study, data=study_data_load(study), params=params_resolve("default"))
    plan = DesignStatus.objects.get(study=study).goal_plan
    assert plan["goal"] == "best" and plan["judged"] == 27
    assert plan["uniform"] and plan["adaptive"] and plan["adaptive"] <= plan["uniform"]
    assert PairPriority.objects.filter(study=study).count() == study.pairs.count()
    systems = [GPT, CLAUDE, HUMAN]
    study.adaptive_goal, study.adaptive_anchor = "anchor", ""
    assert study_goal(study, systems).kind == "order"  # no anchor: the whole order is served
    study.adaptive_anchor = CLAUDE
    assert study_goal(study, systems).anchor == 1


def test_the_pairs_page_shows_the_goal_and_what_each_design_needs(admin_client):
    study = _judged_study(adaptive_assignment=True, adaptive_goal="top_k", adaptive_k=1)
    url = reverse("studio:pairs", args=[study.slug])
    assert "The prediction appears after" in admin_client.get(url).content.decode()
    design_refresh(study=study, data=study_data_load(study), params=params_resolve("default"))
    plan = DesignStatus.objects.get(study=study).goal_plan
    html = admin_client.get(url).content.decode()
    assert "The top k systems" in html and "(k = 1)" in html
    assert f"<strong>{plan['uniform']} judgments</strong>" in html
    assert f"<strong>{plan['adaptive']}</strong> with adaptive assignment" in html


def _systems_offered(study, raters: int) -> set[str]:
    """Which systems new raters are offered, each taking every item they can."""
    system_of = dict(
        Completion.objects.filter(system__study=study).values_list("pk", "system__name")
    )
    offered: set[str] = set()
    for _ in range(raters):
        rater = rater_consent(rater=rater_enter(study=study))
        assignment = assignment_next(rater=rater)
        while assignment is not None:
            pair = assignment.pair
            offered |= {system_of[pair.completion_a_id], system_of[pair.completion_b_id]}
            _, assignment = judgment_submit_and_next(rater=rater, assignment=assignment, choice=3)
    return offered


def test_a_system_taken_off_is_offered_to_no_rater_until_it_is_put_back():
    study = build_study(n_contexts=3, quality_check_rate=0, items_per_rater=9, quota=3)
    # A rater holds an item on one of GPT's pairs when it is taken off: they may still answer it.
    gpt_completions = set(
        Completion.objects.filter(system__name=GPT, system__study=study).values_list(
            "pk", flat=True
        )
    )
    holder = rater_consent(rater=rater_enter(study=study))
    held = assignment_next(rater=holder)
    while not {held.pair.completion_a_id, held.pair.completion_b_id} & gpt_completions:
        _, held = judgment_submit_and_next(rater=holder, assignment=held, choice=3)
    event = record.system_take_off(study=study, system=GPT, reason="retired by its vendor")
    gpt_pairs = study.pairs.filter(
        Q(completion_a__system__name=GPT) | Q(completion_b__system__name=GPT)
    )
    assert event.detail == {"pairs_closed": gpt_pairs.count()}
    result = judgment_submit(rater=holder, assignment=held, choice=2)
    assert result.judgment is not None  # the held item is stored
    assert _systems_offered(study, raters=4) == {CLAUDE, HUMAN}
    assert all(p.n_judgments == p.quota for p in gpt_pairs)
    removed = [e for e in _history(study.slug)["events"] if e["kind"] == "system_removed"]
    assert removed[0]["pairs_closed"] == gpt_pairs.count()
    back = record.system_put_back(study=study, system=GPT, reason="vendor reversed it")
    assert back.detail["pairs_reopened"] == gpt_pairs.count()
    assert set(gpt_pairs.values_list("quota", flat=True)) == {3}
    assert GPT in _systems_offered(study, raters=2)


def test_a_pair_of_two_systems_taken_off_reopens_only_when_both_are_back():
    study = build_study(n_contexts=1, quality_check_rate=0)
    record.system_take_off(study=study, system=GPT, reason="one")
    record.system_take_off(study=study, system=CLAUDE, reason="two")
    both = study.pairs.get(
        Q(completion_a__system__name=GPT, completion_b__system__name=CLAUDE)
        | Q(completion_a__system__name=CLAUDE, completion_b__system__name=GPT)
    )
    record.system_put_back(study=study, system=GPT)
    both.refresh_from_db()
    assert both.quota == 0  # CLAUDE is still off
    assert study.pairs.filter(quota=5).count() == 1  # GPT against the human writers
    record.system_put_back(study=study, system=CLAUDE)
    assert set(study.pairs.values_list("quota", flat=True)) == {5}


def test_once_every_system_has_its_event_the_sync_reads_no_judgment(
    django_assert_max_num_queries,
):
    study = _judged_study()
    assert record.systems_added_sync(study) == 3
    with django_assert_max_num_queries(2):  # the events recorded and the study's systems
        assert record.systems_added_sync(study) == 0
    events = BoardEvent.objects.filter(study=study, kind="system_added")
    assert sorted(events.values_list("system", flat=True)) == sorted([GPT, CLAUDE, HUMAN])


def test_a_system_added_is_dated_at_its_first_counted_judgment():
    from datetime import UTC, datetime

    study = _judged_study()
    judgments = Judgment.objects.filter(study=study, pair__isnull=False, quality_check=False)
    base = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    for i, judgment in enumerate(judgments.order_by("id")):
        Judgment.objects.filter(pk=judgment.pk).update(submitted_at=base.replace(day=1 + i % 20))
    # The earliest judgment of all is a quality check: it does not count.
    check = judgments.first()
    Judgment.objects.filter(pk=check.pk).update(quality_check=True, submitted_at=base.replace(1999))
    # Every judgment naming the human writers has lost its time but one.
    writers = Q(pair__completion_a__system__name=HUMAN) | Q(pair__completion_b__system__name=HUMAN)
    judgments.filter(writers).update(submitted_at=None)
    kept = judgments.filter(writers).order_by("id").last()
    Judgment.objects.filter(pk=kept.pk).update(submitted_at=base.replace(day=28))
    expected = {}
    for name in (GPT, CLAUDE, HUMAN):
        named = Q(pair__completion_a__system__name=name) | Q(pair__completion_b__system__name=name)
        times = [t for t in judgments.filter(named).values_list("submitted_at", flat=True) if t]
        expected[name] = min(times)

    assert record.systems_added_sync(study) == 3
    events = BoardEvent.objects.filter(study=study, kind="system_added")
    assert {e.system: e.at for e in events} == expected
    assert expected[HUMAN] == base.replace(day=28)
    assert all(e.at.year == 2026 for e in events)

"""One outcome per rater, read the same on the raters page, the API and the CSV for Prolific."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from recruitment.models import ProlificSubmission
from recruitment.selectors import rater_outcomes

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(user)
    return client


def _gone(study, name: str, status: str) -> None:
    ProlificSubmission.objects.create(
        study=study,
        submission_id=f"sub-{name}",
        participant_id=f"PID-{name}",
        status=status,
        synced_at=timezone.now(),
    )


def test_each_kind_of_rater_gets_its_outcome_and_action(people):
    _gone(people, "leaving", "RETURNED")
    _gone(people, "working", "TIMED-OUT")
    rows = {row.rater.pseudonym: row for row in rater_outcomes(study=people)}
    got = {
        name: (row.outcome, row.action, row.excluded_from_analysis) for name, row in rows.items()
    }
    assert got == {
        "r-completed": ("completed", "APPROVE", False),
        "r-screened": ("screened_out", "SCREEN_OUT", False),
        "r-stopped": ("stopped", "NONE", False),
        "r-cheat": ("excluded", "REJECT", True),
        "r-sloppy": ("excluded", "APPROVE", True),  # one failed attention check: not rejectable
        "r-leaving": ("returned", "NONE", False),
        "r-working": ("timed_out", "NONE", False),
        "r-invited": (None, "NONE", False),
    }
    assert rows["r-stopped"].minutes_worked == 6.0
    assert rows["r-cheat"].failed_attention == 2 and rows["r-sloppy"].failed_attention == 1
    assert "fewer than the 2 Prolific requires" in rows["r-sloppy"].reason


def test_a_study_that_pays_early_leavers_as_complete_approves_them_and_says_so(people):
    people.care.fail_outcome = people.care.stop_outcome = "completion"
    people.care.save()
    rows = {row.rater.pseudonym: row for row in rater_outcomes(study=people)}
    assert rows["r-screened"].action == rows["r-stopped"].action == "APPROVE"
    assert "pays this as complete" in rows["r-stopped"].reason


def test_the_csv_for_prolific_has_the_contract_columns_and_never_approves_a_screen_out(
    admin_client, people
):
    response = admin_client.get(reverse("studio:raters_csv", args=[people.slug]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert list(rows[0]) == [
        "participant_id", "outcome", "action", "excluded_from_analysis", "reason",
        "minutes_worked", "bonus",
    ]  # fmt: skip
    by_id = {row["participant_id"]: row for row in rows}
    assert "PID-invited" not in by_id and len(rows) == 7  # panel raters only
    assert by_id["PID-screened"]["action"] == "SCREEN_OUT"
    assert by_id["PID-stopped"]["action"] == "NONE"
    assert by_id["PID-stopped"]["bonus"] == "0.90"  # 6 minutes at the default 9.00 an hour
    assert by_id["PID-cheat"]["action"] == "REJECT"
    assert by_id["PID-sloppy"]["action"] == "APPROVE"
    assert by_id["PID-sloppy"]["excluded_from_analysis"] == "yes"
    assert by_id["PID-completed"]["outcome"] == "completed"
    assert by_id["PID-completed"]["minutes_worked"] == "12.0"


def test_the_api_gives_each_rater_its_outcome_by_pseudonym_only(admin_client, people):
    _gone(people, "leaving", "RETURNED")
    response = admin_client.get(f"/api/studies/{people.slug}/raters/")
    assert response.status_code == 200
    by_rater = {row["rater"]: row for row in response.json()}
    assert by_rater["r-leaving"]["outcome"] == "returned"
    assert by_rater["r-screened"]["outcome"] == "screened_out"
    assert by_rater["r-invited"]["outcome"] is None
    assert "PID-" not in response.content.decode()  # no Prolific id leaves through the API


def test_the_api_and_page_refuse_anyone_but_a_study_admin(client, people):
    assert client.get(f"/api/studies/{people.slug}/raters/").status_code in (401, 403)
    assert client.get(reverse("recruitment:prolific", args=[people.slug])).status_code == 302


def test_the_raters_page_shows_the_outcomes(admin_client, people):
    html = admin_client.get(reverse("studio:raters", args=[people.slug])).content.decode()
    assert "1 completed, 1 screened out, 1 stopped early, 2 excluded from the analysis" in html
    row = html[html.index("r-cheat") : html.index("r-sloppy")]
    assert "excluded" in row and "REJECT" in row


def _count_their_judgments(rater) -> None:
    """The factory stores a judgment without counting it on its pair: count it, as a submit does."""
    from annotation.models import Judgment, Pair

    judgments = Judgment.objects.filter(rater=rater, pair__isnull=False)
    assert judgments.exists()
    for judgment in judgments:
        Pair.objects.filter(pk=judgment.pair_id).update(n_judgments=1)


def _withdraw_the_completed_rater(study):
    """The finished rater withdraws through the stop page's service (study allows it)."""
    from annotation.models import Judgment, Rater
    from care.services import rater_stop_and_withdraw

    study.care.allow_withdrawal = True
    study.care.save()
    rater = Rater.objects.get(study=study, pseudonym="r-completed")
    _count_their_judgments(rater)
    rater_stop_and_withdraw(rater=rater)
    rater.refresh_from_db()
    assert rater.withdrawn_at is not None
    assert not Judgment.objects.filter(rater=rater).exists()
    return rater


def test_a_withdrawn_rater_is_stopped_excluded_and_never_approved(admin_client, people):
    rater = _withdraw_the_completed_rater(people)
    on = timezone.localdate(rater.withdrawn_at).isoformat()
    row = {r.rater.pseudonym: r for r in rater_outcomes(study=people)}["r-completed"]
    assert (row.outcome, row.action, row.excluded_from_analysis) == ("stopped", "NONE", True)
    assert row.reason.startswith(f"withdrew their answers on {on}")

    response = admin_client.get(reverse("studio:raters_csv", args=[people.slug]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    csv_row = {r["participant_id"]: r for r in rows}["PID-completed"]
    assert (csv_row["outcome"], csv_row["action"]) == ("stopped", "NONE")
    assert csv_row["excluded_from_analysis"] == "yes"
    assert f"withdrew their answers on {on}" in csv_row["reason"]

    api = {r["rater"]: r for r in admin_client.get(f"/api/studies/{people.slug}/raters/").json()}
    assert api["r-completed"]["outcome"] == "stopped"
    assert api["r-completed"]["excluded_from_analysis"] is True
    assert api["r-completed"]["action"] == "NONE"

    html = admin_client.get(reverse("studio:raters", args=[people.slug])).content.decode()
    assert "0 completed, 1 screened out, 2 stopped early" in html
    assert f"withdrew their answers on {on}" in html


def test_a_rater_who_withdrew_without_a_stop_is_still_stopped_not_completed(people):
    from annotation.models import Rater
    from annotation.services import rater_withdraw
    from care.selectors import care_forget

    rater = Rater.objects.get(study=people, pseudonym="r-completed")
    _count_their_judgments(rater)
    rater_withdraw(rater=rater)  # finished, then withdrew: no stop record
    row = {r.rater.pseudonym: r for r in rater_outcomes(study=people)}["r-completed"]
    assert (row.outcome, row.action, row.excluded_from_analysis) == ("stopped", "NONE", True)
    people.care.stop_outcome = "completion"  # the study pays a stop as complete, and says so
    people.care.save()
    care_forget(study=people)  # as the Care page does after a change
    row = {r.rater.pseudonym: r for r in rater_outcomes(study=people)}["r-completed"]
    assert row.action == "APPROVE" and "pays this as complete" in row.reason

"""Publish, sync and pay against the fake Prolific server (`python -m fakes.prolific`), started
on a free port: what reaches Prolific is read back from the server's own record of calls."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.models import Rater
from annotation.services.raters import active_rater_count
from recruitment.models import ProlificAction, ProlificSettings, ProlificSubmission
from recruitment.selectors import rater_outcomes
from recruitment.services import prolific_token_set
from tests.factories import WriterFactory, WritingFactory

from .conftest import TOKEN, assignment_leased

pytestmark = pytest.mark.django_db


def prolific(*args: str) -> str:
    out = StringIO()
    call_command("prolific", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def ready(people, fake_prolific):
    prolific_token_set(study=people, token=TOKEN)
    ProlificSettings.objects.filter(study=people).update(
        hourly_rate=Decimal("12.00"), estimated_minutes=15, places=40,
        bonus_per_rater=Decimal("0.50"), bonus_per_writing=Decimal("0.25"),
    )  # fmt: skip
    return people


def published(study, fake) -> str:
    prolific("publish", "--study", study.slug, "--base-url", "https://heart.example.org")
    return ProlificSettings.objects.get(study=study).prolific_study_id


def test_the_token_is_stored_encrypted_and_sent_as_prolifics_header(ready, fake_prolific):
    pay = ProlificSettings.objects.get(study=ready)
    assert TOKEN not in pay.api_token_encrypted and pay.api_token_hint == "…6789"
    published(ready, fake_prolific)
    assert all(call["authorised"] for call in fake_prolific.calls())
    prolific_token_set(study=ready, token="someone-elses-token-42")
    with pytest.raises(CommandError, match="401"):
        prolific("sync", "--study", ready.slug)


def test_a_dry_run_publish_lists_the_codes_and_sends_nothing(ready, fake_prolific):
    out = prolific("publish", "--study", ready.slug, "--dry-run")
    assert "Dry run: nothing sent" in out
    assert (
        f"code {ready.completion_code} (COMPLETED): MANUALLY_REVIEW, ADD_TO_PARTICIPANT_GROUP"
        in out
    )
    assert f"code {ready.care.screenout_code} (FIXED_SCREENOUT): MANUALLY_REVIEW" in out
    assert f"code {ready.care.stop_code} (OTHER): REQUEST_RETURN" in out
    assert fake_prolific.calls() == []


def test_publish_creates_the_study_with_one_code_per_outcome_and_a_group(ready, fake_prolific):
    study_id = published(ready, fake_prolific)
    assert fake_prolific.api_calls() == [
        ("POST", "/api/v1/participant-groups/"),
        ("POST", "/api/v1/studies/"),
        ("POST", f"/api/v1/studies/{study_id}/transition/"),
    ]
    state = fake_prolific.state()
    study = state["studies"][study_id]
    assert study["status"] == "ACTIVE" and study["reward"] == 300  # 15 min at 12.00 an hour
    assert study["total_available_places"] == 40
    assert study["external_study_url"].startswith("https://heart.example.org/r/")
    codes = {c["code"]: [a["action"] for a in c["actions"]] for c in study["completion_codes"]}
    assert codes == {
        ready.completion_code: ["MANUALLY_REVIEW", "ADD_TO_PARTICIPANT_GROUP"],
        ready.care.screenout_code: ["MANUALLY_REVIEW"],
        ready.care.stop_code: ["REQUEST_RETURN"],
    }
    with pytest.raises(CommandError, match="already published"):
        prolific("publish", "--study", ready.slug)


def test_sync_frees_the_places_of_a_returned_or_timed_out_rater_at_once(ready, fake_prolific):
    study_id = published(ready, fake_prolific)
    leaving = Rater.objects.get(pseudonym="r-leaving")
    working = Rater.objects.get(pseudonym="r-working")
    active_before = active_rater_count(study=ready)
    assert assignment_leased(leaving)
    fake_prolific.move(fake_prolific.add_submission(study_id, "PID-leaving")["id"], "return")
    fake_prolific.move(fake_prolific.add_submission(study_id, "PID-working")["id"], "time-out")

    out = prolific("sync", "--study", ready.slug)

    assert "PID-leaving: 1 open item(s) freed" in out
    assert "PID-working: 1 open item(s) freed" in out
    assert not assignment_leased(leaving)
    leaving.refresh_from_db()
    working.refresh_from_db()
    assert leaving.finished_at and working.finished_at
    assert active_before == 3  # the two holding an item, and the invited rater who just came
    assert active_rater_count(study=ready) == 1
    outcomes = {r.rater.pseudonym: r.outcome for r in rater_outcomes(study=ready)}
    assert outcomes["r-leaving"] == "returned" and outcomes["r-working"] == "timed_out"


def _everyone_submits(ready, fake) -> tuple[str, dict[str, str]]:
    study_id = published(ready, fake)
    codes = {
        "completed": ready.completion_code,
        "screened": ready.care.screenout_code,
        "stopped": ready.care.stop_code,
        "cheat": ready.completion_code,
        "sloppy": ready.completion_code,
    }
    subs = {}
    for name, code in codes.items():
        sub = fake.add_submission(study_id, f"PID-{name}")
        fake.move(sub["id"], "complete", code)
        subs[name] = sub["id"]
    return study_id, subs


def test_a_dry_run_pay_lists_who_gets_what_and_why_and_sends_nothing(ready, fake_prolific):
    _everyone_submits(ready, fake_prolific)
    before = len(fake_prolific.calls())
    prolific("sync", "--study", ready.slug)
    before = len(fake_prolific.calls())

    out = prolific("pay", "--study", ready.slug, "--dry-run")

    assert len(fake_prolific.calls()) == before
    assert "PID-completed: APPROVE (finished the study" in out
    assert "PID-screened: SCREEN_OUT" in out
    assert "PID-cheat: REJECT" in out and "failed attention checks: 2" in out
    assert "PID-sloppy: APPROVE (excluded from the analysis" in out
    assert "PID-stopped: bonus 1.20 GBP" in out  # 6 minutes at 12.00 an hour
    assert "PID-completed: bonus 0.50 GBP" in out
    assert "PID-cheat: bonus" not in out
    assert not ProlificAction.objects.exists()


def test_pay_approves_screens_out_rejects_and_pays_bonuses_once(ready, fake_prolific):
    study_id, subs = _everyone_submits(ready, fake_prolific)
    writer = WriterFactory(study=ready, external_id="PID-writer")
    WritingFactory.create_batch(3, writer=writer, status="accepted")
    fake_prolific.add_submission(study_id, "PID-writer")

    prolific("pay", "--study", ready.slug)

    calls = fake_prolific.calls()
    paths = [(c["method"], c["path"]) for c in calls]
    approve = next(c for c in calls if c["path"] == "/api/v1/submissions/bulk-approve/")
    assert sorted(approve["body"]["submission_ids"]) == sorted([subs["completed"], subs["sloppy"]])
    screen = next(c for c in calls if c["path"].endswith("/screen-out-submissions/"))
    assert screen["body"]["submission_ids"] == [subs["screened"]]
    reject = next(
        c for c in calls if c["path"].endswith("/transition/") and "submissions" in c["path"]
    )
    assert reject["path"] == f"/api/v1/submissions/{subs['cheat']}/transition/"
    assert (
        reject["body"]["action"] == "REJECT"
        and reject["body"]["rejection_category"] == "FAILED_CHECK"
    )
    state = fake_prolific.state()
    statuses = {s["participant_id"]: s["status"] for s in state["submissions"].values()}
    assert statuses["PID-completed"] == statuses["PID-sloppy"] == "APPROVED"
    assert statuses["PID-screened"] == "SCREENED-OUT" and statuses["PID-cheat"] == "REJECTED"
    assert statuses["PID-stopped"] == "ACTIVE"  # asked to return; never approved as complete
    (bonus,) = state["bonuses"].values()
    lines = dict(line.split(",") for line in bonus["csv_bonuses"].splitlines())
    assert lines == {"PID-completed": "0.50", "PID-sloppy": "0.50", "PID-stopped": "1.20",
                     "PID-writer": "0.75"}  # fmt: skip
    assert bonus["paid"] == 1
    # The qualified raters (the completion code's holders) are in the group; those screened
    # out or stopped early are not.
    members = next(iter(state["groups"].values()))["participant_ids"]
    assert "PID-completed" in members
    assert "PID-screened" not in members and "PID-stopped" not in members
    assert ("POST", f"/api/v1/bulk-bonus-payments/{bonus['id']}/pay/") in paths

    n = len(calls)
    out = prolific("pay", "--study", ready.slug)  # again: only the sync is sent
    again = fake_prolific.api_calls()[n:]
    assert again == [("GET", f"/api/v1/studies/{study_id}/submissions/")]
    assert "nothing to do" in out
    assert fake_prolific.state()["bonuses"][bonus["id"]]["paid"] == 1


def test_pay_waits_for_a_submission_still_active(ready, fake_prolific):
    study_id = published(ready, fake_prolific)
    fake_prolific.add_submission(study_id, "PID-completed")  # started, not yet submitted
    out = prolific("pay", "--study", ready.slug)
    assert "PID-completed: APPROVE later, submission ACTIVE" in out
    assert not any("bulk-approve" in path for _, path in fake_prolific.api_calls())


def test_without_a_token_or_before_publishing_the_command_says_what_to_do(people, fake_prolific):
    with pytest.raises(CommandError, match="publish first"):
        prolific("sync", "--study", people.slug)
    with pytest.raises(CommandError, match="no Prolific API token"):
        prolific("publish", "--study", people.slug)


def test_a_refused_send_is_never_sent_again_and_pay_says_to_check_it(ready, fake_prolific):
    published(ready, fake_prolific)
    ghost = WriterFactory(study=ready, external_id="PID-ghost")
    WritingFactory(writer=ghost, status="accepted")
    # Seen here but unknown to Prolific: the bonus set-up is refused after it was recorded.
    ProlificSubmission.objects.create(
        study=ready, submission_id="x-ghost", participant_id="PID-ghost", status="APPROVED",
        synced_at=timezone.now(),
    )  # fmt: skip
    with pytest.raises(CommandError, match="took no part"):
        prolific("pay", "--study", ready.slug)
    n = len(fake_prolific.calls())
    out = prolific("pay", "--study", ready.slug)
    assert "PID-ghost: BONUS was sent once and its answer never came back" in out
    again = [p for _, p in fake_prolific.api_calls()[n:]]
    assert not any("bonus" in p for p in again)  # the uncertain bonus is not paid twice


def test_beat_reads_back_every_published_study_and_frees_places(ready, fake_prolific):
    from recruitment.tasks import prolific_sync_published

    study_id = published(ready, fake_prolific)
    fake_prolific.move(fake_prolific.add_submission(study_id, "PID-leaving")["id"], "return")
    assert prolific_sync_published() == [ready.pk]
    assert not assignment_leased(Rater.objects.get(pseudonym="r-leaving"))


def test_a_study_created_but_not_published_is_published_not_created_again(ready, fake_prolific):
    import httpx

    from recruitment.services import completion_codes

    body = {
        "name": "left unpublished", "external_study_url": "https://heart.example.org/r/x/",
        "total_available_places": 1, "reward": 100,
        "completion_codes": completion_codes(study=ready, group_id=""),
    }  # fmt: skip
    made = httpx.post(
        f"{fake_prolific.url}/api/v1/studies/", json=body,
        headers={"Authorization": f"Token {TOKEN}"},
    ).json()  # fmt: skip
    ProlificSettings.objects.filter(study=ready).update(
        prolific_study_id=made["id"], participant_group=False
    )
    n = len(fake_prolific.calls())
    prolific("publish", "--study", ready.slug)
    assert fake_prolific.api_calls()[n:] == [("POST", f"/api/v1/studies/{made['id']}/transition/")]
    assert fake_prolific.state()["studies"][made["id"]]["status"] == "ACTIVE"


def test_a_rater_whose_submission_came_back_returned_sees_no_code_and_no_item(ready, fake_prolific):
    import re

    from django.test import Client

    from care.models import CareSettings
    from care.selectors import care_forget

    CareSettings.objects.filter(study=ready).update(qualification_enabled=False)
    care_forget(study=ready)
    submit = re.compile(r'action="(/r/a/[^/"]+/submit/)"')
    client, base = Client(), f"/r/{ready.invite_token}"
    client.get(f"{base}/?PROLIFIC_PID=PID-back&STUDY_ID=S&SESSION_ID=X")
    client.post(f"{base}/consent/", {"agree": "on"})
    page = client.get(f"{base}/item/").content.decode()
    answered = 0
    while (match := submit.search(page)) and answered < 40:
        page = client.post(match.group(1), {"choice": "3"}, HTTP_HX_REQUEST="true")
        page, answered = page.content.decode(), answered + 1
    assert answered >= 1
    code = ready.completion_code
    assert code in client.get(f"{base}/done/").content.decode()

    study_id = published(ready, fake_prolific)
    fake_prolific.move(fake_prolific.add_submission(study_id, "PID-back")["id"], "return")
    prolific("sync", "--study", ready.slug)

    done = client.get(f"{base}/done/", follow=True).content.decode()
    assert code not in done and "submission was returned" in done
    item = client.get(f"{base}/item/", follow=True).content.decode()
    assert not submit.search(item) and "submission was returned" in item
    assert "no completion code" in item

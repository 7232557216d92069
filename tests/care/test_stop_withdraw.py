"""Stop, skip and withdraw are honest, through the real URLs: the stop pages say what becomes
of the answers given, an item open at the stop is released and a later answer to it refused,
withdrawn answers leave every board and export, and skips are bounded."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.judgment_export import judgments_stream
from annotation.models import Assignment, Judgment, Pair, Rater
from annotation.views import STOPPED_NOTICE
from care.selectors import care_forget, skip_limit, time_worked_rows
from ranking.selectors import judgments_queryset, judgments_state
from tests.factories import CareSettingsFactory
from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def _enter(client, study, pid="PID-stop"):
    client.get(f"/r/{study.invite_token}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X")
    client.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    return Rater.objects.get(study=study, external_id=pid)


def _open(rater) -> Assignment:
    return Assignment.objects.get(rater=rater, status="leased")


def _judge(client, rater, n: int) -> None:
    for _ in range(n):
        client.get(f"/r/{rater.study.invite_token}/item/")
        client.post(reverse("annotation:submit", args=[_open(rater).token]), {"choice": "2"})


def _study(**care):
    study = build_study(n_contexts=3, quality_check_rate=0, items_per_rater=4)
    if care:
        CareSettingsFactory(study=study, **care)
    care_forget(study=study)
    return study


def test_the_stop_page_says_the_answers_given_are_kept(client):
    study = _study()
    rater = _enter(client, study)
    _judge(client, rater, 2)
    confirm = client.get(f"/r/{study.invite_token}/stop/").content.decode()
    assert "The 2 answers you have given are kept and count in the study" in confirm
    assert "withdraw" not in confirm  # the study does not allow it (the default)
    stopped = client.post(f"/r/{study.invite_token}/stop/", {"action": "stop"}).content.decode()
    assert "The 2 answers you gave are kept" in stopped
    # Asking to withdraw where the study does not allow it changes nothing.
    client.post(f"/r/{study.invite_token}/stop/", {"action": "withdraw"})
    assert Judgment.objects.filter(rater=rater).count() == 2
    assert Rater.objects.get(pk=rater.pk).withdrawn_at is None


def test_an_item_open_at_the_stop_is_released_and_a_later_answer_refused(client):
    study = _study()
    rater = _enter(client, study)
    _judge(client, rater, 1)
    client.get(f"/r/{study.invite_token}/item/")
    open_item = _open(rater)
    pair = Pair.objects.get(pk=open_item.pair_id)
    client.post(f"/r/{study.invite_token}/stop/", {"action": "stop"})
    open_item.refresh_from_db()
    assert open_item.status == "released"
    # The pair's place is free for another rater at once: no running lease holds it.
    assert not Assignment.objects.filter(pair=pair, status="leased").exists()
    # The stopped rater's late answer, plain and with htmx: refused, said so, never stored.
    url = reverse("annotation:submit", args=[open_item.token])
    page = client.post(url, {"choice": "1"}, follow=True).content.decode()
    assert STOPPED_NOTICE in page and "you have stopped" in page
    response = client.post(url, {"choice": "5"}, **HTMX)
    assert response.headers["HX-Redirect"].endswith("/item/")
    after = client.get(response.headers["HX-Redirect"], follow=True).content.decode()
    assert STOPPED_NOTICE in after
    assert not Judgment.objects.filter(assignment=open_item).exists()
    assert Judgment.objects.filter(rater=rater).count() == 1


def test_a_withdrawn_raters_judgments_leave_every_board_and_export(client):
    study = _study(allow_withdrawal=True)
    rater = _enter(client, study)
    _judge(client, rater, 3)
    keeper = _enter(client.__class__(), study, pid="PID-keeps")
    pairs = dict(Pair.objects.filter(study=study).values_list("pk", "n_judgments"))
    before = judgments_state(study)
    exported_before = b"".join(judgments_stream(study=study, fmt="jsonl")).decode()
    assert exported_before.count("\n") == 3 and rater.pseudonym in exported_before
    assert judgments_queryset(study).filter(rater=rater).count() == 3
    confirm = client.get(f"/r/{study.invite_token}/stop/").content.decode()
    assert "Stop and withdraw my answers" in confirm
    page = client.post(f"/r/{study.invite_token}/stop/", {"action": "withdraw"}).content.decode()
    assert "You withdrew on" in page and "deleted from the study" in page
    rater.refresh_from_db()
    assert rater.withdrawn_at is not None and rater.care.stopped_at is not None
    assert rater.care.seconds_worked is not None  # still paid for the time worked
    assert not Judgment.objects.filter(rater=rater).exists()
    assert not judgments_queryset(study).filter(rater=rater).exists()
    exported = b"".join(judgments_stream(study=study, fmt="jsonl")).decode()
    assert exported.count("\n") == 0 and rater.pseudonym not in exported
    assert judgments_state(study) != before  # the boards refit without them
    # The places they took are free again.
    after = dict(Pair.objects.filter(study=study).values_list("pk", "n_judgments"))
    assert sum(pairs.values()) - sum(after.values()) == 3
    assert keeper.withdrawn_at is None
    row = next(r for r in time_worked_rows(study) if r["pseudonym"] == rater.pseudonym)
    assert row["outcome"] == "stopped (code), withdrew" and row["stopped"]


def test_a_rater_who_stopped_may_still_withdraw_from_the_stop_page(client):
    study = _study(allow_withdrawal=True)
    rater = _enter(client, study)
    _judge(client, rater, 2)
    stopped = client.post(f"/r/{study.invite_token}/stop/", {"action": "stop"}).content.decode()
    assert "The 2 answers you gave are kept" in stopped and "Withdraw my answers" in stopped
    client.post(f"/r/{study.invite_token}/stop/", {"action": "withdraw"})
    assert not Judgment.objects.filter(rater=rater).exists()
    assert "You withdrew on" in client.get(f"/r/{study.invite_token}/stop/").content.decode()


def test_a_rater_who_only_skips_gets_no_more_items_than_the_limit_and_no_code(client):
    study = _study()
    rater = _enter(client, study)
    limit = skip_limit(study=study)
    assert limit == study.items_per_rater == 4
    seen = set()
    for _ in range(limit):
        page = client.get(f"/r/{study.invite_token}/item/")
        assert page.status_code == 200
        token = _open(rater).token
        seen.add(token)
        client.post(f"/r/a/{token}/skip/", {"reason": ""})
    assert len(seen) == limit
    end = client.get(f"/r/{study.invite_token}/item/", follow=True).content.decode()
    assert f"You skipped {limit} items, the most this study allows" in end
    assert "no completion code" in end and study.completion_code not in end
    assert "completion-code" not in end
    assert not Assignment.objects.filter(rater=rater, status="leased").exists()
    done = client.get(f"/r/{study.invite_token}/done/", follow=True).content.decode()
    assert study.completion_code not in done and "completion-code" not in done
    assert rater.care.stop_outcome == "return"
    row = next(r for r in time_worked_rows(study) if r["pseudonym"] == rater.pseudonym)
    assert row["outcome"] == "stopped at the skip limit (return)" and row["skips"] == limit


def test_a_rater_who_answered_keeps_the_stop_code_at_the_skip_limit(client):
    study = _study(stop_outcome="code", stop_code="STOPCODE1")
    rater = _enter(client, study)
    _judge(client, rater, 1)
    for _ in range(skip_limit(study=study)):
        client.get(f"/r/{study.invite_token}/item/")
        if not Assignment.objects.filter(rater=rater, status="leased").exists():
            break
        client.post(f"/r/a/{_open(rater).token}/skip/", {"reason": ""})
    end = client.get(f"/r/{study.invite_token}/item/", follow=True).content.decode()
    assert "the most this study allows" in end and "STOPCODE1" in end
    assert "The 1 answer you gave is kept" in end


# --- The studio's care page: a mistyped context id and malformed support links -------------


@pytest.fixture
def admin_client(client):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(user)
    return client


def test_a_typo_in_a_context_id_on_the_care_page_ends_on_a_clear_message(admin_client):
    study = _study()
    url = f"/studio/{study.slug}/care/notes/"
    response = admin_client.post(url, {"context": "esconv-secret-ctx-0x", "text": "Grief."})
    html = response.content.decode()
    assert response.status_code == 422
    assert "This study has no context with the id “esconv-secret-ctx-0x”" in html
    assert "Did you mean “esconv-secret-ctx-0”?" in html and "Care" in html
    assert not study.contexts.filter(content_note__isnull=False).exists()


def _care_settings(**changes) -> dict[str, str]:
    return {
        "pass_share": "0.75",
        "fail_outcome": "code",
        "stop_outcome": "code",
        "screenout_code": "X",
        "stop_code": "Y",
        "break_after_minutes": "5",
        "support_text": "Help.",
        **changes,
    }


def test_malformed_support_links_are_refused_with_a_message(admin_client):
    from care.models import CareSettings

    study = _study()
    url = f"/studio/{study.slug}/care/"
    links = "Samaritans | https://www.samaritans.org\nHelpline www.example.org\nX | https://"
    response = admin_client.post(url, _care_settings(support_links=links))
    html = response.content.decode()
    assert response.status_code == 422
    assert "line 2: “Helpline www.example.org”" in html and "line 3: “X | https://”" in html
    assert not CareSettings.objects.filter(study=study).exists()  # nothing dropped in silence
    good = "Samaritans | https://www.samaritans.org\n\nMind | https://www.mind.org.uk"
    saved = admin_client.post(url, _care_settings(support_links=good, allow_withdrawal="on"))
    assert saved.status_code == 302
    settings = CareSettings.objects.get(study=study)
    assert settings.support_links == good and settings.allow_withdrawal

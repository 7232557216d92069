"""Writer pages through HTTP: entry, consent, writing, errors by the field, autosave, review."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotation.models import Pair
from completions.access import STUDY_ADMINS, WRITERS
from completions.models import Completion
from tests.factories import DialogueContextFactory, JudgmentFactory
from tests.factories.writing import GOOD_TEXT, behaviour, build_writing_study
from writing.models import Writer, Writing, WritingContext, WritingSettings
from writing.services import writing_settings

pytestmark = pytest.mark.django_db
SUBMIT = re.compile(r'action="(/w/t/([^/"]+)/submit/)"')


def _enter(client, study, query: str = "") -> str:
    invite = writing_settings(study).invite_token
    client.get(f"/w/{invite}/{query}")
    client.post(f"/w/{invite}/consent/", {"agree": "on"})
    return invite


def _page(client, invite):
    page = client.get(f"/w/{invite}/write/", follow=True)
    match = SUBMIT.search(page.content.decode())
    return page, (match.group(1) if match else None)


def test_a_writer_enters_consents_writes_and_sees_progress(client):
    study = build_writing_study(n_contexts=2)
    invite = writing_settings(study).invite_token
    consent = client.get(f"/w/{invite}/", follow=True)
    assert consent.redirect_chain[-1][0].endswith("/consent/")
    assert b"keystrokes" in consent.content  # what is recorded is said before consent
    assert client.post(f"/w/{invite}/consent/", {}).status_code == 200  # box not ticked
    client.post(f"/w/{invite}/consent/", {"agree": "on"})
    assert b"40 words" in client.get(f"/w/{invite}/instructions/").content
    page, submit = _page(client, invite)
    html = page.content.decode()
    assert "failed my driving test" in html and 'class="chat"' in html
    assert "<script>" not in html and "style=" not in html and "onclick" not in html
    done = client.post(submit, {"text": GOOD_TEXT, **behaviour()}, follow=True)
    assert b"You have written 1 reply" in done.content
    assert Writing.objects.get(status="pending").text == GOOD_TEXT


def test_the_form_works_without_javascript_and_flags_the_missing_measures(client):
    study = build_writing_study(n_contexts=1)
    invite = _enter(client, study)
    _page_, submit = _page(client, invite)
    client.post(submit, {"text": GOOD_TEXT})
    assert Writing.objects.get().flags == ["unmeasured"]


def test_a_text_outside_the_limits_is_refused_with_the_error_by_the_field(client):
    study = build_writing_study(n_contexts=1, max_words=10)
    invite = _enter(client, study)
    _page_, submit = _page(client, invite)
    response = client.post(submit, {"text": "word " * 12, **behaviour()})
    # Redirect after the refused POST: Back or a reload never sends it again.
    assert response.status_code == 302 and response.url == f"/w/{invite}/write/"
    html = client.get(response.url).content.decode()
    assert 'id="text-error"' in html and "the limit is 10" in html
    assert 'aria-describedby="text-error' in html and "word word" in html
    assert "Over the limit: 12 words, at most 10 can be submitted." in html
    assert Writing.objects.get().status == "draft"
    again = client.get(response.url).content.decode()  # the reasons are shown once
    assert 'id="text-error"' not in again and "word word" in again


def test_the_live_counter_warns_at_the_hard_limit_the_submit_enforces(client):
    study = build_writing_study(n_contexts=1, max_words=10)
    invite = _enter(client, study)
    _page_, submit = _page(client, invite)
    token = submit.split("/")[3]
    client.post(f"/w/t/{token}/save/", {"text": "word " * 10})
    html = client.get(f"/w/{invite}/write/").content.decode()
    assert 'data-max-words="10"' in html
    assert "At the limit: 10 words is the most a reply may have." in html
    client.post(f"/w/t/{token}/save/", {"text": "word " * 9})
    html = client.get(f"/w/{invite}/write/").content.decode()
    assert '<p class="limit-note field-error" id="limit-note" aria-live="polite"></p>' in html


def test_autosave_keeps_the_draft_for_a_reload(client):
    study = build_writing_study(n_contexts=1)
    invite = _enter(client, study)
    page, submit = _page(client, invite)
    token = submit.split("/")[3]
    saved = client.post(f"/w/t/{token}/save/", {"text": "I am still thinking"})
    assert saved.status_code == 200 and saved.json()["saved"]
    again, _ = _page(client, invite)
    assert b"I am still thinking" in again.content


def test_save_and_pause_without_javascript_keeps_the_draft(client):
    study = build_writing_study(n_contexts=1)
    invite = _enter(client, study)
    _page_, submit = _page(client, invite)
    client.post(submit, {"text": "Half a reply", "pause": "1"})
    assert Writing.objects.get().text == "Half a reply"
    assert Writing.objects.get().status == "draft"


def test_another_writers_text_is_a_404(client):
    study = build_writing_study(n_contexts=2)
    invite = _enter(client, study)
    _page_, submit = _page(client, invite)
    other = client.__class__()
    _enter(other, study)
    assert other.post(submit, {"text": GOOD_TEXT}).status_code == 404
    assert other.post(submit.replace("submit", "save"), {"text": "x"}).status_code == 404


def test_prolific_entry_resumes_and_ends_with_code_and_redirect(client):
    study = build_writing_study(
        n_contexts=1, entry="prolific", prolific_redirect_url="https://app.prolific.com/done"
    )
    invite = writing_settings(study).invite_token
    assert client.get(f"/w/{invite}/consent/").status_code == 403  # no panel id
    _enter(client, study, "?PROLIFIC_PID=P77&STUDY_ID=S&SESSION_ID=X")
    _page_, submit = _page(client, invite)
    client.post(submit, {"text": GOOD_TEXT, **behaviour()})
    done = client.get(f"/w/{invite}/done/").content.decode()
    code = writing_settings(study).completion_code
    assert code in done and f"https://app.prolific.com/done?cc={code}" in done
    assert Writer.objects.get().external_id == "P77"
    assert "P77" not in done


def test_another_participants_prolific_id_is_refused_and_nothing_is_stored(client):
    study = build_writing_study(n_contexts=2, entry="prolific")
    invite = _enter(client, study, "?PROLIFIC_PID=P77&STUDY_ID=S&SESSION_ID=X")
    _page_, submit = _page(client, invite)
    client.post(submit.replace("submit", "save"), {"text": "my own draft"})
    # The owner reopens from Prolific (same ids) or from the same browser: resumes.
    assert client.get(f"/w/{invite}/?PROLIFIC_PID=P77&STUDY_ID=S&SESSION_ID=X").status_code == 302
    assert client.get(f"/w/{invite}/?PROLIFIC_PID=P77").status_code == 302
    stranger = client.__class__()
    for query in ("?PROLIFIC_PID=P77", "?PROLIFIC_PID=P77&STUDY_ID=S&SESSION_ID=OTHER"):
        page = stranger.get(f"/w/{invite}/{query}")
        assert page.status_code == 403 and "already started" in page.content.decode()
    assert stranger.get(f"/w/{invite}/write/").status_code in (302, 403)  # not let in
    assert "my own draft" not in stranger.get(f"/w/{invite}/write/", follow=True).content.decode()
    assert Writer.objects.count() == 1


def test_a_writer_account_continues_over_sittings(client):
    study = build_writing_study(n_contexts=2)
    user = get_user_model().objects.create_user("clinician", password="pw")
    user.groups.add(Group.objects.get_or_create(name=WRITERS)[0])
    client.login(username="clinician", password="pw")
    invite = _enter(client, study)
    _page_, submit = _page(client, invite)
    client.post(submit, {"text": GOOD_TEXT, **behaviour()})
    client.logout()
    client.login(username="clinician", password="pw")  # a new sitting: a new session
    page = client.get(f"/w/{invite}/", follow=True)
    assert b"You have written 1 reply" in page.content
    assert Writer.objects.get().user == user


def test_a_disabled_or_unknown_writer_link_is_a_404(client):
    study = build_writing_study(n_contexts=1, enabled=False)
    assert client.get(f"/w/{writing_settings(study).invite_token}/").status_code == 404
    assert client.get("/w/nope/").status_code == 404


def _admin(client):
    user = get_user_model().objects.create_user("boss", password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    client.login(username="boss", password="pw")


def test_review_accepts_into_pairs_and_rejects_with_a_reason(client):
    study = build_writing_study(n_contexts=1, per_context=2)
    writers = []
    for _ in range(2):
        writer_client = client.__class__()
        invite = _enter(writer_client, study)
        _page_, submit = _page(writer_client, invite)
        writer_client.post(submit, {"text": GOOD_TEXT, **behaviour(inserted_chars=200)})
        writers.append(writer_client)
    assert client.get(f"/studio/{study.slug}/writers/").status_code == 302  # login first
    _admin(client)
    page = client.get(f"/studio/{study.slug}/writers/").content.decode()
    first, second = Writing.objects.order_by("id")
    assert first.writer.pseudonym in page and "inserted without typing" in page
    client.post(f"/studio/{study.slug}/writers/t/{first.token}/accept/")
    completion = Completion.objects.get(system=first.writer.system)
    assert Pair.objects.filter(completion_b=completion).count() == 1  # vs the model reply
    client.post(f"/studio/{study.slug}/writers/t/{second.token}/reject/", {"reason": ""})
    assert Writing.objects.get(pk=second.pk).status == "pending"
    client.post(f"/studio/{study.slug}/writers/t/{second.token}/reject/", {"reason": "Off topic"})
    assert Writing.objects.get(pk=second.pk).status == "rejected"
    stats = client.get(f"/studio/{study.slug}/writers/?status=").content.decode()
    assert "Off topic" in stats and "1.00" in stats and "0.00" in stats


def test_review_pages_are_for_study_admins_only(client):
    study = build_writing_study(n_contexts=1)
    get_user_model().objects.create_user("someone", password="pw", is_staff=True)
    client.login(username="someone", password="pw")
    assert client.get(f"/studio/{study.slug}/writers/").status_code == 403
    assert client.post(f"/studio/{study.slug}/writers/open/").status_code == 403


def test_admin_saves_settings_and_opens_contexts(client):
    study = build_writing_study(n_contexts=1)
    _admin(client)
    form = client.get(f"/studio/{study.slug}/writers/").context["form"]
    data = {k: v for k, v in form.initial.items() if v is not None}
    data.update({"enabled": "on", "block_paste": "on", "min_words": 5, "max_words": 4})
    bad = client.post(f"/studio/{study.slug}/writers/", data)
    assert b"The most words must be at least the fewest." in bad.content
    data.update(max_words=50, band_max_words=60)  # a suggestion above the hard limit
    bad = client.post(f"/studio/{study.slug}/writers/", data)
    assert b"The suggested most words cannot be above the most words a reply may" in bad.content
    assert not writing_settings(study).block_paste  # nothing of a refused form is saved
    data.update(max_words=80)
    client.post(f"/studio/{study.slug}/writers/", data)
    assert writing_settings(study).block_paste and writing_settings(study).max_words == 80


def test_the_writers_page_invites_like_recruit_and_keeps_word_limits_in_one_place(client):
    study = build_writing_study(n_contexts=3)
    _admin(client)
    ws = writing_settings(study)
    html = client.get(f"/studio/{study.slug}/writers/").content.decode()
    link = f"http://testserver/w/{ws.invite_token}/"
    assert f'<input id="writer-link" class="copy-value" type="text" readonly value="{link}"' in html
    assert 'data-copy="writer-link"' in html and 'data-copy="writer-completion-code"' in html
    assert "<legend>Reply length: refused outside these</legend>" in html
    study_form = client.get(f"/studio/{study.slug}/settings/").content.decode()
    assert "writer_max_words" not in study_form and "Max words" not in study_form


def test_contexts_open_only_while_writing_is_on(client):
    study = build_writing_study(n_contexts=3, enabled=False)
    DialogueContextFactory(study=study, external_id="ctx-late", turns=[], bare=True)
    _admin(client)
    page = client.get(f"/studio/{study.slug}/writers/").content.decode()
    assert "Contexts can be opened once writing is on." in page
    refused = client.post(f"/studio/{study.slug}/writers/open/", {"limit": ""}, follow=True)
    assert "Writing is off for this study, so no context was opened." in refused.content.decode()
    assert not WritingContext.objects.filter(context__external_id="ctx-late").exists()


def test_instructions_are_markdown_shown_safely(client):
    study = build_writing_study(n_contexts=1)
    ws = writing_settings(study)
    ws.instructions = (
        "# Please read\n\nWrite **briefly**:\n\n- one to three sentences\n- your own words\n\n"
        '<script>alert("x")</script> [click](javascript:alert(1)) <img src=x onerror=alert(1)>'
    )
    ws.save()
    invite = _enter(client, study)
    html = client.get(f"/w/{invite}/instructions/").content.decode()
    assert "<h2>Please read</h2>" in html and "<strong>briefly</strong>" in html
    assert "<li>one to three sentences</li>" in html
    prose = html[html.index('<div class="prose">') :]
    assert "<script" not in prose and "<img" not in prose  # shown as text, never as tags
    assert 'href="javascript' not in prose


def test_the_default_instructions_are_a_real_list():
    ws = WritingSettings(instructions="")
    html = str(ws.instructions_html)
    assert html.count("<li>") == 4 and "- Write" not in html


def test_a_writer_may_stop_with_a_draft_open_and_gets_the_code(client):
    study = build_writing_study(n_contexts=2)
    invite = _enter(client, study)
    _page(client, invite)
    done = client.get(f"/w/{invite}/done/").content.decode()
    assert writing_settings(study).completion_code in done and "continue it" in done
    assert Writer.objects.get().finished_at is not None


def test_the_review_page_shows_a_writers_win_rate_once_judged(client):
    from django.utils import timezone

    from writing.services import (
        writer_enter,
        writing_next,
        writing_submit,
    )

    study = build_writing_study(n_contexts=1)
    writer = writer_enter(study=study)
    writing = writing_next(writer=writer)
    writing_submit(writing=writing, text=GOOD_TEXT, raw_behaviour=behaviour())
    _admin(client)
    client.post(f"/studio/{study.slug}/writers/t/{writing.token}/accept/")
    pair = Pair.objects.get()
    writer_side = "a" if pair.completion_a.system_id == writer.system_id else "b"
    for judge, winner in (("j1", writer_side), ("j2", writer_side), ("j3", "tie"), ("j4", "x")):
        other = "b" if writer_side == "a" else "a"
        JudgmentFactory(
            study=study,
            pair=pair,
            judge_kind="llm",
            judge=judge,
            winner=other if winner == "x" else winner,
            submitted_at=timezone.now(),
            strength=None,
            strength_max=None,
            shown_left="",
        )
    page = client.get(f"/studio/{study.slug}/writers/").content.decode()
    assert "0.625 (4)" in page  # (2 wins + half a tie) / 4


def test_rejecting_an_accepted_text_takes_it_out_of_pairs_unless_judged(client):
    from django.utils import timezone

    from annotation.models import Judgment

    study = build_writing_study(n_contexts=1)
    writer_client = client.__class__()
    invite = _enter(writer_client, study)
    _page_, submit = _page(writer_client, invite)
    writer_client.post(submit, {"text": GOOD_TEXT, **behaviour()})
    writing = Writing.objects.get()
    _admin(client)
    base = f"/studio/{study.slug}/writers/t/{writing.token}"
    client.post(f"{base}/accept/")
    pair = Pair.objects.get()
    JudgmentFactory(
        study=study,
        pair=pair,
        judge_kind="llm",
        judge="j",
        winner="a",
        submitted_at=timezone.now(),
        strength=None,
        strength_max=None,
        shown_left="",
    )
    refused = client.post(f"{base}/reject/", {"reason": "Second thoughts"}, follow=True)
    assert b"already been judged" in refused.content
    assert Writing.objects.get().status == "accepted" and Judgment.objects.count() == 1
    Judgment.objects.all().delete()
    client.post(f"{base}/reject/", {"reason": "Second thoughts"})
    assert Writing.objects.get().status == "rejected" and Writing.objects.get().text == GOOD_TEXT
    assert not Pair.objects.exists()
    assert not Completion.objects.filter(system__kind="human").exists()

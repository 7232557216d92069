"""The studio pages through their URLs: home, create, hub, recruit, status, material, pairs."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Pair
from completions.models import Completion, DialogueContext, Study
from studio.models import ImportJob
from studio.services import import_job_run
from tests.factories import ImportJobFactory, PairFactory, StudyFactory, SystemFactory
from tests.factories.files import bad_contexts_jsonl, completions_jsonl, contexts_jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(user)
    return client


@pytest.fixture
def study():
    return StudyFactory(slug="s1", name="Study one", status="draft")


@pytest.fixture
def upload(transactional_db):
    """Upload a file as the material page does. The import task is queued when the upload
    commits, so these tests commit for real (eager Celery: the import runs at once)."""

    def post(client, study, kind, name, content):
        return client.post(
            reverse("studio:material", args=[study.slug]),
            {"kind": kind, "file": SimpleUploadedFile(name, content)},
            follow=True,
        )

    return post


def test_the_root_sends_visitors_to_the_login_page_and_shows_admins_their_studies(
    client, admin_client, study
):
    from django.test import Client

    anonymous = Client().get("/")
    assert anonymous.status_code == 302 and "/admin/login/" in anonymous.url
    html = admin_client.get("/").content.decode()
    assert "Study one" in html and reverse("studio:overview", args=["s1"]) in html
    assert admin_client.get("/studio/").status_code == 200


def test_non_admins_get_403_on_every_studio_page(client, study):
    user = get_user_model().objects.create_user("someone", password="pw", is_staff=True)
    client.force_login(user)
    for name, args in [
        ("studio:home", []),
        ("studio:new", []),
        ("studio:overview", ["s1"]),
        ("studio:edit", ["s1"]),
        ("studio:material", ["s1"]),
        ("studio:pairs", ["s1"]),
        ("studio:raters", ["s1"]),
        ("studio:raters_csv", ["s1"]),
    ]:
        assert client.get(reverse(name, args=args)).status_code == 403, name


def test_the_django_admin_links_to_the_studio(admin_client):
    html = admin_client.get("/admin/").content.decode()
    assert 'href="/studio/"' in html
    assert 'href="/"' in html  # "View site"


def test_creating_a_study_groups_settings_as_in_the_paper_and_rejects_bad_values(admin_client):
    form = admin_client.get(reverse("studio:new")).content.decode()
    for legend in ("Raters", "Writers", "Quality control", "Pair design"):
        assert f"<legend>{legend}</legend>" in form
    data = {
        "name": "Pilot",
        "slug": "pilot",
        "rater_entry": "prolific",
        "judgments_per_pair": 3,
        "items_per_rater": 10,
        "max_items_per_context": 1,
        "lease_seconds": 900,
        "rationale_max_chars": 500,
        "writers_per_context": 3,
        "quality_check_rate": 1.5,
        "pair_design": "all",
        "pair_seed": 0,
        "completion_code": "C0DE1234",
        "pause_lets_finish": "on",
    }
    refused = admin_client.post(reverse("studio:new"), data)
    assert refused.status_code == 200 and not Study.objects.filter(slug="pilot").exists()
    assert "A share from 0 up to" in refused.content.decode()
    data["quality_check_rate"] = 0.1
    response = admin_client.post(reverse("studio:new"), data)
    assert response.status_code == 302 and response.url == "/studio/pilot/"
    pilot = Study.objects.get(slug="pilot")
    assert pilot.judgments_per_pair == 3 and pilot.rater_entry == "prolific"
    assert pilot.rationale_max_chars == 500 and pilot.completion_code == "C0DE1234"
    assert pilot.pause_lets_finish is True


def test_the_hub_counts_and_points_at_the_next_step(upload, admin_client, study):
    html = admin_client.get("/studio/s1/").content.decode()
    assert "Upload an ESConv file or a contexts file" in html
    assert f"/r/{study.invite_token}/" in html
    assert (
        "?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}"
        in html
    )
    assert study.completion_code in html
    assert f"submissions/complete?cc={study.completion_code}" in html
    upload(admin_client, study, "contexts", "c.jsonl", contexts_jsonl())
    upload(admin_client, study, "completions", "m.jsonl", completions_jsonl())
    html = admin_client.get("/studio/s1/").content.decode()
    assert '<a class="button" href="/studio/s1/pairs/">Design the pairs</a>' in html


def test_a_new_study_is_a_draft_that_opens_only_once_it_has_pairs(upload, admin_client, study):
    assert study.status == "draft"
    html = admin_client.get("/studio/s1/").content.decode()
    assert "It can open once it has pairs" in html
    url = reverse("studio:status", args=["s1"])
    refused = admin_client.post(url, {"status": "open"}, follow=True).content.decode()
    assert "The study cannot open yet: it has no pairs for raters to judge." in refused
    study.refresh_from_db()
    assert study.status == "draft"
    # A rater who follows the link meanwhile is told it has not started: nothing is recorded.
    rater_page = Client().get(f"/r/{study.invite_token}/").content.decode()
    assert "This study has not started yet" in rater_page
    upload(admin_client, study, "contexts", "c.jsonl", contexts_jsonl())
    upload(admin_client, study, "completions", "m.jsonl", completions_jsonl())
    admin_client.post(reverse("studio:pairs", args=["s1"]), {"design": "all", "create": "1"})
    html = admin_client.get("/studio/s1/").content.decode()
    assert '<a class="button" href="/studio/s1/#recruit">Open the study</a>' in html
    opened = admin_client.post(url, {"status": "open"}, follow=True).content.decode()
    assert "Study opened: raters and writers can work." in opened
    study.refresh_from_db()
    assert study.status == "open"


def test_open_pause_close_set_the_status(admin_client, study):
    PairFactory(context__study=study)  # something to judge: the study may open
    url = reverse("studio:status", args=["s1"])
    for status in ("paused", "closed", "open"):
        response = admin_client.post(url, {"status": status}, follow=True)
        study.refresh_from_db()
        assert study.status == status
        assert "Study " in response.content.decode()
    assert admin_client.post(url, {"status": "deleted"}).status_code == 400
    assert admin_client.post(url, {"status": "draft"}).status_code == 400  # never back to draft
    assert admin_client.get(url).status_code == 405


def test_editing_keeps_the_slug(admin_client, study):
    form = admin_client.get(reverse("studio:edit", args=["s1"])).content.decode()
    assert 'name="slug"' not in form and "<legend>Raters</legend>" in form


def test_the_analysis_settings_are_edited_and_checked(admin_client, study):

    SystemFactory(study=study, name="gpt-4o", kind="model", family="gpt")
    url = reverse("studio:edit", args=["s1"])
    form = admin_client.get(url).content.decode()
    assert "<legend>Analysis</legend>" in form and 'name="family_aliases"' in form
    data = {
        "name": study.name,
        "rater_entry": "open",
        "judgments_per_pair": 5,
        "items_per_rater": 20,
        "max_items_per_context": 1,
        "lease_seconds": 180,
        "rationale_max_chars": 2000,
        "writers_per_context": 3,
        "writer_max_words": 60,
        "quality_check_rate": 0.1,
        "pair_design": "all",
        "pair_seed": 0,
        "completion_code": "C0DE1234",
        "llm_games": "consistent",
        "human_majority_min": 3,
        "human_weight_share": 1.5,
        "leaderboard_anchor": "nobody",
        "family_aliases": "azure-openai = gpt\nnot a line",
    }
    refused = admin_client.post(url, data).content.decode()
    assert "A share strictly between 0 and 1" in refused
    assert "No system is called &#x27;nobody&#x27;. Systems: gpt-4o." in refused
    assert "line 2: write it as" in refused
    data.update(
        human_weight_share=0.3, leaderboard_anchor="gpt-4o", family_aliases="azure-openai = gpt"
    )
    assert admin_client.post(url, data).status_code == 302
    study.refresh_from_db()
    assert study.llm_games == "consistent" and study.human_majority_min == 3
    assert study.human_weight_share == 0.3 and study.leaderboard_anchor == "gpt-4o"
    assert study.family_aliases == {"azure-openai": "gpt"}
    assert "azure-openai = gpt" in admin_client.get(url).content.decode()
    assert study.style_features == []
    data["style_features"] = ["questions", "length"]
    assert admin_client.post(url, data).status_code == 302
    study.refresh_from_db()
    assert study.style_features == ["length", "questions"]  # display order
    data["style_features"] = ["colour"]
    assert "Select a valid choice" in admin_client.post(url, data).content.decode()


def test_uploads_import_all_or_nothing_with_their_report(upload, admin_client, study):
    page = upload(admin_client, study, "contexts", "c.jsonl", contexts_jsonl()).content.decode()
    assert "c.jsonl looks like JSON Lines contexts: imported (the import ran at once)." in page
    assert "contexts created: 3" in page
    page = upload(admin_client, study, "contexts", "bad.jsonl", bad_contexts_jsonl())
    html = page.content.decode()
    assert "import refused, nothing changed: line 2:" in html
    assert not DialogueContext.objects.filter(external_id="ok-1").exists()
    page = upload(admin_client, study, "completions", "m.jsonl", completions_jsonl())
    assert "completions created: 9" in page.content.decode() or Completion.objects.count() == 9
    assert Completion.objects.filter(context__study=study).count() == 9
    job = ImportJob.objects.filter(study=study, filename="m.jsonl").get()
    assert job.status == "done" and job.data == b""  # the stored upload is released


def test_an_esconv_upload_screens_the_file(upload, admin_client, study, settings):
    sample = (settings.BASE_DIR / "demo" / "esconv-sample.json").read_bytes()
    html = upload(admin_client, study, "esconv", "ESConv.json", sample).content.decode()
    assert "dialogues kept" in html and "contexts created" in html
    assert DialogueContext.objects.filter(study=study).exists()


def test_an_import_runs_once_even_if_the_task_is_delivered_twice(study):
    job = ImportJobFactory(study=study, kind="contexts", filename="c.jsonl", data=b"")
    ImportJob.objects.filter(pk=job.pk).update(data=contexts_jsonl())
    assert import_job_run(job_id=job.pk).status == "done"
    assert import_job_run(job_id=job.pk) is None


def test_a_queued_import_shows_its_progress_and_polls(admin_client, study):
    job = ImportJobFactory(
        study=study, kind="contexts", filename="big.jsonl", stage="waiting for a worker"
    )
    url = reverse("studio:import_job", args=["s1", job.pk])
    html = admin_client.get(reverse("studio:material", args=["s1"])).content.decode()
    assert "queued: waiting for a worker" in html and f'hx-get="{url}"' in html
    fragment = admin_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.strip().startswith("<li") and "every 2s" in fragment
    assert "<nav" in admin_client.get(url).content.decode()  # without htmx: a whole page


def test_pairs_are_previewed_before_they_are_created(upload, admin_client, study):
    upload(admin_client, study, "contexts", "c.jsonl", contexts_jsonl())
    upload(admin_client, study, "completions", "m.jsonl", completions_jsonl())
    html = admin_client.get(reverse("studio:pairs", args=["s1"])).content.decode()
    assert "<strong>9</strong> new pairs" in html
    assert '<th scope="row">model-alpha</th><td>model-beta</td><td>3</td>' in html
    assert Pair.objects.count() == 0  # a preview writes nothing
    balanced = admin_client.get(
        reverse("studio:pairs", args=["s1"]), {"design": "balanced", "per_context": 1, "seed": 3}
    ).content.decode()
    assert "<strong>3</strong> new pairs" in balanced
    response = admin_client.post(
        reverse("studio:pairs", args=["s1"]),
        {"design": "balanced", "per_context": 1, "seed": 3},
        follow=True,
    )
    assert Pair.objects.filter(study=study).count() == 3
    assert "pairs created: 3" in response.content.decode()
    missing = admin_client.get(reverse("studio:pairs", args=["s1"]), {"design": "balanced"})
    assert "A balanced design needs pairs per context." in missing.content.decode()

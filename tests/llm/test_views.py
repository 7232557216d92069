"""The studio LLM pages: endpoints, plan before start, live progress, failures, actions."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.utils.html import escape

from annotation.models import Judgment
from completions.access import STUDY_ADMINS
from completions.models import Completion
from llm.models import Endpoint, Run
from tests.factories.llm import endpoint, study_with_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    user = User.objects.create_user("studyadmin", password="x" * 12, is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    client.force_login(user)
    return client


def test_only_study_admins_see_the_llm_pages(client):
    study = study_with_pairs(1)
    response = client.get(f"/studio/{study.slug}/llm/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    User.objects.create_user("plain", password="x" * 12, is_staff=True)
    client.login(username="plain", password="x" * 12)
    assert client.get(f"/studio/{study.slug}/llm/").status_code == 403


def test_an_admin_adds_their_studys_endpoint_with_its_own_key_then_updates_it(admin_client):
    study = study_with_pairs(1)
    data = {
        "name": "my-vllm",
        "provider": "openai",
        "base_url": "http://localhost:8000/v1",
        "model": "meta-llama/Llama-3.3-70B-Instruct",
        "family": "llama",
        "api_key": "",
        "price_in": "0",
        "price_out": "0",
        "max_concurrency": "8",
        "timeout_s": "60",
        "max_retries": "2",
    }
    response = admin_client.post(f"/studio/{study.slug}/llm/endpoints/", data)
    assert response.status_code == 302
    endpoint = Endpoint.objects.get(name="my-vllm")
    assert endpoint.family == "llama" and endpoint.study == study and endpoint.key_source == "none"
    admin_client.post(
        f"/studio/{study.slug}/llm/endpoints/",
        {**data, "max_concurrency": "3", "api_key": "sk-local-0123456789abcdef"},
    )
    endpoint.refresh_from_db()
    assert endpoint.max_concurrency == 3 and endpoint.key_source == "stored key …cdef"
    admin_client.post(f"/studio/{study.slug}/llm/endpoints/", {**data, "remove_key": "on"})
    endpoint.refresh_from_db()
    assert endpoint.key_source == "none" and not endpoint.api_key_encrypted
    bad = admin_client.post(
        f"/studio/{study.slug}/llm/endpoints/",
        {**data, "name": "leaky", "api_key": "sk-abc 123 secret"},
    )
    assert bad.status_code == 400 and b"without spaces" in bad.content
    assert b"sk-abc 123 secret" not in bad.content  # a typed key is never sent back
    assert not Endpoint.objects.filter(name="leaky").exists()


def test_a_judge_run_shows_its_plan_then_runs_and_reports(
    admin_client, fake_llm, django_capture_on_commit_callbacks
):
    study = study_with_pairs(1)
    gpt = endpoint(fake_llm, "page-judge-gpt", family="gpt")
    broken = endpoint(fake_llm, "page-judge-bad", model="x@bad=schema", family="mistral")
    page = admin_client.get(f"/studio/{study.slug}/llm/")
    assert page.status_code == 200 and b"page-judge-gpt" in page.content
    response = admin_client.post(
        f"/studio/{study.slug}/llm/plan/",
        {"kind": "judge", "endpoints": [gpt.pk, broken.pk], "budget_usd": ""},
    )
    run = Run.objects.get(study=study)
    assert response["Location"] == f"/studio/{study.slug}/llm/runs/{run.pk}/"
    plan_page = admin_client.get(response["Location"])
    assert b"Start run (18 calls" in plan_page.content  # gpt: 3 pairs x 2; the other: 6 x 2
    assert b"page-judge-gpt: 3" in plan_page.content  # its own-family skips
    assert not fake_llm.state.total  # nothing sent before the admin confirms
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(f"/studio/{study.slug}/llm/runs/{run.pk}/start/")
    run.refresh_from_db()
    assert run.status == "finished"
    progress = admin_client.get(f"/studio/{study.slug}/llm/runs/{run.pk}/", HTTP_HX_REQUEST="true")
    assert b'data-count="done">6<' in progress.content
    assert b'data-count="invalid">12<' in progress.content
    assert b"<html" not in progress.content  # the fragment only
    full = admin_client.get(f"/studio/{study.slug}/llm/runs/{run.pk}/")
    assert b"Raw reply" in full.content and b"ignores the schema" in full.content
    assert b"Retry failed units" in full.content
    assert Judgment.objects.filter(study=study).count() == 6


def test_cancel_stops_a_started_run(admin_client, fake_llm):
    study = study_with_pairs(1)
    gemini = endpoint(fake_llm, "page-gemini", family="gemini")
    admin_client.post(
        f"/studio/{study.slug}/llm/plan/", {"kind": "judge", "endpoints": [gemini.pk]}
    )
    run = Run.objects.get(study=study)
    admin_client.post(f"/studio/{study.slug}/llm/runs/{run.pk}/start/")  # on_commit: not run
    admin_client.post(f"/studio/{study.slug}/llm/runs/{run.pk}/cancel/")
    run.refresh_from_db()
    assert run.status == "cancelled"
    page = admin_client.get(f"/studio/{study.slug}/llm/runs/{run.pk}/")
    assert b"Resume" in page.content and b"Cancel run" not in page.content
    assert admin_client.post(f"/studio/{study.slug}/llm/runs/{run.pk}/explode/").status_code == 404


def test_editing_the_supporter_prompt_adds_a_version(admin_client):
    from llm.generation import supporter_prompt_current

    study = study_with_pairs(1)
    assert b"version 1" in admin_client.get(f"/studio/{study.slug}/llm/").content
    admin_client.post(f"/studio/{study.slug}/llm/prompt/", {"text": "Be kind, 2 sentences."})
    admin_client.post(f"/studio/{study.slug}/llm/prompt/", {"text": "Be kind, 2 sentences."})
    prompt = supporter_prompt_current(study)
    assert prompt.version == 2 and prompt.text == "Be kind, 2 sentences."


def test_a_finished_generate_run_shows_its_replies_and_the_next_step(
    admin_client, fake_llm, django_capture_on_commit_callbacks
):
    study = study_with_pairs(2)
    writer = endpoint(fake_llm, "page-generator", family="llama")
    admin_client.post(
        f"/studio/{study.slug}/llm/plan/", {"kind": "generate", "endpoints": [writer.pk]}
    )
    run = Run.objects.get(study=study)
    planned = admin_client.get(f"/studio/{study.slug}/llm/runs/{run.pk}/").content.decode()
    assert "The replies it wrote" not in planned  # nothing written yet
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(f"/studio/{study.slug}/llm/runs/{run.pk}/start/")
    page = admin_client.get(f"/studio/{study.slug}/llm/runs/{run.pk}/").content.decode()
    assert 'This run wrote <a href="#texts">2 replies</a>' in page
    assert f'href="/studio/{study.slug}/downloads/completions.csv"' in page
    assert f'<a class="button" href="/studio/{study.slug}/pairs/">' in page
    assert "Add the new replies to the pairs" in page  # the study already had pairs
    written = Completion.objects.filter(system__name="page-generator")
    assert written.count() == 2 and all(escape(c.text) in page for c in written)


def test_the_launch_form_marks_each_field_with_the_runs_it_is_for(admin_client, fake_llm):
    study = study_with_pairs(1)
    endpoint(fake_llm, "page-any", family="gpt")
    html = admin_client.get(f"/studio/{study.slug}/llm/").content.decode()
    assert 'data-kind-field="id_kind"' in html
    assert 'data-kinds="adversarial"' in html and 'data-kinds="generate judge label"' in html
    assert html.count('<p class="help" data-kinds=') == 4  # what the endpoints are, per kind

"""A study admin who is not a superuser tries to make the workers send a server secret to a
listener they control. Nothing secret may ever arrive; the forms say why they refuse; the
operator's shared endpoints are usable without their key ever being shown.

The listener (tests/llm/listener.py) is a plain standard-library HTTP server that records
every connection, header and body it gets.
"""

from __future__ import annotations

import json
import logging
from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from completions.access import STUDY_ADMINS
from llm.executor import run_execute
from llm.models import Endpoint, Run, UnitStatus
from llm.services import run_plan, run_start
from tests.factories import EndpointFactory
from tests.factories.llm import study_with_pairs
from tests.llm.listener import Listener

pytestmark = pytest.mark.django_db

SECRETS = {
    "SECRET_KEY": "django-secret-that-signs-rater-cookies-0123456789",
    "DATABASE_URL": "postgres://heart:db-password-4711@db.internal:5432/heart",
    "PSEUDONYM_KEY": "pseudonym-key-that-undoes-the-export-pseudonyms",
}
STUDY_KEY = "sk-study-own-key-0123456789abcdef"
SHARED_KEY = "sk-shared-operator-key-fedcba9876543210"


@pytest.fixture
def secrets(settings, monkeypatch):
    """Known values for the server's own secrets, in its settings and its environment."""
    settings.SECRET_KEY = SECRETS["SECRET_KEY"]
    settings.PSEUDONYM_KEY = SECRETS["PSEUDONYM_KEY"]
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    return SECRETS


@pytest.fixture
def listener():
    with Listener() as server:
        yield server


@pytest.fixture
def production_hosts(settings):
    """The operator's defaults: the providers' public APIs only, no private networks."""
    settings.LLM_ALLOWED_HOSTS = ["api.openai.com", "api.anthropic.com"]
    settings.LLM_ALLOW_PRIVATE_NETWORKS = False


def _study_admin(client, study, username="mallory"):
    user = User.objects.create_user(username, password="x" * 12, is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    study.admins.add(user)
    client.force_login(user)
    return user


def _form(name: str, base_url: str, **extra) -> dict:
    return {
        "name": name,
        "provider": "openai",
        "base_url": base_url,
        "model": "m",
        "family": "fam",
        "price_in": "0",
        "price_out": "0",
        "max_concurrency": "2",
        "timeout_s": "5",
        "max_retries": "0",
        **extra,
    }


def _generate_through_the_studio(client, study, endpoint, capture) -> Run:
    client.post(f"/studio/{study.slug}/llm/plan/", {"kind": "generate", "endpoints": [endpoint.pk]})
    run = Run.objects.filter(study=study).latest("pk")
    with capture(execute=True):
        client.post(f"/studio/{study.slug}/llm/runs/{run.pk}/start/")
    run.refresh_from_db()
    return run


def _nothing_secret_in(text: str) -> None:
    for value in SECRETS.values():
        assert value not in text


@pytest.mark.parametrize("variable", ["SECRET_KEY", "DATABASE_URL"])
def test_with_the_operators_defaults_the_form_refuses_both_the_variable_and_the_listener(
    client, listener, secrets, production_hosts, variable
):
    study = study_with_pairs(1)
    _study_admin(client, study)
    url = f"/studio/{study.slug}/llm/endpoints/"
    with_variable = client.post(url, _form("leak", listener.url + "/v1", api_key_env=variable))
    assert with_variable.status_code == 400
    assert b"Key variables are for shared endpoints set up by the operator" in with_variable.content
    plain = client.post(url, _form("leak", listener.url + "/v1"))
    assert plain.status_code == 400
    assert b"host 127.0.0.1 is not on the operator&#x27;s list of LLM hosts" in plain.content
    assert not Endpoint.objects.exists()
    assert listener.connections == 0


def test_where_local_servers_are_allowed_the_listener_gets_only_the_admins_own_key(
    client, listener, secrets, django_capture_on_commit_callbacks
):
    # The test settings allow 127.0.0.1 (as the demo does): the host is no obstacle here.
    study = study_with_pairs(1)
    _study_admin(client, study)
    url = f"/studio/{study.slug}/llm/endpoints/"
    for variable in ("SECRET_KEY", "DATABASE_URL", "OPENAI_API_KEY"):
        refused = client.post(url, _form("leak", listener.url + "/v1", api_key_env=variable))
        assert refused.status_code == 400 and b"enter this endpoint&#x27;s own API key" in (
            refused.content
        )
    # A tampered form claiming to share the endpoint with every study changes nothing.
    saved = client.post(url, _form("mine", listener.url + "/v1", api_key=STUDY_KEY, shared="on"))
    assert saved.status_code == 302
    endpoint = Endpoint.objects.get()
    assert endpoint.study == study and endpoint.api_key_env == ""
    assert STUDY_KEY not in endpoint.api_key_encrypted
    hub = client.get(f"/studio/{study.slug}/llm/").content.decode()
    assert STUDY_KEY not in hub and "stored key …cdef" in hub
    run = _generate_through_the_studio(client, study, endpoint, django_capture_on_commit_callbacks)
    assert run.units.get().status == UnitStatus.DONE
    assert listener.requests
    assert {r["headers"]["authorization"] for r in listener.requests} == {f"Bearer {STUDY_KEY}"}
    _nothing_secret_in(listener.seen())


def test_a_row_from_before_naming_a_server_secret_is_refused_when_called(listener, secrets):
    # What an endpoint saved before these rules looks like (the migration clears such rows;
    # a restored backup would bring one back).
    study = study_with_pairs(1)
    legacy = EndpointFactory(
        name="legacy", provider="openai", model="m", family="f", base_url=listener.url + "/v1",
        api_key_env="SECRET_KEY", max_retries=0, timeout_s=5,
    )  # fmt: skip
    run = run_plan(study=study, kind="generate", endpoints=[legacy])
    run_start(run=run, dispatch=False)
    run_execute(run.pk)
    unit = run.units.get()
    assert unit.status == UnitStatus.FAILED
    assert "SECRET_KEY is one of the server's own secrets" in unit.error
    assert listener.connections == 0


def test_another_studys_endpoint_is_invisible_and_unusable(client, listener):
    theirs, ours = study_with_pairs(1), study_with_pairs(1)
    other = EndpointFactory(
        name="theirs", study=theirs, provider="openai", model="m", family="f",
        base_url=listener.url + "/v1", max_retries=0,
    )  # fmt: skip
    user = _study_admin(client, ours)
    hub = client.get(f"/studio/{ours.slug}/llm/")
    assert b"theirs" not in hub.content
    plan = client.post(f"/studio/{ours.slug}/llm/plan/", {"kind": "judge", "endpoints": [other.pk]})
    assert plan.status_code == 400 and not Run.objects.filter(study=ours).exists()
    api = APIClient()
    api.force_authenticate(user)
    refused = api.post(
        reverse("api:llm-runs", args=[ours.slug]),
        {"kind": "judge", "endpoints": ["theirs"]},
        format="json",
    )
    assert refused.status_code == 400 and "unknown endpoint(s): theirs" in str(refused.json())
    out = StringIO()
    with pytest.raises(CommandError, match="unknown endpoint: theirs"):
        call_command("llm_run", "judge", "--study", ours.slug, "--judge", "theirs", stdout=out)
    taken = client.post(
        f"/studio/{ours.slug}/llm/endpoints/", _form("theirs", "https://api.openai.com/v1")
    )
    assert taken.status_code == 400 and b"The name theirs is taken" in taken.content
    other.refresh_from_db()
    assert other.study == theirs and other.base_url == listener.url + "/v1"
    assert listener.connections == 0


def test_a_superusers_shared_endpoint_is_usable_but_its_key_is_never_shown(
    client, listener, secrets, caplog, django_capture_on_commit_callbacks
):
    study = study_with_pairs(1)
    root = User.objects.create_superuser("root", "root@example.org", "x" * 12)
    client.force_login(root)
    saved = client.post(
        f"/studio/{study.slug}/llm/endpoints/",
        _form("lab-gpt", listener.url + "/v1", api_key=SHARED_KEY, shared="on"),
    )
    assert saved.status_code == 302
    shared = Endpoint.objects.get(name="lab-gpt")
    assert shared.is_shared and shared.api_key_hint == "…3210"
    admin_page = client.get(f"/admin/llm/endpoint/{shared.pk}/change/").content.decode()
    assert "lab-gpt" in admin_page and SHARED_KEY not in admin_page
    assert shared.api_key_encrypted not in admin_page
    listing = StringIO()
    call_command("llm_endpoint", "list", stdout=listing)
    assert "lab-gpt" in listing.getvalue() and SHARED_KEY not in listing.getvalue()
    dump = StringIO()
    call_command("dumpdata", "llm.endpoint", stdout=dump)
    assert SHARED_KEY not in dump.getvalue()

    # A study admin of another study sees and uses it, never its key, and cannot change it.
    mine = study_with_pairs(1)
    client.logout()
    _study_admin(client, mine)
    hub = client.get(f"/studio/{mine.slug}/llm/").content.decode()
    assert "lab-gpt" in hub and "stored key …3210" in hub and SHARED_KEY not in hub
    caplog.set_level(logging.DEBUG)
    run = _generate_through_the_studio(client, mine, shared, django_capture_on_commit_callbacks)
    assert run.units.get().status == UnitStatus.DONE
    page = client.get(f"/studio/{mine.slug}/llm/runs/{run.pk}/").content.decode()
    assert SHARED_KEY not in page
    assert SHARED_KEY not in caplog.text and SHARED_KEY not in json.dumps(run.plan)
    assert {r["headers"]["authorization"] for r in listener.requests} == {f"Bearer {SHARED_KEY}"}
    _nothing_secret_in(listener.seen())
    overwrite = client.post(
        f"/studio/{mine.slug}/llm/endpoints/", _form("lab-gpt", "https://api.openai.com/v1")
    )
    assert overwrite.status_code == 400 and b"The name lab-gpt is taken" in overwrite.content


def test_the_command_line_obeys_the_operators_lists(settings, secrets):
    settings.LLM_ALLOWED_HOSTS = ["api.openai.com", "localhost"]
    settings.LLM_ALLOW_PRIVATE_NETWORKS = False

    def add(*args):
        base = ["llm_endpoint", "add", "cli", "--provider", "openai", "--model", "m"]
        call_command(*base, "--family", "f", *args, stdout=StringIO(), stderr=StringIO())

    with pytest.raises(CommandError, match="SECRET_KEY is one of the server's own secrets"):
        add("--api-key-env", "SECRET_KEY")
    with pytest.raises(CommandError, match="MY_KEY is not on the operator's list"):
        add("--api-key-env", "MY_KEY")
    with pytest.raises(CommandError, match="resolves to (127.0.0.1|::1), a private or local"):
        add("--base-url", "http://localhost:11434/v1")
    with pytest.raises(CommandError, match="host 10.1.2.3 is not on the operator's list"):
        add("--base-url", "http://10.1.2.3/v1")
    add("--api-key-env", "OPENAI_API_KEY")  # the provider's own API and a listed variable
    endpoint = Endpoint.objects.get(name="cli")
    assert endpoint.is_shared and endpoint.api_key_env == "OPENAI_API_KEY"


def test_keys_cannot_be_typed_until_the_operator_sets_an_encryption_key(client, settings):
    settings.LLM_KEY_ENCRYPTION_KEY = []
    study = study_with_pairs(1)
    _study_admin(client, study)
    response = client.post(
        f"/studio/{study.slug}/llm/endpoints/",
        _form("keyed", "https://api.openai.com/v1", api_key=STUDY_KEY),
    )
    assert response.status_code == 400
    assert b"the operator has not set LLM_KEY_ENCRYPTION_KEY" in response.content
    assert STUDY_KEY.encode() not in response.content  # the typed key is not echoed back
    assert not Endpoint.objects.exists()


def test_one_source_of_key_per_endpoint_and_a_study_takes_its_endpoints_along(listener):
    from llm.services import EndpointError, endpoint_upsert

    study = study_with_pairs(1)
    base = {"provider": "openai", "model": "m", "family": "f", "base_url": listener.url + "/v1"}
    with pytest.raises(EndpointError, match="either an API key or a key variable"):
        endpoint_upsert(name="both", api_key=SHARED_KEY, api_key_env="OPENAI_API_KEY", **base)
    shared, _ = endpoint_upsert(name="one", api_key=SHARED_KEY, **base)
    shared, _ = endpoint_upsert(name="one", api_key_env="OPENAI_API_KEY")
    assert shared.key_source == "variable OPENAI_API_KEY" and not shared.api_key_encrypted
    own, _ = endpoint_upsert(name="own", study=study, api_key=STUDY_KEY, **base)
    run = run_plan(study=study, kind="generate", endpoints=[own])
    study.delete()  # its endpoint and its runs go with it
    assert not Endpoint.objects.filter(pk=own.pk).exists()
    assert not Run.objects.filter(pk=run.pk).exists()
    assert Endpoint.objects.filter(pk=shared.pk).exists()

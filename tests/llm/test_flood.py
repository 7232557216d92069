"""Bounded replies, through the real SDKs against the fake server: a provider that answers
20 MB per call, never stops, streams bytes without text, or sends bytes that are not UTF-8
cannot fill a worker's memory or the database, and the run page stays small and readable.

The memory and database figures of a 20 MB-per-call flood are measured by
benchmarks/bench_llm_flood.py (docs/benchmarks.md); these tests check the behaviour.
"""

from __future__ import annotations

import hashlib

import pytest
from django.contrib.auth.models import Group, User

from annotation.models import Judgment
from completions.access import STUDY_ADMINS
from completions.models import Completion
from llm.executor import run_execute
from llm.models import CachedCall, UnitStatus
from llm.services import run_plan, run_start
from tests.factories.llm import SYSTEMS, endpoint, study_with_pairs

pytestmark = pytest.mark.django_db
PROVIDERS = ["openai", "anthropic"]
ONE_PAIR = SYSTEMS[:2]  # gpt-x and claude-x: one pair per context


def _run(study, kind: str, endpoint):
    run = run_plan(study=study, kind=kind, endpoints=[endpoint])
    run_start(run=run, dispatch=False)
    run_execute(run.pk)
    run.refresh_from_db()
    return run


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_judge_answering_20_mb_per_call_is_cut_stored_small_and_never_sent_back(
    fake_llm, settings, provider
):
    study = study_with_pairs(1, systems=ONE_PAIR)
    flood = endpoint(
        fake_llm, f"flood-{provider}", provider=provider, model="judge@flood=20", family="mistral"
    )
    run = _run(study, "judge", flood)
    assert run.status == "finished"
    units = list(run.units.all())
    assert len(units) == 2  # one pair, both orders
    for unit in units:
        assert unit.status == UnitStatus.INVALID
        assert unit.error.startswith("too_large: reply too large: the provider sent more than")
        assert unit.raw_reply_cut and unit.repairs == 0
        assert len(unit.raw_reply) <= settings.LLM_RAW_REPLY_KEEP_CHARS
        assert unit.raw_reply_chars <= 64 * 1024  # what was read: the body's first bytes
        whole = hashlib.sha256(unit.raw_reply.encode()).hexdigest()
        assert unit.raw_reply_sha256 == whole or unit.raw_reply_chars > len(unit.raw_reply)
    assert not Judgment.objects.filter(study=study).exists()
    assert not CachedCall.objects.exists()
    # No repair request carried the flood back: every request the server saw stayed small.
    assert 0 < fake_llm.state.largest_request < 20_000


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("flood", "said"),
    [
        ("endless", "more than 100,000 characters of reply"),
        ("20", "more than 100,000 characters of reply"),
        ("noise", "bytes of response"),
    ],
)
def test_a_streamed_generation_that_never_ends_is_cut_at_the_cap(fake_llm, provider, flood, said):
    study = study_with_pairs(1, systems=ONE_PAIR)
    model = endpoint(fake_llm, f"gen-{provider}", provider=provider, model=f"gen@flood={flood}")
    unit = _run(study, "generate", model).units.get()
    assert unit.status == UnitStatus.INVALID and said in unit.error
    assert unit.raw_reply_cut and len(unit.raw_reply) <= 20_000
    assert not Completion.objects.filter(system__name=model.name).exists()


def test_a_long_reply_under_the_cap_is_kept_and_the_cap_is_the_operators(fake_llm, settings):
    study = study_with_pairs(1, systems=ONE_PAIR)
    long = endpoint(fake_llm, "long-gen", model="gen@flood=0.05")  # 52,428 characters
    assert _run(study, "generate", long).units.get().status == UnitStatus.DONE
    assert len(Completion.objects.get(system__name="long-gen").text) > 52_000
    settings.LLM_REPLY_MAX_CHARS = {**settings.LLM_REPLY_MAX_CHARS, "default": 50_000}
    again = endpoint(fake_llm, "long-gen-again", model="again@flood=0.05")  # not from the cache
    unit = _run(study_with_pairs(1, systems=ONE_PAIR), "generate", again).units.get()
    assert unit.status == UnitStatus.INVALID and "more than 50,000 characters" in unit.error


@pytest.fixture
def admin_client(client):
    user = User.objects.create_user("floodadmin", password="x" * 12, is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    client.force_login(user)
    return client


@pytest.mark.parametrize("kind", ["generate", "judge"])  # a stream, and a whole JSON body
@pytest.mark.parametrize("provider", PROVIDERS)
def test_bytes_that_are_not_utf8_are_refused_and_shown_safely(
    fake_llm, admin_client, provider, kind
):
    study = study_with_pairs(1, systems=ONE_PAIR)
    bad = endpoint(
        fake_llm, f"bad-{provider}", provider=provider, model="x@bad=utf8", family="mistral"
    )
    run = _run(study, kind, bad)
    unit = run.units.first()
    assert unit.status == UnitStatus.FAILED
    assert "not valid UTF-8 (byte 0xff at position" in unit.error
    assert "\ufffd" in unit.raw_reply and "\\xff" not in unit.error
    page = admin_client.get(f"/studio/{study.slug}/llm/runs/{run.pk}/").content.decode()
    assert "not valid UTF-8" in page and "\ufffd" in page and "\\xff" not in page


def test_a_nul_and_a_lone_surrogate_are_stored_as_replacement_characters(fake_llm):
    study = study_with_pairs(1, systems=ONE_PAIR)
    odd = endpoint(fake_llm, "odd", model="x@bad=nul")
    assert _run(study, "generate", odd).units.get().status == UnitStatus.DONE
    text = Completion.objects.get(system__name="odd").text
    assert text == "A NUL \ufffd and a lone surrogate \ufffd in the reply."


def test_the_run_page_pages_failures_and_truncates_raw_replies(fake_llm, admin_client):
    study = study_with_pairs(3, systems=SYSTEMS[:4])  # 18 pairs: 36 judge units
    flood = endpoint(fake_llm, "page-flood", model="judge@flood=20", family="mistral")
    run = _run(study, "judge", flood)
    assert run.units.filter(status=UnitStatus.INVALID).count() == 36
    url = f"/studio/{study.slug}/llm/runs/{run.pk}/"
    first = admin_client.get(url)
    html = first.content.decode()
    assert first.status_code == 200 and len(first.content) < 200_000
    assert html.count("<li><strong>") == 25 and "Page 1 of 2 (36 units)" in html
    assert 'href="?page=2#failures-title"' in html and "Shown: the first 2000 characters" in html
    assert admin_client.get(url + "?page=2").content.decode().count("<li><strong>") == 11
    unit = run.units.order_by("id").first()
    download = admin_client.get(f"{url}units/{unit.pk}/raw/")
    assert download.status_code == 200 and download["Content-Type"].startswith("text/plain")
    assert "attachment" in download["Content-Disposition"]
    assert download.content.decode() == unit.raw_reply
    other = study_with_pairs(1, systems=ONE_PAIR)  # the run is not that study's: not found
    assert (
        admin_client.get(f"/studio/{other.slug}/llm/runs/{run.pk}/units/{unit.pk}/raw/").status_code
        == 404
    )
    study.admins.add(User.objects.create_user("owner", password="x" * 12, is_staff=True))
    assert admin_client.get(f"{url}units/{unit.pk}/raw/").status_code == 403  # not its admin

"""Releases without personal data: writer texts and rationales screened before a bundle, what
is flagged held for the admin's review (downloads page), the datasheet says what happened."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import pytest
from django.urls import reverse

from annotation.models import Judgment
from completions.models import Completion
from studio.models import ReleaseHold
from tests.studio.test_downloads_release import _build, admin_client  # noqa: F401

pytestmark = pytest.mark.django_db
EMAIL = "call me back at jo.smith@example.org"
PHONE = "my number is 555-123-4567, text me"


def _bundle(client, study, tmp_path, name: str):
    response = client.post(reverse("downloads:release", args=[study.slug]))
    assert response.status_code == 200
    path = tmp_path / f"{name}.zip"
    path.write_bytes(b"".join(response.streaming_content))
    with zipfile.ZipFile(path) as bundle:
        bundle.extractall(tmp_path / name)
    return tmp_path / name / f"{study.slug}-release"


def _plant(study):
    """A writer who left an e-mail address in a reply, a rater a phone number in a reason."""
    text = Completion.objects.filter(context__study=study, system__name="human-w").first()
    text.text = f"That sounds so hard. {EMAIL}"
    text.save(update_fields=["text"])
    judgment = Judgment.objects.filter(study=study, judge_kind="human", pair__isnull=False).first()
    judgment.rationale = f"B was kinder. {PHONE}"
    judgment.save(update_fields=["rationale"])
    return text, judgment


def test_flagged_texts_stay_out_of_the_bundle_until_the_admin_releases_them(
    admin_client,  # noqa: F811
    tmp_path,
):
    study = _build(tmp_path)
    text, judgment = _plant(study)
    folder = _bundle(admin_client, study, tmp_path, "first")
    everything = "".join(p.read_text() for p in folder.glob("*.jsonl"))
    assert "jo.smith@example.org" not in everything and "555-123-4567" not in everything
    completions = [json.loads(line) for line in (folder / "completions.jsonl").open()]
    held = [c for c in completions if c.get("withheld")]
    assert len(held) == 1 and held[0]["text"] is None and held[0]["system"] == "human-w"
    sheet = (folder / "DATASHEET.md").read_text()
    assert "## Personal data" in sheet and "flagged and held: 2" in sheet
    assert "waiting for review, kept out of this bundle: 2" in sheet
    assert "rater rationale(s)" in sheet and "writer text(s)" in sheet
    # The bundle still checks and recomputes: only texts were left out, no judgment.
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=folder).returncode == 0
    done = subprocess.run(
        [sys.executable, "-I", "recompute_leaderboard.py", "--check"], cwd=folder, text=True,
        capture_output=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr

    page = admin_client.get(reverse("downloads:page", args=[study.slug])).content.decode()
    assert "Waiting for review" in page and "jo.smith@example.org" in page  # the admin sees it
    assert "e-mail address" in page and "phone number" in page
    by_kind = {h.kind: h for h in ReleaseHold.objects.filter(study=study)}
    assert set(by_kind) == {"writer_text", "rationale"}
    release = reverse("downloads:hold", args=[study.slug, by_kind["writer_text"].pk, "release"])
    keep = reverse("downloads:hold", args=[study.slug, by_kind["rationale"].pk, "keep-out"])
    assert admin_client.post(release).status_code == 302
    assert admin_client.post(keep).status_code == 302

    folder = _bundle(admin_client, study, tmp_path, "second")
    assert EMAIL in (folder / "completions.jsonl").read_text()  # released by the admin
    assert "555-123-4567" not in (folder / "judgments.jsonl").read_text()  # kept out
    rows = [json.loads(line) for line in (folder / "judgments.jsonl").open()]
    assert sum(r["rationale"] is None for r in rows) == 1
    sheet = (folder / "DATASHEET.md").read_text()
    assert "released by a study admin after review: 1" in sheet
    assert "kept out by a study admin: 1" in sheet
    assert ReleaseHold.objects.filter(study=study).count() == 2  # screened again, held once


def test_a_clean_study_holds_nothing_and_says_what_was_screened(admin_client, tmp_path):  # noqa: F811
    study = _build(tmp_path)
    folder = _bundle(admin_client, study, tmp_path, "clean")
    sheet = (folder / "DATASHEET.md").read_text()
    assert "flagged and held: 0" in sheet and "6 writer text(s)" in sheet
    assert not ReleaseHold.objects.exists()


def test_only_this_studys_admins_decide_on_its_holds(admin_client, tmp_path):  # noqa: F811
    study = _build(tmp_path)
    _plant(study)
    admin_client.post(reverse("downloads:screen", args=[study.slug]))
    hold = ReleaseHold.objects.filter(study=study).first()
    other = _build(tmp_path, slug="other")
    wrong = reverse("downloads:hold", args=[other.slug, hold.pk, "release"])
    assert admin_client.post(wrong).status_code == 404
    assert (
        admin_client.post(reverse("downloads:hold", args=[study.slug, hold.pk, "x"])).status_code
        == 404
    )
    hold.refresh_from_db()
    assert hold.decision == "pending"


def _plant_texts(study, writer_texts: list[str], rationales: list[str]) -> None:
    texts = Completion.objects.filter(context__study=study, system__name="human-w").order_by("id")
    for completion, text in zip(texts, writer_texts, strict=False):
        completion.text = text
        completion.save(update_fields=["text"])
    judgments = Judgment.objects.filter(study=study, judge_kind="human", pair__isnull=False)
    for judgment, text in zip(judgments.order_by("id"), rationales, strict=False):
        judgment.rationale = text
        judgment.save(update_fields=["rationale"])


BRITISH = [
    "Ring me on 07700 900123 whenever you like.",
    "Or my work line, +44 7700 900123, after six.",
]


def test_british_phone_numbers_stay_out_of_the_bundle_by_default(
    admin_client,  # noqa: F811
    tmp_path,
):
    study = _build(tmp_path)  # the server's default regions: US and GB
    _plant_texts(study, BRITISH, ["A was kinder. Text me on 07700 900456."])
    folder = _bundle(admin_client, study, tmp_path, "gb")
    everything = "".join(p.read_text() for p in folder.glob("*.jsonl"))
    for number in ("07700 900123", "+44 7700 900123", "07700 900456"):
        assert number not in everything, number
    holds = ReleaseHold.objects.filter(study=study)
    assert holds.count() == 3 and {h.found for h in holds} == {"phone number"}


def test_the_regions_the_study_names_decide_national_numbers(admin_client, tmp_path):  # noqa: F811
    study = _build(tmp_path)
    study.phone_regions = "US"
    study.save(update_fields=["phone_regions"])
    american, british = "Call me at (555) 123 4567.", "Ring me on 07700 900123."
    _plant_texts(study, [american, british, "+44 7700 900123 works too."], [])
    folder = _bundle(admin_client, study, tmp_path, "us")
    texts = (folder / "completions.jsonl").read_text()
    assert "(555) 123 4567" not in texts and "+44 7700 900123" not in texts  # held
    assert british in texts  # not how the US writes a number: published
    assert ReleaseHold.objects.filter(study=study).count() == 2


def test_the_study_form_takes_region_codes_and_refuses_unknown_ones(admin_client, tmp_path):  # noqa: F811
    from studio.forms import StudyForm

    study = _build(tmp_path)
    form = StudyForm(instance=study)
    data = {n: form.initial[n] for n in form.fields if form.initial.get(n) not in (None, "")}
    good = StudyForm({**data, "phone_regions": "gb; us"}, instance=study)
    assert good.is_valid(), good.errors
    assert good.cleaned_data["phone_regions"] == "GB, US"
    bad = StudyForm({**data, "phone_regions": "GB, XX"}, instance=study)
    assert not bad.is_valid() and "Unknown region code(s): XX" in str(bad.errors)

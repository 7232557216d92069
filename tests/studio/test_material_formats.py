"""Material uploads explain themselves: examples, served JSON Schemas, the kind recognised from
the file, the choice remembered, and messages that never show a server path."""

from __future__ import annotations

import json
import tempfile

import jsonschema
import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from completions.esconv import EsconvFormatError, screen_corpus
from completions.models import Completion, DialogueContext
from studio.material_formats import EXAMPLES, detect_kind
from studio.models import ImportJob
from tests.factories import StudyFactory
from tests.factories.files import completions_jsonl, contexts_jsonl

# Uploads are imported when their transaction commits (eager Celery): commit for real.
pytestmark = pytest.mark.django_db(transaction=True)
SAMPLES = "tests/annotation/samples"


@pytest.fixture
def admin_client(client):
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(user)
    return client


@pytest.fixture
def study():
    return StudyFactory(slug="s1", name="Study one", status="draft")


def _upload(client, kind: str, name: str, content: bytes):
    return client.post(
        reverse("studio:material", args=["s1"]),
        {"kind": kind, "file": SimpleUploadedFile(name, content)},
        follow=True,
    )


def _schema(kind: str) -> dict:
    response = Client().get(f"/formats/{kind}.schema.json")  # public, like the docs
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/schema+json")
    return json.loads(response.content)


def test_files_made_elsewhere_are_recognised_by_their_content(settings):
    esconv = (settings.BASE_DIR / "demo" / "esconv-sample.json").read_bytes()
    assert detect_kind(esconv[:65536]).kind == "esconv"  # cut mid-conversation: still known
    assert detect_kind(contexts_jsonl()).words == "JSON Lines contexts"
    assert detect_kind(completions_jsonl()).kind == "completions"
    mtbench = (settings.BASE_DIR / SAMPLES / "mtbench_human_judgments.jsonl").read_bytes()
    assert detect_kind(mtbench).kind is None  # not our judgments format: the command reads it
    arena = detect_kind((settings.BASE_DIR / SAMPLES / "arena_battles.json").read_bytes())
    assert arena.kind is None and "--format arena" in arena.description
    csv = detect_kind((settings.BASE_DIR / SAMPLES / "judgments_other_tool.csv").read_bytes())
    assert csv.kind is None and "not JSON" in csv.description
    assert "not UTF-8" in detect_kind("héllo".encode("latin-1") * 10).description
    assert detect_kind(b"\xef\xbb\xbf" + contexts_jsonl()).kind == "contexts"  # a BOM
    assert detect_kind(b"  \n").description == "the file is empty"
    long_line = contexts_jsonl(1).replace(b'"source"', b'"note": "' + b"x" * 70000 + b'", "s"')
    assert detect_kind(long_line[:65536]).kind == "contexts"  # first line longer than the head


def test_each_example_validates_against_its_served_schema_and_imports(admin_client, study):
    for kind in ("esconv", "contexts", "completions", "judgments"):
        document = json.loads(EXAMPLES[kind])
        jsonschema.validate(document, _schema(kind))
        assert detect_kind(EXAMPLES[kind].encode()).kind == kind
    for kind in ("contexts", "completions", "judgments"):  # in the order a study is set up
        page = _upload(admin_client, "detect", f"{kind}.jsonl", EXAMPLES[kind].encode() + b"\n")
        assert "imported" in page.content.decode(), page.content.decode()
    assert DialogueContext.objects.filter(study=study, external_id="ctx-1").exists()
    assert Completion.objects.filter(context__study=study, system__name="my-model").exists()
    page = _upload(admin_client, "detect", "esconv.json", EXAMPLES["esconv"].encode())
    assert "contexts created: 1" in page.content.decode()
    assert Client().get("/formats/nothing.schema.json").status_code == 404


def test_the_esconv_schema_says_what_the_reader_accepts(settings):
    schema = _schema("esconv")
    sample = json.loads((settings.BASE_DIR / "demo" / "esconv-sample.json").read_text())
    jsonschema.validate(sample, schema)
    failed_esconv = [{"dialog": [{"speaker": "Listener", "content": "Hi"}]}]
    jsonschema.validate(failed_esconv, schema)  # FailedESConv's names, any case
    bad = [{"dialog": [{"speaker": "bot", "content": "Hi"}]}]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    with pytest.raises(EsconvFormatError):
        screen_corpus(bad)


def test_the_page_shows_an_example_and_a_schema_link_for_each_kind(admin_client, study):
    html = admin_client.get(reverse("studio:material", args=["s1"])).content.decode()
    for kind in ("esconv", "contexts", "completions", "judgments"):
        assert f'href="/formats/{kind}.schema.json"' in html
    assert "&quot;turns&quot;: [{&quot;speaker&quot;: &quot;seeker&quot;" in html
    assert "formats the README describes" not in html
    assert '<option value="detect" selected>' in html  # recognised from the file by default


def test_a_contexts_file_is_recognised_and_the_choice_remembered(admin_client, study):
    page = _upload(admin_client, "detect", "mine.jsonl", contexts_jsonl()).content.decode()
    assert "mine.jsonl looks like JSON Lines contexts: imported" in page
    assert ImportJob.objects.get(filename="mine.jsonl").kind == "contexts"
    _upload(admin_client, "completions", "replies.jsonl", completions_jsonl())
    html = admin_client.get(reverse("studio:material", args=["s1"])).content.decode()
    assert '<option value="completions" selected>' in html  # the last choice, kept


def test_a_file_of_another_kind_than_chosen_is_refused_naming_both(admin_client, study):
    # A newcomer's first try: a contexts file with ESConv (once the default) chosen.
    page = _upload(admin_client, "esconv", "contexts.jsonl", contexts_jsonl())
    html = page.content.decode()
    assert "You chose an ESConv JSON file (a list of conversations), but contexts.jsonl" in html
    assert "looks like JSON Lines contexts" in html
    assert not ImportJob.objects.exists() and not DialogueContext.objects.exists()
    assert '<option value="esconv" selected>' in html  # what was chosen stays on the form


def test_a_file_of_no_kind_we_know_asks_what_it_holds(admin_client, study, settings):
    csv = (settings.BASE_DIR / SAMPLES / "judgments_other_tool.csv").read_bytes()
    html = _upload(admin_client, "detect", "other.csv", csv).content.decode()
    assert "we cannot tell what this file holds: it is not JSON" in html
    assert not ImportJob.objects.exists()


def test_refusals_name_the_file_never_a_server_path(admin_client, study):
    truncated = contexts_jsonl(2) + b'{"id": "ctx-9", "turns": [{"speaker": "seek'
    html = _upload(admin_client, "contexts", "cut.jsonl", truncated).content.decode()
    assert "import refused, nothing changed: line 3:" in html
    latin = "Ça va?".encode("latin-1")
    html += _upload(admin_client, "esconv", "latin.json", b"[" + latin + b"]").content.decode()
    assert "not UTF-8 text" in html
    assert tempfile.gettempdir() not in html and "/tmp" not in html
    errors = " ".join(ImportJob.objects.values_list("error", flat=True))
    assert "refused" in errors and tempfile.gettempdir() not in errors

"""Downloads page, the release bundle, and the export -> import round trip."""

from __future__ import annotations

import csv
import io
import json
import random
import subprocess
import sys
import zipfile
from datetime import UTC, datetime, timedelta

import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.judgment_export import judgments_export
from annotation.judgment_io import judgments_import
from annotation.models import Rater
from completions.access import STUDY_ADMINS
from completions.exports import completion_rows, context_rows
from completions.models import Study
from completions.services import completions_import, contexts_import
from ranking import services
from ranking.services import leaderboard_compute
from studio.downloads.release import release_verify
from tests.factories import JudgmentFactory, QualityCheckItemFactory, StudyFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("few_judgments_shown")]

SYSTEMS = {"model-a": 1.0, "model-b": 0.4, "model-c": 0.0, "human-w": 0.6}
PROLIFIC_ID = "5f0123456789abcdef012345"
T0 = datetime(2026, 2, 1, tzinfo=UTC)


def _lines(rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _build(tmp_path, slug: str = "source") -> Study:
    """A study with contexts, texts, human raters (one excluded, one with a Prolific-like id),
    two LLM judges with 1-5 strengths, ties and a quality check."""
    rng = random.Random(3)
    study = StudyFactory(slug=slug)
    contexts = [
        {
            "id": f"c{i}",
            "turns": [{"speaker": "seeker", "text": f"I feel stuck ({i})."}],
            "emotion_type": "sadness",
            "adversarial": i == 5,
        }
        for i in range(6)
    ]
    completions = [
        {
            "context_id": c["id"],
            "system": s,
            "kind": "human" if s == "human-w" else "model",
            "family": "" if s == "human-w" else "gpt",
            "text": f"{s} says: =that sounds hard ({c['id']})",
        }
        for c in contexts
        for s in SYSTEMS
    ]
    judgments = []
    names = list(SYSTEMS)
    for i in range(160):
        a, b = rng.sample(names, 2)
        diff = SYSTEMS[a] - SYSTEMS[b] + rng.gauss(0, 0.5)
        winner = "a" if diff > 0.15 else "b" if diff < -0.15 else "tie"
        human = i % 3 != 0
        judge = (PROLIFIC_ID if i % 7 == 0 else f"rater-{i % 9}") if human else f"llm-{i % 2}"
        row = {
            "context_id": f"c{i % 6}",
            "system_a": a,
            "system_b": b,
            "judge": judge,
            "judge_kind": "human" if human else "llm",
            "winner": winner,
            "strength": None if winner == "tie" else (1 + i % 2 if human else 1 + i % 5),
            "shown_left": "ab"[i % 2],
            "rationale": "-because" if i % 11 == 0 else "ok",
            "submitted_at": (T0 + timedelta(minutes=i)).isoformat(),
            "judge_family": None if human else "claude",
            "excluded": judge == "rater-4",
        }
        judgments.append(row)
    # One (pair, judge) once: keep the first verdict of each.
    seen, unique = set(), []
    for row in judgments:
        key = (row["context_id"], frozenset((row["system_a"], row["system_b"])), row["judge"])
        if key not in seen:
            seen.add(key)
            unique.append(row)
    for name, rows in (("ctx", contexts), ("cmp", completions), ("jdg", unique)):
        (tmp_path / f"{slug}-{name}.jsonl").write_text(_lines(rows))
    contexts_import(study=study, path=tmp_path / f"{slug}-ctx.jsonl")
    completions_import(study=study, path=tmp_path / f"{slug}-cmp.jsonl")
    judgments_import(study=study, path=tmp_path / f"{slug}-jdg.jsonl")
    rater = Rater.objects.get(study=study, external_id="rater-1")
    item = QualityCheckItemFactory(study=study)
    JudgmentFactory(
        pair=None,
        quality_item=item,
        study=study,
        quality_check=True,
        rater=rater,
        judge=rater.pseudonym,
    )
    return study


def _elo(study: Study, judges: str) -> dict[str, float]:
    result = leaderboard_compute(study, judges=judges, ci="fisher")
    return {row["system"]: row["elo"] for row in result["systems"]}


def test_export_then_import_into_a_new_study_gives_the_identical_leaderboard(tmp_path):
    source = _build(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "contexts.jsonl").write_text(_lines(context_rows(source)))
    (out / "completions.jsonl").write_text(_lines(completion_rows(source)))
    judgments_export(study=source, fmt="jsonl", path=out / "judgments.jsonl")
    copy = StudyFactory(slug="copy")
    contexts_import(study=copy, path=out / "contexts.jsonl")
    completions_import(study=copy, path=out / "completions.jsonl")
    judgments_import(study=copy, path=out / "judgments.jsonl")
    for judges in ("all", "human", "llm"):
        assert _elo(copy, judges) == _elo(source, judges), judges
    assert Rater.objects.filter(study=copy, exclusion_override=True).count() == 1


@pytest.fixture
def admin_client(client):
    user = User.objects.create_user("lead", password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    client.force_login(user)
    return client


def _body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_every_download_streams_with_no_store_and_pseudonyms_only(admin_client, tmp_path):
    study = _build(tmp_path)
    page = admin_client.get(reverse("downloads:page", args=[study.slug])).content.decode()
    assert 'aria-current="page">Downloads' in page
    names = [
        "judgments.csv",
        "judgments.jsonl",
        "judgments.parquet",
        "contexts.jsonl",
        "contexts.csv",
        "completions.jsonl",
        "completions.csv",
        "leaderboard.csv",
        "agreement.csv",
    ]
    for name in names:
        assert f"/studio/{study.slug}/downloads/{name}" in page
        response = admin_client.get(reverse("downloads:file", args=[study.slug, name]))
        assert response.status_code == 200 and response.streaming, name
        assert "no-store" in response["Cache-Control"]
        assert f'filename="{study.slug}-{name}"' in response["Content-Disposition"]
        body = _body(response)
        assert PROLIFIC_ID.encode() not in body and b"rater-1" not in body, name
    table = _body(admin_client.get(reverse("downloads:file", args=[study.slug, "judgments.csv"])))
    rows = list(csv.DictReader(io.StringIO(table.decode())))
    assert len(rows) == study.judgments.count()
    assert {r["rationale"] for r in rows} >= {"'-because", "ok"}  # formula neutralised
    texts = _body(admin_client.get(reverse("downloads:file", args=[study.slug, "completions.csv"])))
    assert b",'=" not in texts  # texts start with a system name, not "=": left as they are
    parquet = _body(
        admin_client.get(reverse("downloads:file", args=[study.slug, "judgments.parquet"]))
    )
    assert pq.read_table(io.BytesIO(parquet)).num_rows == study.judgments.count()
    board = _body(admin_client.get(reverse("downloads:file", args=[study.slug, "leaderboard.csv"])))
    assert {r["system"] for r in csv.DictReader(io.StringIO(board.decode()))} == set(SYSTEMS)


def test_downloads_are_for_study_admins_of_this_study_only(admin_client, tmp_path):
    from django.test import Client

    client = Client()
    study = _build(tmp_path)
    url = reverse("downloads:file", args=[study.slug, "judgments.csv"])
    assert client.get(url).status_code == 302  # to the login page
    other = User.objects.create_user("other", password="pw", is_staff=True)
    other.groups.add(Group.objects.get(name=STUDY_ADMINS))
    StudyFactory(slug="elsewhere").admins.add(other)
    study.admins.add(User.objects.get(username="lead"))
    client.force_login(other)
    assert client.get(url).status_code == 403
    assert client.post(reverse("downloads:release", args=[study.slug])).status_code == 403
    assert admin_client.get(url).status_code == 200
    assert (
        admin_client.get(reverse("downloads:file", args=[study.slug, "x.exe"])).status_code == 404
    )


def test_the_release_bundle_recomputes_the_same_elo_in_a_fresh_process(admin_client, tmp_path):
    study = _build(tmp_path)
    response = admin_client.post(reverse("downloads:release", args=[study.slug]))
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    path = tmp_path / "release.zip"
    path.write_bytes(b"".join(response.streaming_content))
    with zipfile.ZipFile(path) as bundle:
        names = {n.split("/", 1)[1] for n in bundle.namelist()}
        bundle.extractall(tmp_path / "x")
    assert {
        "contexts.jsonl",
        "completions.jsonl",
        "judgments.jsonl",
        "DATASHEET.md",
        "study.json",
        "SHA256SUMS",
        "recompute_leaderboard.py",
        "rubric.json",
        "leaderboard.json",
        "llm_judgments.jsonl",
        "llm_prompts.json",
        "ranking/bradley_terry.py",
    } <= names
    folder = tmp_path / "x" / f"{study.slug}-release"
    assert PROLIFIC_ID not in (folder / "judgments.jsonl").read_text()
    settings = json.loads((folder / "study.json").read_text())
    assert "invite_token" not in settings and "completion_code" not in settings
    datasheet = (folder / "DATASHEET.md").read_text()
    assert "excluded by a study admin" in datasheet and "LLM judge `llm-0`" in datasheet
    prompts = json.loads((folder / "llm_prompts.json").read_text())
    assert prompts["judge_template"]["version"] == "heart-judge-v2"
    assert len(prompts["judge_template"]["sha256"]) == 64
    # sha256sum agrees with the listing; the script, alone in a fresh interpreter, recomputes.
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=folder).returncode == 0
    done = subprocess.run(
        [sys.executable, "-I", "recompute_leaderboard.py", "--check"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Elo recomputes: yes" in done.stdout
    released = json.loads((folder / "leaderboard.json").read_text())
    assert {r["system"]: r["elo"] for r in released["all"]["systems"]} == _elo(study, "all")
    # The bundle carries the live board's intervals (the bootstrap over source conversations,
    # not a Fisher interval), and the script recomputed them from clusters.json.
    live = services.leaderboard_compute(study, judges="all")
    board = released["all"]
    assert board["interval"]["method"] == "bootstrap" == live["interval"]["method"]
    assert board["interval"]["level"] == 95 and board["interval"]["unit"] == "clusters"
    assert [(r["ci_low"], r["ci_high"]) for r in board["systems"]] == [
        (r["ci_low"], r["ci_high"]) for r in live["systems"]
    ]
    assert "clusters.json" in names


def test_verify_release_passes_a_good_bundle_and_fails_a_tampered_one(tmp_path):
    study = _build(tmp_path)
    good = tmp_path / "good.zip"
    call_command("release", "--study", study.slug, "-o", str(good))
    out = io.StringIO()
    call_command("verify_release", str(good), stdout=out)
    assert "release verified" in out.getvalue() and "Elo recomputes: yes" in out.getvalue()
    # A changed verdict: the hash no longer matches.
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(tampered, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.endswith("judgments.jsonl") and "llm_" not in item.filename:
                data = data.replace(b'"winner": "a"', b'"winner": "b"', 1)
            dst.writestr(item, data)
    ok, lines = release_verify(tampered)
    assert not ok and any("judgments.jsonl: SHA-256 does not match" in line for line in lines)
    with pytest.raises(CommandError, match="NOT verified"):
        call_command("verify_release", str(tampered), stdout=io.StringIO())
    # Hashes redone to match, but the verdict changed: Elo no longer recomputes.
    resummed = tmp_path / "resummed.zip"
    _rehash(tampered, resummed)
    ok, lines = release_verify(resummed)
    assert not ok and "Elo recomputes: NO" in "\n".join(lines)


def test_a_system_taken_off_the_board_is_in_the_bundles_record_and_the_elo_still_recomputes(
    tmp_path,
):
    from ranking.record import system_take_off

    study = _build(tmp_path)
    system_take_off(study=study, system="model-c", reason="withdrawn by its maker", by="boss")
    path = tmp_path / "release.zip"
    call_command("release", "--study", study.slug, "-o", str(path))
    ok, lines = release_verify(path)
    assert ok, lines
    with zipfile.ZipFile(path) as bundle:
        folder = f"{study.slug}-release/"
        history = json.loads(bundle.read(folder + "board_history.json"))
        board = json.loads(bundle.read(folder + "leaderboard.json"))
        judgments = bundle.read(folder + "judgments.jsonl").decode()
    removed = [e for e in history["events"] if e["kind"] == "system_removed"]
    assert removed[0]["system"] == "model-c" and removed[0]["reason"] == "withdrawn by its maker"
    assert removed[0]["at"] and {"system": "model-c", "on_board": False} in history["systems"]
    assert board["human"]["off_board"] == ["model-c"]
    assert "model-c" not in {row["system"] for row in board["human"]["systems"]}
    assert '"model-c"' in judgments  # its judgments stay in the release


def _rehash(src_path, dst_path) -> None:
    import hashlib

    with zipfile.ZipFile(src_path) as src, zipfile.ZipFile(dst_path, "w") as dst:
        sums, folder = [], ""
        for item in src.infolist():
            if item.filename.endswith("/SHA256SUMS"):
                folder = item.filename[: -len("SHA256SUMS")]
                continue
            data = src.read(item)
            dst.writestr(item, data)
            sums.append(f"{hashlib.sha256(data).hexdigest()}  {item.filename.split('/', 1)[1]}\n")
        dst.writestr(folder + "SHA256SUMS", "".join(sums))


def test_release_refuses_an_unknown_study(tmp_path):
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        call_command("release", "--study", "nope", "-o", str(tmp_path / "r.zip"))


def test_the_datasheet_counts_only_systems_with_replies():
    from studio.downloads.datasheet import render
    from tests.factories.writing import build_writing_study
    from writing.services import writer_enter

    study = build_writing_study(n_contexts=2)  # one model system with a reply per context
    writer_enter(study=study)  # a writer who entered and wrote nothing: a system row, no data
    sheet = render(study, generated_at="2026-11-25T00:00:00Z")
    assert "- systems with replies: model 1\n" in sheet  # not "human 1"


def test_the_release_recomputes_under_the_studys_verdict_rule(tmp_path):
    """LLM verdicts in both orders made one consistent verdict, and humans weighing 30 % of
    the combined board: the bundle's script applies the same rule and gets the same Elo."""
    study = _build(tmp_path, slug="rule")
    rows = [json.loads(line) for line in (tmp_path / "rule-jdg.jsonl").read_text().splitlines()]
    swapped = []
    for i, row in enumerate(r for r in rows if r["judge_kind"] == "llm"):
        twin = dict(row, shown_left="b" if row["shown_left"] == "a" else "a")
        if i % 3 == 0:  # a third of the pairs judged inconsistently across the two orders
            twin["winner"] = {"a": "b", "b": "a", "tie": "a"}[row["winner"]]
            twin["strength"] = 3
        swapped.append(twin)
    (tmp_path / "rule-swap.jsonl").write_text(_lines(swapped))
    judgments_import(study=study, path=tmp_path / "rule-swap.jsonl")
    study.llm_games, study.human_weight_share = "consistent", 0.3
    study.save(update_fields=["llm_games", "human_weight_share"])
    path = tmp_path / "rule.zip"
    call_command("release", "--study", study.slug, "-o", str(path))
    with zipfile.ZipFile(path) as bundle:
        bundle.extractall(tmp_path / "y")
    folder = tmp_path / "y" / f"{study.slug}-release"
    released = json.loads((folder / "leaderboard.json").read_text())
    assert released["all"]["params"]["verdicts"] == {
        "llm_games": "consistent",
        "human_min_verdicts": 2,
        "human_share": 0.3,
    }
    done = subprocess.run(
        [sys.executable, "-I", "recompute_leaderboard.py", "--check"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The rule matters: counting every verdict alike gives another board.
    by_count = leaderboard_compute(study, judges="all", ci="fisher", combined="by_count")
    assert {r["system"]: r["elo"] for r in by_count["systems"]} != {
        r["system"]: r["elo"] for r in released["all"]["systems"]
    }


def test_the_bundle_builds_when_llm_verdicts_mix_a_template_with_none(admin_client, tmp_path):
    from annotation.judge_prompt import CURRENT
    from annotation.models import Judgment

    study = _build(tmp_path)
    llm = Judgment.objects.filter(study=study, judge_kind="llm")
    run = llm.first()  # one verdict from a real run; the imported ones name no template
    run.metadata = {**(run.metadata or {}), "template": CURRENT.version}
    run.save(update_fields=["metadata"])
    assert llm.exclude(pk=run.pk).exists()
    response = admin_client.post(reverse("downloads:release", args=[study.slug]))
    assert response.status_code == 200
    bundle = zipfile.ZipFile(io.BytesIO(_body(response)))
    name = next(n for n in bundle.namelist() if n.endswith("llm_prompts.json"))
    used = json.loads(bundle.read(name))["judge_templates_used"]
    assert [t["version"] for t in used] == [CURRENT.version]

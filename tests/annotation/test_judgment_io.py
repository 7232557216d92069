"""Judgments JSONL import (as if made here) and streaming export (jsonl, csv, parquet)."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command

from annotation.judgment_export import FIELDS, judgments_export
from annotation.judgment_io import import_pseudonym, judgments_import
from annotation.models import Judgment, Pair, Rater
from completions.importers import ImportFileError
from completions.models import Completion, DialogueContext, System
from tests.factories import JudgmentFactory, QualityCheckItemFactory, RaterFactory, StudyFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SYSTEMS = ["alpha", "beta", "gamma"]
REAL_IDS = [f"5f{i:022d}" for i in range(4)]  # Prolific-like ids: must never leave the platform


def judgment_row(i: int, **over) -> dict:
    a, b = SYSTEMS[i % 3], SYSTEMS[(i + 1) % 3]
    human = i % 4 != 3
    winner = ["a", "b", "tie"][i % 3]
    strength = None if winner == "tie" else (1 + i % 2 if human else 1 + i % 5)
    row = {
        "context_id": f"ctx-{i % 5}",
        "system_a": a,
        "system_b": b,
        "completion_a": f"reply of {a} on ctx-{i % 5}",
        "completion_b": f"reply of {b} on ctx-{i % 5}",
        "shown_left": "ab"[i % 2],
        "judge": REAL_IDS[i % 4] if human else "judge-gpt",
        "judge_kind": "human" if human else "llm",
        "judge_family": None if human else "gpt",
        "winner": winner,
        "strength": strength,
        "strength_max": (2 if human else 5) if strength else None,
        "axes": {
            "H": {"winner": winner, "strength": strength},
            "E": {"winner": "a", "strength": 1},
        },
        "rationale": f"because {i}",
        "duration_ms": 1000 + i,
        "submitted_at": (T0 + timedelta(minutes=i)).isoformat(),
        "quality_check": False,
        "excluded": False,
        # One judge of four is a clinician: the import records it, the export gives it back.
        "cohort": ("clinician" if i % 4 == 0 else "crowd") if human else None,
    }
    return row | over


def rows_for(n: int) -> list[dict]:
    """Unique (context, pair, judge) rows: judges cycle while contexts/pairs rotate."""
    out, seen = [], set()
    for i in range(n * 3):
        row = judgment_row(i)
        key = (row["context_id"], frozenset((row["system_a"], row["system_b"])), row["judge"])
        if key not in seen:
            seen.add(key)
            out.append(row)
        if len(out) == n:
            break
    return out


def write(path, rows) -> str:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return str(path)


def canonical(row: dict) -> dict:
    """Orient a row by system name so that rows from any orientation compare equal."""
    if row["system_a"] < row["system_b"]:
        return row
    swap = {"a": "b", "b": "a", "tie": "tie", None: None}
    return row | {
        "system_a": row["system_b"],
        "system_b": row["system_a"],
        "completion_a": row["completion_b"],
        "completion_b": row["completion_a"],
        "winner": swap[row["winner"]],
        "shown_left": swap[row["shown_left"]],
        "axes": {k: m | {"winner": swap[m["winner"]]} for k, m in row["axes"].items()},
    }


def read_export(path, fmt: str) -> list[dict]:
    if fmt == "jsonl":
        return [json.loads(line) for line in open(path, encoding="utf-8")]
    if fmt == "parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
        return [
            r | {"axes": json.loads(r["axes"]), "submitted_at": r["submitted_at"].isoformat()}
            for r in rows
        ]
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == FIELDS
        return [_typed(r) for r in reader]


def _typed(r: dict) -> dict:
    ints = ("strength", "strength_max", "duration_ms")
    out = {k: (None if v == "" and k not in ("rationale",) else v) for k, v in r.items()}
    out.update({k: int(out[k]) if out[k] is not None else None for k in ints})
    out.update({k: out[k] == "true" for k in ("quality_check", "excluded")})
    out["axes"] = json.loads(out["axes"])
    return out


def normalised(row: dict, pseudonyms: dict[str, str]) -> dict:
    row = canonical(dict(row))
    row["judge"] = pseudonyms.get(row["judge"], row["judge"])
    row["submitted_at"] = datetime.fromisoformat(row["submitted_at"]).isoformat()
    return row


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_import_then_export_round_trips_field_by_field(tmp_path, fmt):
    study = StudyFactory(judgments_per_pair=3)
    rows = rows_for(30)
    report = judgments_import(study=study, path=write(tmp_path / "in.jsonl", rows))
    assert report.created == 30
    out = tmp_path / f"out.{fmt}"
    assert judgments_export(study=study, fmt=fmt, path=out) == 30
    exported = read_export(out, fmt)
    assert [list(r) for r in exported[:1]] == [FIELDS]
    pseudonyms = {i: import_pseudonym(study=study, external_id=i) for i in REAL_IDS}
    want = sorted((normalised(r, pseudonyms) for r in rows), key=json.dumps)
    got = sorted((normalised(r, {}) for r in exported), key=json.dumps)
    assert got == want


def test_no_real_rater_id_appears_in_any_export(tmp_path):
    study = StudyFactory()
    judgments_import(study=study, path=write(tmp_path / "in.jsonl", rows_for(20)))
    platform_rater = RaterFactory(study=study, external_id="PROLIFIC-REAL-ID-123")
    pair = Pair.objects.filter(study=study).first()
    JudgmentFactory(pair=pair, rater=platform_rater, judge=platform_rater.pseudonym)
    for fmt in ("jsonl", "csv", "parquet"):
        out = tmp_path / f"out.{fmt}"
        judgments_export(study=study, fmt=fmt, path=out)
        blob = out.read_bytes()
        for real in [*REAL_IDS, "PROLIFIC-REAL-ID-123"]:
            assert real.encode() not in blob
    # The real ids are kept, privately, on the raters (human judges are REAL_IDS[:3]).
    kept = set(Rater.objects.filter(study=study).values_list("external_id", flat=True))
    assert kept >= set(REAL_IDS[:3])


def test_a_reversed_file_orientation_is_flipped_into_the_canonical_pair(tmp_path):
    study = StudyFactory()
    first = judgment_row(0, judge="judge-x", judge_kind="llm", strength_max=5)  # alpha vs beta
    judgments_import(study=study, path=write(tmp_path / "a.jsonl", [first]))
    reverse = judgment_row(
        0,
        system_a="beta",
        system_b="alpha",
        completion_a="reply of beta on ctx-0",
        completion_b="reply of alpha on ctx-0",
        winner="a",
        strength=2,
        shown_left="a",
        judge="judge-y",
        judge_kind="llm",
        strength_max=5,
        axes={"H": {"winner": "a", "strength": 2}, "T": {"winner": "tie", "strength": None}},
    )
    report = judgments_import(study=study, path=write(tmp_path / "b.jsonl", [reverse]))
    assert (report.flipped, report.pairs_created) == (1, 0)
    pair = Pair.objects.get(study=study)
    assert pair.completion_a.system.name == "alpha"
    stored = Judgment.objects.get(judge="judge-y")
    assert (stored.winner, stored.shown_left, stored.strength) == ("b", "b", 2)
    assert stored.axes == {
        "H": {"winner": "b", "strength": 2},
        "T": {"winner": "tie", "strength": None},
    }


def test_reimporting_the_same_file_changes_nothing(tmp_path):
    study = StudyFactory(judgments_per_pair=2)
    path = write(tmp_path / "in.jsonl", rows_for(25))
    judgments_import(study=study, path=path)
    counts = (
        Judgment.objects.count(),
        Pair.objects.count(),
        Rater.objects.count(),
        list(Pair.objects.order_by("id").values_list("n_judgments", "quota")),
    )
    again = judgments_import(study=study, path=path)
    assert (again.created, again.already_present) == (0, 25)
    assert counts == (
        Judgment.objects.count(),
        Pair.objects.count(),
        Rater.objects.count(),
        list(Pair.objects.order_by("id").values_list("n_judgments", "quota")),
    )


def test_a_conflicting_verdict_is_an_error_naming_the_line_and_keeps_nothing(tmp_path):
    study = StudyFactory()
    rows = rows_for(6)
    judgments_import(study=study, path=write(tmp_path / "a.jsonl", rows[:3]))
    changed = rows[1] | {"winner": "b" if rows[1]["winner"] != "b" else "a"}
    path = write(tmp_path / "b.jsonl", [rows[3], rows[4], changed])
    with pytest.raises(ImportFileError, match="line 3: judge .* different verdict"):
        judgments_import(study=study, path=path)
    assert Judgment.objects.count() == 3


def test_a_conflict_late_in_a_file_stops_the_streamed_copy_and_keeps_nothing(tmp_path):
    # The rows are checked while COPY streams them: an error after thousands of good rows
    # still names its line (blank lines counted) and leaves the database as it was.
    study = StudyFactory()
    rows = [judgment_row(0, judge=f"rater-{k}", winner="a", strength=1) for k in range(3000)]
    rows.append(rows[1234] | {"winner": "b"})
    path = tmp_path / "late.jsonl"
    path.write_text("\n" + "".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ImportFileError, match="line 3002: judge 'rater-1234' .* different"):
        judgments_import(study=study, path=str(path))
    assert not Judgment.objects.exists() and not Pair.objects.exists()


def test_a_null_for_a_field_with_a_default_reads_as_the_default(tmp_path):
    study = StudyFactory()
    row = MINIMAL[0] | dict.fromkeys(
        ["judge_kind", "judge_family", "axes", "rationale", "metadata", "quality_check"]
    )
    judgments_import(study=study, path=write(tmp_path / "n.jsonl", [row | {"excluded": None}]))
    j = Judgment.objects.get()
    assert (j.judge_kind, j.judge_family, j.axes, j.rationale, j.metadata) == (
        "human",
        "",
        {},
        "",
        {},
    )
    assert j.rater.exclusion_override is None


def test_human_judgments_count_towards_the_pair_and_raise_a_full_quota(tmp_path):
    study = StudyFactory(judgments_per_pair=2)
    rows = [
        judgment_row(
            0, judge=f"rater-{k}", judge_kind="human", strength=1, strength_max=2, winner="a"
        )
        for k in range(3)
    ]
    rows.append(judgment_row(0, judge="llm-1", judge_kind="llm", strength=4, strength_max=5))
    report = judgments_import(study=study, path=write(tmp_path / "in.jsonl", rows))
    pair = Pair.objects.get(study=study)
    assert (pair.n_judgments, pair.quota, report.quotas_raised) == (3, 3, 1)


def test_new_objects_are_created_and_exclusion_and_scales_are_applied(tmp_path):
    study = StudyFactory()
    rows = [
        judgment_row(0, judge="R1", excluded=True, strength=2, strength_max=None),
        judgment_row(
            4, judge="L1", judge_kind="llm", strength=4, strength_max=None, extra_key="kept"
        ),
        judgment_row(2, judge="R2", winner="tie", strength=2, strength_max=None),
    ]
    report = judgments_import(study=study, path=write(tmp_path / "in.jsonl", rows))
    assert report.tie_strength_dropped == 1
    assert DialogueContext.objects.get(study=study, external_id="ctx-0").turns == []
    assert System.objects.filter(study=study, kind="model").count() == 3
    assert Completion.objects.filter(context__study=study).count() == 6
    r1 = Rater.objects.get(study=study, external_id="R1")
    assert r1.excluded and r1.pseudonym == import_pseudonym(study=study, external_id="R1")
    assert r1.pseudonym != "R1"
    human = Judgment.objects.get(rater=r1)
    assert (human.judge, human.strength_max, human.source) == (r1.pseudonym, 2, "import")
    llm = Judgment.objects.get(judge="L1")
    assert (llm.rater, llm.strength_max, llm.metadata) == (None, 5, {"extra_key": "kept"})
    tie = Judgment.objects.get(rater__external_id="R2")
    assert (tie.strength, tie.metadata) == (None, {"dropped_tie_strength": 2})


@pytest.mark.parametrize(
    ("over", "reason"),
    [
        ({"winner": "left"}, "'winner'"),
        ({"strength": 4, "strength_max": 2}, "strength 4 is above strength_max 2"),
        ({"submitted_at": "yesterday"}, "submitted_at"),
        ({"axes": {"Z": {"winner": "a"}}}, "unknown axis 'Z'"),
        ({"system_b": "alpha", "system_a": "alpha"}, "must differ"),
        ({"judge_kind": "robot"}, "judge_kind"),
    ],
)
def test_a_bad_line_stops_the_import_and_keeps_nothing(tmp_path, over, reason):
    study = StudyFactory()
    rows = rows_for(3)
    rows[1] = rows[1] | over
    with pytest.raises(ImportFileError, match=f"line 2: .*{reason}"):
        judgments_import(study=study, path=write(tmp_path / "in.jsonl", rows))
    assert not Judgment.objects.exists() and not DialogueContext.objects.exists()


def test_a_different_text_for_a_stored_completion_is_an_error(tmp_path):
    study = StudyFactory()
    judgments_import(study=study, path=write(tmp_path / "b.jsonl", [judgment_row(0)]))
    with pytest.raises(ImportFileError, match="line 1: the completion of 'beta'"):
        judgments_import(
            study=study,
            path=write(
                tmp_path / "c.jsonl", [judgment_row(0, judge="other", completion_b="edited")]
            ),
        )
    # Null texts are fine once the completions exist.
    ok = judgment_row(0, judge="third", completion_a=None, completion_b=None)
    assert judgments_import(study=study, path=write(tmp_path / "d.jsonl", [ok])).created == 1


MINIMAL = [
    {"context_id": "q1", "system_a": "m1", "system_b": "m2", "judge": "u1", "winner": "a"},
    {"context_id": "q1", "system_a": "m2", "system_b": "m3", "judge": "u1", "winner": "tie"},
    {"context_id": "q2", "system_a": "m1", "system_b": "m3", "judge": "u2", "winner": "b"},
]


def test_a_file_with_only_the_required_fields_imports_with_documented_defaults(tmp_path):
    study = StudyFactory()
    report = judgments_import(study=study, path=write(tmp_path / "min.jsonl", MINIMAL))
    assert (report.created, report.time_unknown, report.completions_text_unknown) == (3, 3, 5)
    judgments = Judgment.objects.filter(study=study)
    assert {j.submitted_at for j in judgments} == {None}  # unknown, never invented
    assert {(j.judge_kind, j.strength, j.strength_max, j.shown_left) for j in judgments} == {
        ("human", None, None, "")
    }
    assert all(j.axes == {} and j.rater is not None for j in judgments)
    placeholders = Completion.objects.filter(context__study=study)
    assert placeholders.count() == 5 and all(c.text_unknown and c.text == "" for c in placeholders)
    # The export says "unknown" as null, and the file re-imports without change.
    judgments_export(study=study, fmt="jsonl", path=tmp_path / "out.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {r["submitted_at"] for r in rows} == {None}
    again = judgments_import(study=study, path=str(tmp_path / "out.jsonl"))
    assert (again.created, again.already_present) == (0, 3)


def test_a_later_file_with_texts_fills_the_placeholders_in(tmp_path):
    study = StudyFactory()
    judgments_import(study=study, path=write(tmp_path / "min.jsonl", MINIMAL[:1]))
    with_text = MINIMAL[0] | {"judge": "u9", "completion_a": "A text", "completion_b": "B text"}
    report = judgments_import(study=study, path=write(tmp_path / "t.jsonl", [with_text]))
    assert report.completions_filled_in == 2
    texts = Completion.objects.filter(context__study=study).values_list("text", "text_unknown")
    assert sorted(texts) == [("A text", False), ("B text", False)]


def test_pairs_with_a_text_unknown_completion_are_never_served_to_raters(tmp_path):
    from annotation.services.assignments import assignment_next

    study = StudyFactory(items_per_rater=10, quality_check_rate=0)
    judgments_import(study=study, path=write(tmp_path / "min.jsonl", MINIMAL))
    rater = RaterFactory(study=study)
    assert assignment_next(rater=rater) is None
    # Once a completions import gives the texts, the pair is served.
    Completion.objects.filter(context__study=study).update(text="known", text_unknown=False)
    assert assignment_next(rater=rater) is not None


def test_the_export_includes_quality_checks_and_effective_exclusion(tmp_path):
    study = StudyFactory()
    judgments_import(study=study, path=write(tmp_path / "in.jsonl", rows_for(4)))
    rater = RaterFactory(study=study, flagged=True)
    item = QualityCheckItemFactory(study=study)
    JudgmentFactory(
        study=study,
        quality_item=item,
        judge_kind="human",
        rater=rater,
        judge=rater.pseudonym,
        winner="a",
        submitted_at=T0,
        quality_check=True,
        strength=None,
        strength_max=None,
        shown_left="",
    )
    judgments_export(study=study, fmt="jsonl", path=tmp_path / "o.jsonl")
    rows = read_export(tmp_path / "o.jsonl", "jsonl")
    qc = [r for r in rows if r["quality_check"]]
    assert len(rows) == 5 and len(qc) == 1
    assert qc[0]["completion_a"] == item.text_a and qc[0]["excluded"] is True
    rater.exclusion_override = False
    rater.save()
    judgments_export(study=study, fmt="jsonl", path=tmp_path / "o2.jsonl")
    assert not any(r["excluded"] for r in read_export(tmp_path / "o2.jsonl", "jsonl"))


def test_the_commands_import_and_export(tmp_path):
    path = write(tmp_path / "in.jsonl", rows_for(8))
    out = tmp_path / "o.csv"
    from io import StringIO

    buf = StringIO()
    call_command("import_judgments", path, "--study", "j", "--create", stdout=buf)
    assert "created: 8" in buf.getvalue()
    call_command("export_judgments", "--study", "j", "--format", "csv", "-o", str(out), stdout=buf)
    assert len(read_export(out, "csv")) == 8
    with pytest.raises(CommandError, match="line 1: invalid JSON"):
        call_command("import_judgments", write(tmp_path / "bad.jsonl", ['{"x"']), "--study", "j")


def test_a_contexts_import_fills_in_the_placeholders_a_judgments_import_made(tmp_path):
    from completions.services import contexts_import

    study = StudyFactory()
    judgments_import(study=study, path=write(tmp_path / "j.jsonl", [judgment_row(0)]))
    turns = [{"speaker": "seeker", "text": "I feel so alone."}]
    contexts = tmp_path / "c.jsonl"
    contexts.write_text(json.dumps({"id": "ctx-0", "turns": turns, "emotion_type": "sad"}) + "\n")
    report = contexts_import(study=study, path=contexts)
    assert (report.created, report.updated) == (0, 1)
    context = DialogueContext.objects.get(study=study, external_id="ctx-0")
    assert (context.turns, context.emotion_type) == (turns, "sad")
    assert Pair.objects.get(study=study).context_id == context.pk


def test_a_pairs_judgments_spread_over_chunks_are_all_counted_new_and_old_pairs_alike(
    tmp_path, monkeypatch
):
    """A pair made by the import is written at its end with every chunk's judgments counted; a
    pair stored before it gets its new judgments added; judgments point at the right pairs."""
    monkeypatch.setattr("annotation.judgment_io.CHUNK", 2)
    study = StudyFactory(judgments_per_pair=2)
    human = {"judge_kind": "human", "strength": 1, "strength_max": 2}
    judgments_import(
        study=study, path=write(tmp_path / "a.jsonl", [judgment_row(0, judge="h0", **human)])
    )
    old = Pair.objects.get(study=study)
    rows = [judgment_row(i % 2 * 5, judge=f"h{1 + i}", **human) for i in range(7)]
    rows.append(judgment_row(5, judge="llm-1", judge_kind="llm", strength=4, strength_max=5))
    report = judgments_import(study=study, path=write(tmp_path / "b.jsonl", rows))

    new = Pair.objects.exclude(pk=old.pk).get(study=study)
    old.refresh_from_db()
    # The stored pair: 1 judgment before, 4 in this file (quota raised from 2 to 5).
    assert (old.n_judgments, old.quota, old.judgments.count()) == (5, 5, 5)
    # The new pair: 3 human judgments in chunks 1, 2 and 3, and one LLM judgment (not counted).
    assert (new.n_judgments, new.quota, new.judgments.count()) == (3, 3, 4)
    assert new.context_id == old.context_id and report.quotas_raised == 2
    assert report.pairs_created == 1 and report.created == 8


def test_imported_human_judgments_add_to_a_pair_the_platform_already_filled(tmp_path):
    study = StudyFactory(judgments_per_pair=2)
    judgments_import(
        study=study,
        path=write(
            tmp_path / "a.jsonl",
            [judgment_row(0, judge=f"h{k}", strength=1, strength_max=2) for k in range(2)],
        ),
    )
    pair = Pair.objects.get(study=study)
    assert (pair.n_judgments, pair.quota) == (2, 2)
    judgments_import(
        study=study,
        path=write(tmp_path / "b.jsonl", [judgment_row(0, judge="h9", strength=1, strength_max=2)]),
    )
    pair.refresh_from_db()
    assert (pair.n_judgments, pair.quota) == (3, 3)


def test_re_importing_a_studys_own_export_changes_nothing(tmp_path):
    study = StudyFactory()
    judgments_import(study=study, path=write(tmp_path / "in.jsonl", rows_for(12)))
    judgments_export(study=study, fmt="jsonl", path=tmp_path / "out.jsonl")
    raters = Rater.objects.count()
    report = judgments_import(study=study, path=tmp_path / "out.jsonl")
    assert (report.created, report.already_present, report.raters_created) == (0, 12, 0)
    assert Rater.objects.count() == raters and Judgment.objects.count() == 12

"""End to end against a provider that follows the schema it is sent and nothing more.

The fake server runs in its draw mode (``python -m fakes.llm --draw``): every
structured reply is drawn by hypothesis-jsonschema from the schema in the request body. Judge,
label and adversarial runs through the real SDKs store every unit; a re-run is answered from
the cache (normalised replies included: they were stored, so they are cached) and stores the
same results again.
"""

from __future__ import annotations

import pytest

from annotation.models import Judgment
from completions import adversarial
from completions.models import DialogueContext
from fakes.llm import FakeServer
from labelling.models import CompletionLabels
from llm.models import UnitStatus
from llm.selectors import run_counts
from tests.factories.llm import endpoint, study_with_pairs
from tests.llm.sent_schemas import SOURCE, run_kind, study_for

pytestmark = pytest.mark.django_db


# Drawing a reply from a schema takes the fake server a second or more on a loaded machine: the
# endpoints here wait longer than the factory's 5 s, so a slow draw is not a failed unit.
DRAW_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def drawing_server():
    with FakeServer(draw=True) as server:
        yield server


def all_done(run) -> None:
    counts = run_counts(run)
    errors = list(run.units.exclude(status=UnitStatus.DONE).values_list("status", "error"))
    assert counts["units"] > 0 and counts["done"] == counts["units"], (counts, errors)
    assert not run.units.exclude(status=UnitStatus.DONE).exists()


def verdicts(study) -> list[tuple]:
    return sorted(
        Judgment.objects.filter(study=study).values_list(
            "pair_id",
            "judge",
            "shown_left",
            "winner",
            "strength",
            "axes",
            "rationale",
            "metadata__normalised",
        )
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_judge_run_stores_every_drawn_verdict_and_a_rerun_is_answered_from_the_cache(
    drawing_server, provider
):
    study = study_with_pairs(1)  # 4 systems, 6 pairs: 12 units for a judge of another family
    judge = endpoint(
        drawing_server,
        f"drawn-judge-{provider}",
        provider=provider,
        family="x",
        timeout_s=DRAW_TIMEOUT_S,
    )
    run = run_kind(study, "judge", judge)
    all_done(run)
    first = verdicts(study)
    assert len(first) == 12 and {v[2] for v in first} == {"a", "b"}
    assert not any(v[6].startswith("Response ") for v in first)  # drawn, not the built-in judge
    sent = drawing_server.state.total
    Judgment.objects.filter(study=study).delete()  # e.g. an admin cleared them: judge again
    again = run_kind(study, "judge", judge)
    all_done(again)
    assert drawing_server.state.total == sent  # nothing sent: every reply came from the cache
    assert run_counts(again)["from_cache"] == 12
    assert verdicts(study) == first


def test_a_label_run_stores_every_drawn_label_set_and_a_rerun_is_answered_from_the_cache(
    drawing_server,
):
    study = study_for("label", n=2)  # 6 completions
    labeller = endpoint(drawing_server, "drawn-labeller", family="x", timeout_s=DRAW_TIMEOUT_S)
    run = run_kind(study, "label", labeller)
    all_done(run)
    rows = {r.completion_id: r.labels for r in CompletionLabels.objects.filter(label_set__run=run)}
    assert len(rows) == 6
    # Drawn evidence is random text: set aside and flagged, the status kept.
    set_aside = [
        label
        for labels in rows.values()
        for label in labels.values()
        if "evidence_unverified" in label
    ]
    assert set_aside and all(label["evidence"] is None for label in set_aside)
    sent = drawing_server.state.total
    again = run_kind(study, "label", labeller)  # a new label set on the same material
    all_done(again)
    assert drawing_server.state.total == sent and run_counts(again)["from_cache"] == 6
    rerun = {
        r.completion_id: r.labels for r in CompletionLabels.objects.filter(label_set__run=again)
    }
    assert rerun == rows


def test_an_adversarial_run_stores_every_drawn_rewrite_within_the_papers_rules(drawing_server):
    study = study_for("adversarial", n=3)
    rewriter = endpoint(
        drawing_server, "drawn-rewriter", provider="anthropic", family="x", timeout_s=DRAW_TIMEOUT_S
    )
    run = run_kind(study, "adversarial", rewriter)
    all_done(run)
    variants = DialogueContext.objects.filter(study=study, adversarial=True)
    assert variants.count() == 3
    for variant in variants:
        hostility = iter(variant.metadata["adversarial"]["hostility"])
        turns = [
            {**t, "hostility": next(hostility) if t["speaker"] == "seeker" else None}
            for t in variant.turns
        ]
        assert adversarial.rejection_reasons(SOURCE, turns) == []
    sent = drawing_server.state.total
    variants.delete()
    again = run_kind(study, "adversarial", rewriter)
    all_done(again)
    assert drawing_server.state.total == sent and run_counts(again)["from_cache"] == 3

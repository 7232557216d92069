"""LLM judge runs against the fake server: both orders, own-family skips, repair, invalid."""

from __future__ import annotations

import json

import pytest

from annotation.llm_judge import RATIONALE_MAX, VERDICT_SCHEMA, orient, verdict_read
from annotation.models import Judgment, Pair
from core.structured import InvalidReply
from llm import services
from llm.executor import run_execute
from llm.models import RunStatus, UnitStatus
from llm.selectors import run_counts, run_status_row
from tests.factories.llm import endpoint, study_with_pairs

pytestmark = pytest.mark.django_db


def _judge(study, *judges, budget=None):
    run = services.run_plan(study=study, kind="judge", endpoints=judges, budget_usd=budget)
    services.run_start(run=run)
    run_execute(run.pk)
    run.refresh_from_db()
    return run


def test_each_pair_is_judged_in_both_orders_and_stored_in_canonical_orientation(fake_llm):
    study = study_with_pairs(2)  # 4 systems: 6 pairs per context, 12 pairs
    gemini = endpoint(fake_llm, "judge-gemini", family="gemini")
    run = _judge(study, gemini)
    assert run.status == RunStatus.FINISHED and run.plan["skipped_own_family"] == 0
    verdicts = Judgment.objects.filter(study=study, judge="judge-gemini")
    assert verdicts.count() == 24
    for pair in Pair.objects.filter(study=study):
        shown = sorted(verdicts.filter(pair=pair).values_list("shown_left", flat=True))
        assert shown == ["a", "b"]
    one = verdicts.filter(shown_left="b").first()
    as_shown = one.metadata["verdict_as_shown"]["winner"]
    assert one.winner == {"a": "b", "b": "a"}[as_shown]  # shown first was completion_b
    assert one.judge_kind == "llm" and one.strength_max == 5 and 1 <= one.strength <= 5
    assert one.raw_output and len(one.prompt_hash) == 64
    assert one.metadata["template"] == "heart-judge-v2" and one.rationale


def test_a_judge_skips_pairs_with_its_own_family_and_the_plan_counts_them(fake_llm):
    study = study_with_pairs(1)  # gpt-x, claude-x, llama-x, humans: 6 pairs
    gpt = endpoint(fake_llm, "judge-gpt", family="gpt")
    claude = endpoint(fake_llm, "judge-claude", family="Claude", provider="anthropic")
    run = services.run_plan(study=study, kind="judge", endpoints=[gpt, claude])
    assert run.plan["skipped_own_family"] == 6  # each judge: the 3 pairs with its family
    assert run.plan["skipped_own_family_by_judge"] == {"judge-gpt": 3, "judge-claude": 3}
    assert run.plan["units"] == 12
    services.run_start(run=run)
    run_execute(run.pk)
    row = run_status_row(run)
    assert row["judges"] == ["judge-claude", "judge-gpt"] and row["skipped_own_family"] == 6
    for verdict in Judgment.objects.filter(study=study).select_related(
        "pair__completion_a__system", "pair__completion_b__system"
    ):
        families = {
            verdict.pair.completion_a.system.family,
            verdict.pair.completion_b.system.family,
        }
        assert verdict.judge_family.lower() not in {f.lower() for f in families}


def test_own_family_goes_through_the_alias_table_and_the_studys_own_aliases(fake_llm):
    # Built-in aliases: an "OpenAI" judge is the gpt family, an "anthropic" judge is claude.
    study = study_with_pairs(1)  # gpt-x, claude-x, llama-x, humans: 6 pairs
    openai = endpoint(fake_llm, "judge-openai", family="OpenAI")
    anthropic = endpoint(fake_llm, "judge-anthropic", family="anthropic", provider="anthropic")
    run = services.run_plan(study=study, kind="judge", endpoints=[openai, anthropic])
    assert run.plan["skipped_own_family_by_judge"] == {"judge-openai": 3, "judge-anthropic": 3}
    # A study's own alias: "polaris" is llama here, so its judge skips the llama-x pairs.
    study.family_aliases = {"polaris": "llama"}
    study.save(update_fields=["family_aliases"])
    polaris = endpoint(fake_llm, "judge-polaris", family="polaris")
    run = services.run_plan(study=study, kind="judge", endpoints=[polaris])
    assert run.plan["skipped_own_family_by_judge"] == {"judge-polaris": 3}
    assert run.plan["units"] == 2 * 3  # the 3 pairs without llama-x, in both orders


def test_a_schema_breaking_reply_is_repaired_once(fake_llm):
    study = study_with_pairs(1, systems=[("gpt-x", "gpt"), ("llama-x", "llama")])
    judge = endpoint(fake_llm, "judge-repair", model="judge-repair@bad=schema*1", family="gemini")
    run = _judge(study, judge)
    assert run_counts(run)["done"] == 2
    assert all(u.repairs == 1 and u.sends == 2 for u in run.units.all())
    assert Judgment.objects.filter(study=study).count() == 2


@pytest.mark.parametrize("bad", ["schema", "content"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_reply_that_stays_broken_is_invalid_with_its_raw_reply_and_never_a_verdict(
    fake_llm, bad, provider
):
    study = study_with_pairs(1, systems=[("gpt-x", "gpt"), ("llama-x", "llama")])
    judge = endpoint(fake_llm, f"judge-{bad}", model=f"j@bad={bad}", provider=provider, family="x")
    run = _judge(study, judge)
    counts = run_counts(run)
    assert counts["invalid"] == 2 and counts["done"] == 0 and run.status == RunStatus.FINISHED
    unit = run.units.first()
    assert unit.status == UnitStatus.INVALID and "--- repair reply ---" in unit.raw_reply
    assert not Judgment.objects.filter(study=study).exists()


def test_a_failed_judge_is_a_failure_and_rerunning_judges_only_what_is_missing(fake_llm):
    study = study_with_pairs(1, systems=[("gpt-x", "gpt"), ("llama-x", "llama"), ("h", "")])
    flaky = endpoint(fake_llm, "judge-flaky", model="jf@status=500*1", family="x")
    run = _judge(study, flaky)
    assert run_counts(run)["failed"] == 6 and not Judgment.objects.exists()
    services.run_retry_failed(run=run)
    run_execute(run.pk)
    assert Judgment.objects.filter(study=study).count() == 6
    again = services.run_plan(study=study, kind="judge", endpoints=[flaky])
    assert again.plan["units"] == 0 and again.plan["already_judged"] == 6


def test_orientation_flips_sides_for_the_swapped_order():
    verdict = {
        "winner": "a",
        "strength": 4,
        "axes": {
            "H": {"winner": "b", "strength": 2},
            "E": {"winner": "none", "strength": 0},
        },
    }
    assert orient(verdict, "ab") == {
        "winner": "a",
        "strength": 4,
        "axes": {"H": {"winner": "b", "strength": 2}},
    }
    assert orient(verdict, "ba")["winner"] == "b"
    assert orient(verdict, "ba")["axes"] == {"H": {"winner": "a", "strength": 2}}


def test_the_schema_is_strict_for_both_providers_and_states_the_axis_rule():
    assert VERDICT_SCHEMA["additionalProperties"] is False
    assert VERDICT_SCHEMA["required"] == ["rationale", "winner", "strength", "axes"]
    assert VERDICT_SCHEMA["properties"]["winner"]["enum"] == ["a", "b"]
    branches = VERDICT_SCHEMA["properties"]["axes"]["properties"]["H"]["anyOf"]
    shapes = [
        (b["properties"]["winner"]["enum"], b["properties"]["strength"]["enum"]) for b in branches
    ]
    assert shapes == [(["a", "b"], [1, 2, 3, 4, 5]), (["none"], [0])]


def reply(**changes) -> dict:
    axes = {axis: {"winner": "none", "strength": 0} for axis in "HEART"}
    axes["E"] = {"winner": "b", "strength": 4}
    return {"rationale": "B names the job loss.", "winner": "b", "strength": 3, "axes": axes}


def test_a_verdict_is_read_as_shown_with_nothing_to_normalise():
    verdict = verdict_read(json.dumps(reply()))
    assert verdict["winner"] == "b" and verdict["strength"] == 3 and verdict["normalised"] == []
    assert verdict["axes"]["E"] == {"winner": "b", "strength": 4}


@pytest.mark.parametrize(
    ("axis", "expected"),
    [({"winner": "a", "strength": 0}, "axes.H"), ({"winner": "none", "strength": 2}, "axes.H")],
)
def test_an_axis_outside_both_allowed_shapes_breaks_the_schema_and_says_what_is_allowed(
    axis, expected
):
    body = reply()
    body["axes"]["H"] = axis
    with pytest.raises(InvalidReply) as error:
        verdict_read(json.dumps(body))
    assert str(error.value).startswith(expected)
    assert "winner none, strength 0" in str(error.value)


def test_what_the_schema_cannot_state_is_normalised_and_recorded_on_the_verdict(fake_llm):
    body = reply()
    body["rationale"] = "B\u0000 is warmer. " + "x" * 2500
    verdict = verdict_read(json.dumps(body))
    assert len(verdict["rationale"]) == RATIONALE_MAX and "\x00" not in verdict["rationale"]
    assert verdict["normalised"] == [
        "rationale: 1 character(s) that cannot be stored removed (NUL or a lone surrogate)",
        "rationale: cut to 2,000 characters (the reply had 2,513)",
    ]

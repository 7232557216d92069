"""The study option "LLM games" and the LLM-judge sections on the leaderboard and agreement."""

from __future__ import annotations

import pytest

from llm import services as llm_services
from llm.executor import run_execute
from ranking.services import agreement_compute, leaderboard_compute
from tests.factories.llm import endpoint, study_with_pairs

pytestmark = pytest.mark.django_db


def _judged_study(fake_llm):
    study = study_with_pairs(3)
    judges = [
        endpoint(fake_llm, "lb-gemini", family="gemini"),
        endpoint(fake_llm, "lb-mistral", model="lb-mistral@bias=1.5", family="mistral"),
    ]
    run = llm_services.run_plan(study=study, kind="judge", endpoints=judges)
    llm_services.run_start(run=run)
    run_execute(run.pk)
    return study


def test_consistent_games_count_one_game_per_judge_and_pair(fake_llm):
    study = _judged_study(fake_llm)  # 18 pairs, 2 judges, both orders: 72 verdicts
    both = leaderboard_compute(study, judges="llm", ci="fisher")
    assert both["n_comparisons"] == 72 and both["llm_judges"]["games"] == "both"
    study.llm_games = "consistent"
    study.save(update_fields=["llm_games"])
    consistent = leaderboard_compute(study, judges="llm", ci="fisher")
    assert consistent["n_comparisons"] == 36 and consistent["llm_judges"]["games"] == "consistent"
    rows = {r["judge"]: r for r in consistent["llm_judges"]["position"]}
    assert rows["lb-gemini"]["pairs_both_orders"] == 18
    # a strong pull to the first-shown reply makes that judge inconsistent and position-biased
    assert (
        rows["lb-mistral"]["first_position_win_rate"] > rows["lb-gemini"]["first_position_win_rate"]
    )
    assert rows["lb-mistral"]["consistency"] < rows["lb-gemini"]["consistency"]


def test_the_agreement_reports_each_judge_left_out_in_turn(fake_llm):
    study = _judged_study(fake_llm)
    rows = agreement_compute(study)["judge_subsampling"]
    assert [r["left_out"] for r in rows] == [None, "lb-gemini", "lb-mistral"]
    assert all(set(r["elo"]) == {"gpt-x", "claude-x", "llama-x", "humans"} for r in rows)

from __future__ import annotations

import io
import json
import math

import pytest
from django.core.management import CommandError, call_command

from ranking.models import LeaderboardSnapshot
from tests.factories.ranking import (
    X,
    Y,
    add_known_verdicts,
    add_noise_that_must_not_count,
    build_study,
    judge,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def built():
    built = build_study(slug="cmd")
    add_known_verdicts(built)
    add_noise_that_must_not_count(built)
    judge(built, 0, X, judge="judge-gpt", kind="llm", strength=5, strength_max=5, family="gpt")
    judge(
        built, 0, X, judge="judge-claude", kind="llm", strength=2, strength_max=5, family="claude"
    )
    judge(
        built, 1, Y, judge="judge-claude", kind="llm", strength=2, strength_max=5, family="claude"
    )
    return built


#: The known verdicts are a handful: let rows and the combined board show them (the minimums
#: themselves are tested below and in test_board_minimums.py).
SMALL = ("--min-comparisons", "1", "--min-per-source", "1")


def _run(*args: str) -> str:
    out = io.StringIO()
    small = args[0] == "leaderboard" and not {"--from-snapshot", "--cohort"} & set(args)
    call_command(*args, *(SMALL if small and "--min-comparisons" not in args else ()), stdout=out)
    return out.getvalue()


def test_leaderboard_json_has_the_contract_shape_sorted_by_elo(built):
    body = json.loads(
        _run(
            "leaderboard",
            "--study",
            "cmd",
            "--judges",
            "human",
            "--format",
            "json",
            "--ci",
            "fisher",
            "--weights",
            "none",
        )
    )
    assert body["study"] == "cmd"
    assert body["judges"] == "human"
    assert body["n_comparisons"] == 4
    systems = body["systems"]
    assert [row["system"] for row in systems] == [X, Y]
    for row in systems:
        assert {"system", "elo", "ci_low", "ci_high", "win_rate", "n", "axes"} <= set(row)
        assert row["ci_low"] < row["elo"] < row["ci_high"]
    assert systems[0]["elo"] - systems[1]["elo"] == pytest.approx(400 * math.log10(3), abs=0.5)
    assert systems[0]["win_rate"] == pytest.approx(0.75)


def test_leaderboard_default_is_a_bootstrap_over_contexts_of_the_human_board(built):
    body = json.loads(_run("leaderboard", "--study", "cmd", "--format", "json", "--rounds", "200"))
    assert body["params"]["ci"] == "bootstrap"
    assert body["params"]["bootstrap_rounds"] == 200
    assert body["judges"] == "human"  # humans judged: theirs is the primary board
    assert body["n_comparisons"] == 4  # noise left out
    combined = _json("--judges", "all", "--rounds", "200")
    assert combined["n_comparisons"] == 7  # 4 human + 3 LLM
    assert combined["counts"]["human"] == 4 and combined["counts"]["llm"] == 3


def test_leaderboard_table_lists_systems_in_rank_order(built):
    text = _run("leaderboard", "--study", "cmd", "--ci", "none", "--judges", "all")
    assert text.index(X) < text.index(Y)
    assert "comparisons=7" in text
    assert "Judges counted: 4 human judgments" in text


def test_leaderboard_subset_and_ties_options(built):
    body = json.loads(
        _run(
            "leaderboard",
            "--study",
            "cmd",
            "--format",
            "json",
            "--subset",
            "adversarial",
            "--ties",
            "davidson",
            "--ci",
            "fisher",
        )
    )
    assert body["subset"] == "adversarial"
    assert body["n_comparisons"] == 2
    assert body["params"]["ties"] == "davidson"


def test_leaderboard_snapshot_option_stores_one_row(built):
    _run("leaderboard", "--study", "cmd", "--snapshot", "--ci", "fisher", "--judges", "all")
    _run("leaderboard", "--study", "cmd", "--snapshot", "--ci", "fisher", "--judges", "all")
    snapshot = LeaderboardSnapshot.objects.get()
    assert snapshot.trigger == "command"
    assert snapshot.n_comparisons == 7


def test_an_unknown_study_is_an_error(built):
    with pytest.raises(CommandError, match="no study"):
        _run("leaderboard", "--study", "nope")
    with pytest.raises(CommandError, match="no study"):
        _run("agreement", "--study", "nope")


def test_a_single_human_verdict_is_no_majority_by_default(built):
    # Each pair has one counted human verdict: no human majority, so nothing to agree with.
    body = json.loads(_run("agreement", "--study", "cmd", "--format", "json"))
    assert body["human_majority_min_verdicts"] == 2
    assert body["human_llm_agreement"]["n"] == 0
    assert body["human_llm_agreement_by_judge"] == {}


def test_agreement_json_has_the_contract_keys(built):
    built.study.human_majority_min = 1  # the study setting: one verdict makes a majority
    built.study.save(update_fields=["human_majority_min"])
    body = json.loads(_run("agreement", "--study", "cmd", "--format", "json"))
    assert {
        "fleiss_kappa",
        "krippendorff_alpha",
        "inter_human_agreement",
        "human_llm_agreement",
        "cross_judge_agreement",
    } <= set(body)
    assert set(body["human_llm_agreement"]) >= {"rate", "ci_low", "ci_high", "n"}
    # judge-claude and judge-gpt share pair 0 only, and agree there.
    assert body["cross_judge_agreement"] == {"judge-claude|judge-gpt": 1.0}
    # Human majorities: x on pairs 0 and 1... and the LLM majorities: x on 0, y on 1.
    assert body["human_llm_agreement"]["n"] == 2
    assert body["human_llm_agreement"]["rate"] == 0.5
    assert body["cross_family_agreement"] == {"claude|gpt": 1.0}
    assert body["human_llm_agreement_by_judge"] == {
        "judge-claude": {"rate": 0.5, "n": 2},
        "judge-gpt": {"rate": 1.0, "n": 1},
    }


def test_agreement_table_prints_every_statistic(built):
    text = _run("agreement", "--study", "cmd")
    for label in (
        "Fleiss' kappa",
        "Krippendorff's alpha",
        "Inter-human agreement",
        "Human-LLM agreement",
        "judge-claude|judge-gpt",
    ):
        assert label in text


def _json(*args: str) -> dict:
    return json.loads(_run("leaderboard", "--study", "cmd", "--format", "json", *args))


def test_every_system_carries_its_rank_interval(built):
    body = _json("--judges", "human", "--ci", "fisher")
    assert [(r["rank_low"], r["rank_high"]) for r in body["systems"]] == [(1, 2), (1, 2)]
    assert body["interval"]["method"] == "fisher"


def test_the_paper_preset_uses_raw_strengths_and_the_papers_interval(built):
    body = _json("--judges", "human", "--preset", "paper")
    assert body["preset"] == "paper"
    assert {k: body["params"][k] for k in ("ci", "weights", "ties", "combined")} == {
        "ci": "paper",
        "weights": "raw",
        "ties": "drop",
        "combined": "by_count",
    }
    x, y = body["systems"]
    # x's three wins weigh 2 each (raw strength), y's one win 1: theta gap ln 6.
    assert x["elo"] - y["elo"] == pytest.approx(400 * math.log10(6), abs=0.2)
    # SE = sqrt(1/n) on the log-strength scale, n = 4 comparisons each.
    half = 1.959964 * 400 / math.log(10) / math.sqrt(4)
    assert x["ci_high"] - x["elo"] == pytest.approx(half, abs=0.1)
    assert "paper" in body["preset_note"]
    # Not called a 95 % interval: the board states the coverage it measured instead.
    assert body["interval"]["level"] is None
    assert body["interval"]["nominal_level"] == 95
    assert 0 <= body["interval"]["coverage"]["rate"] < 0.92
    assert "preset=paper" in _run("leaderboard", "--study", "cmd", "--preset", "paper")


def test_the_paper_preset_leaves_ties_out(built):
    judge(built, 0, None, judge="tie-rater", strength=None)
    assert _json("--judges", "human", "--preset", "paper")["n_comparisons"] == 4
    assert _json("--judges", "human", "--ci", "none")["n_comparisons"] == 5


def test_an_anchor_fixes_a_system_at_1500(built):
    body = _json("--judges", "human", "--ci", "fisher", "--weights", "none", "--anchor", Y)
    rows = {r["system"]: r for r in body["systems"]}
    assert body["anchor"] == Y
    assert rows[Y]["elo"] == 1500.0
    assert rows[X]["elo"] == pytest.approx(1500 + 400 * math.log10(3), abs=0.2)
    with pytest.raises(CommandError, match="'nobody' is not a system of this study"):
        _run("leaderboard", "--study", "cmd", "--anchor", "nobody")


def test_the_study_anchor_setting_applies_unless_the_command_names_another(built):
    built.study.leaderboard_anchor = X
    built.study.save(update_fields=["leaderboard_anchor"])
    rows = {r["system"]: r["elo"] for r in _json("--judges", "human", "--ci", "none")["systems"]}
    assert rows[X] == 1500.0
    other = _json("--judges", "human", "--ci", "none", "--anchor", Y)
    assert {r["system"]: r["elo"] for r in other["systems"]}[Y] == 1500.0


def test_from_snapshot_prints_the_stored_board_and_says_when_it_is_out_of_date(built):
    with pytest.raises(CommandError, match="no stored snapshot"):
        _run("leaderboard", "--study", "cmd", "--from-snapshot")
    stored = _json("--judges", "human", "--ci", "fisher", "--snapshot")
    read = _json("--judges", "human", "--from-snapshot", "--format", "json")
    assert read["snapshot_id"] == stored["snapshot_id"]
    assert read["systems"] == stored["systems"]
    err = io.StringIO()
    judge(built, 1, Y, judge="late-rater", strength=1)
    call_command(
        "leaderboard",
        "--study",
        "cmd",
        "--judges",
        "human",
        "--from-snapshot",
        stdout=io.StringIO(),
        stderr=err,
    )
    assert "changed since this snapshot" in err.getvalue()
    with pytest.raises(CommandError, match="--ci changes the fit"):
        _run("leaderboard", "--study", "cmd", "--from-snapshot", "--ci", "fisher")

"""Boards by context category: one board per value, flagged when a cell is too small."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from completions.models import DialogueContext
from ranking import categories, services
from studio.demo import load_demo

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_data():
    return load_demo()


def test_every_emotion_type_gets_its_own_board_and_they_add_up(demo_data):
    study = demo_data
    data = services.study_data_load(study)
    section = services.by_compute(
        data,
        study=study,
        key="emotion_type",
        judges="all",
        subset="all",
        params=services.params_resolve("default"),
    )
    emotions = set(
        DialogueContext.objects.filter(study=study).values_list("emotion_type", flat=True)
    )
    assert set(section["by"]) == {e or categories.NO_CATEGORY for e in emotions}
    assert sum(cell["n_comparisons"] for cell in section["by"].values()) == len(data.judgments)
    counts = [cell["n_comparisons"] for cell in section["by"].values()]
    assert counts == sorted(counts, reverse=True)
    cell = next(iter(section["by"].values()))
    assert cell["systems"] and {"elo", "ci_low", "ci_high", "win_rate", "n"} <= set(
        cell["systems"][0]
    )
    assert "human_llm_agreement" in cell["agreement"]
    assert cell["strategies"] is not None


def test_a_category_whose_least_compared_system_is_below_the_threshold_is_flagged(demo_data):
    study = demo_data
    data = services.study_data_load(study)
    section = services.by_compute(
        data,
        study=study,
        key="problem_type",
        judges="all",
        subset="all",
        params=services.params_resolve("default"),
    )
    for value, cell in section["by"].items():
        assert cell["too_few"] == (cell["smallest_system_n"] < categories.MIN_PER_SYSTEM)
        assert any(w.startswith(f"{value}:") for w in section["by_warnings"]) == cell["too_few"]
    assert "680" in section["by_threshold"]["note"]


def test_a_metadata_key_splits_the_board_and_missing_values_read_none(demo_data):
    study = demo_data
    first = DialogueContext.objects.filter(study=study).order_by("id").first()
    first.metadata = dict(first.metadata or {}, site="north")
    first.save(update_fields=["metadata"])
    assert "site" in services.category_key_check(study, "site")
    data = services.study_data_load(study)
    section = services.by_compute(
        data,
        study=study,
        key="site",
        judges="all",
        subset="all",
        params=services.params_resolve("default"),
    )
    assert set(section["by"]) == {"north", categories.NO_CATEGORY}


def test_the_command_splits_by_a_key_and_refuses_an_unknown_one(demo_data, capsys):
    call_command("leaderboard", study=demo_data.slug, by="emotion_type", ci="fisher", format="json")
    result = json.loads(capsys.readouterr().out)
    assert result["by_key"] == "emotion_type" and result["by"]
    call_command("leaderboard", study=demo_data.slug, by="emotion_type", ci="fisher")
    assert "By emotion_type:" in capsys.readouterr().out
    with pytest.raises(CommandError, match="cannot be split by 'colour'"):
        call_command("leaderboard", study=demo_data.slug, by="colour", ci="fisher")


def test_the_split_menu_offers_only_the_fields_the_studys_contexts_have():
    from ranking import selectors
    from tests.factories import DialogueContextFactory, StudyFactory

    study = StudyFactory()
    DialogueContextFactory(study=study, emotion_type="", problem_type="", metadata={"topic": "x"})
    DialogueContextFactory(study=study, emotion_type="anxiety", problem_type="", metadata={})
    assert selectors.context_category_keys(study) == ["emotion_type", "topic"]
    with pytest.raises(ValueError, match="cannot be split by 'problem_type'"):
        services.category_key_check(study, "problem_type")

"""ranking.selectors: what the leaderboard pages read besides the stored snapshot."""

from __future__ import annotations

import pytest

from ranking.selectors import default_judges, judge_counts
from tests.factories import JudgmentFactory, PairFactory, RaterFactory

pytestmark = pytest.mark.django_db


def test_judges_are_counted_per_kind_up_to_what_the_pages_ask():
    pair = PairFactory()
    JudgmentFactory.create_batch(55, pair=pair)
    for i in range(3):
        JudgmentFactory(pair=pair, judge_kind="llm", judge=f"gpt-{i}", strength_max=5)
    assert judge_counts(pair.study) == {"human": 50, "llm": 3}  # the combined board's minimum
    assert judge_counts(pair.study, up_to=1000) == {"human": 55, "llm": 3}
    assert default_judges(pair.study) == "human"


def test_excluded_raters_and_quality_checks_are_not_counted():
    pair = PairFactory()
    rater = RaterFactory(study=pair.study, exclusion_override=True)
    JudgmentFactory(pair=pair, rater=rater, judge=rater.pseudonym)
    JudgmentFactory(pair=pair, judge_kind="llm", judge="gpt", strength_max=5)
    assert judge_counts(pair.study) == {"human": 0, "llm": 1}
    assert default_judges(pair.study) == "llm"

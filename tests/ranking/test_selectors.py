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


def test_the_judgments_frame_read_by_copy_equals_the_orm_rows(postgres):
    # Every kind of value a column holds: NULL strengths (ties), empty and set families, empty
    # and set sides, axes given or not, names that read as numbers, quotes and commas in names,
    # adversarial contexts or not.
    import pandas as pd
    from django.db.models.fields.json import KT

    from annotation.models import AXES
    from ranking import selectors
    from tests.factories.ranking import X, Y, build_study, judge

    built = build_study()
    judge(built, 0, X, judge="007", kind="llm", family="gpt", strength=4, strength_max=5)
    judge(built, 1, None, judge='said "no", then yes', axes={"H": {"winner": "a"}})
    judge(built, 2, Y, judge="rater, one", axes={"H": {"winner": "tie"}, "E": {"winner": "b"}})
    judge(built, 3, X, judge="", family="", strength=None, strength_max=None)
    JudgmentFactory(study=built.study, pair=built.pairs[3], judge="blank side", shown_left="")

    axes = {c: KT(f"axes__{a}__winner") for a, c in zip(AXES, selectors.AXIS_COLUMNS, strict=True)}
    rows = (
        selectors.judgments_queryset(built.study)
        .annotate(**axes)
        .order_by("id")
        .values_list(*selectors.JUDGMENT_COLUMNS.values(), *selectors.AXIS_COLUMNS)
    )
    types = selectors.JUDGMENT_TYPES | dict.fromkeys(selectors.AXIS_COLUMNS, "text")
    by_copy = selectors.values_frame(rows, types)
    by_orm = pd.DataFrame.from_records(list(rows), columns=list(types))
    assert len(by_copy) == 5
    tidy = selectors.judgments_tidy(by_orm)
    pd.testing.assert_frame_equal(selectors.judgments_tidy(by_copy), tidy)
    # The names read as categories (as judgments_frame reads them) tidy to the same frame.
    as_categories = types | dict.fromkeys(selectors.CATEGORICAL, "category")
    pd.testing.assert_frame_equal(
        selectors.judgments_tidy(selectors.values_frame(rows, as_categories)), tidy
    )
    pd.testing.assert_frame_equal(selectors.judgments_frame(built.study), tidy)
    assert selectors.values_frame(rows.none(), types).columns.tolist() == list(types)


def test_a_kind_that_reached_the_minimum_is_not_counted_again_until_a_rater_leaves():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    pair = PairFactory()
    rater = RaterFactory(study=pair.study)
    for other in [pair, *(PairFactory(study=pair.study) for _ in range(2))]:
        JudgmentFactory(pair=other, rater=rater, judge=rater.pseudonym)
    JudgmentFactory(pair=pair, judge_kind="llm", judge="gpt", strength_max=5)

    def counted(**options):
        with CaptureQueriesContext(connection) as queries:
            counts = judge_counts(pair.study, up_to=2, **options)
        return counts, sum("COUNT(*) FROM (SELECT" in q["sql"] for q in queries)

    assert counted() == ({"human": 2, "llm": 1}, 2)
    JudgmentFactory(pair=pair, judge_kind="llm", judge="claude", strength_max=5)
    assert counted() == ({"human": 2, "llm": 2}, 1)  # only the kind below the minimum
    assert counted() == ({"human": 2, "llm": 2}, 0)
    rater.exclusion_override = True
    rater.save()
    assert counted() == ({"human": 0, "llm": 2}, 2)  # an exclusion counts everything again

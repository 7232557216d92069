"""A stored study whose raters come from two cohorts (the judgments of tests/ranking/
test_cohorts.synthetic), plus noise that must not count: a flagged clinician and an LLM judge."""

from __future__ import annotations

from django.utils import timezone

from annotation.models import Judgment, Pair
from completions.models import Completion, Study
from tests.factories import (
    CompletionFactory,
    DialogueContextFactory,
    PairFactory,
    RaterFactory,
    StudyFactory,
    SystemFactory,
)
from tests.ranking.test_cohorts import SYSTEMS, synthetic


def build_cohort_study(*, slug: str = "cohorts", items: int = 60) -> Study:
    study = StudyFactory(slug=slug)
    systems = {name: SystemFactory(study=study, name=name) for name in SYSTEMS}
    frame = synthetic(items=items)
    pairs: dict[int, Pair] = {}
    completions: dict[tuple[int, str], Completion] = {}
    contexts = {}
    for item, sa, sb in (
        frame[["item", "system_a", "system_b"]].drop_duplicates("item").itertuples(index=False)
    ):
        ctx = item // 2
        contexts.setdefault(ctx, DialogueContextFactory(study=study))
        for name in SYSTEMS:  # in SYSTEMS order: system_a always gets the smaller id
            if (ctx, name) not in completions:
                completions[ctx, name] = CompletionFactory(
                    context=contexts[ctx], system=systems[name], text=f"{name} on {ctx}"
                )
        pairs[item] = PairFactory(
            study=study,
            context=contexts[ctx],
            completion_a=completions[ctx, sa],
            completion_b=completions[ctx, sb],
        )
    raters = {}
    human = frame[frame["judge_kind"] == "human"]
    for judge, cohort in human[["judge", "cohort"]].drop_duplicates().itertuples(index=False):
        raters[judge] = RaterFactory(study=study, cohort=cohort, pseudonym=f"r-{judge}")
    now = timezone.now()
    rows = [
        Judgment(
            study=study,
            pair=pairs[r.item],
            judge_kind="human",
            rater=raters[r.judge],
            judge=raters[r.judge].pseudonym,
            winner=r.winner,
            strength=None if r.winner == "tie" else int(r.strength),
            strength_max=2,
            shown_left="a",
            submitted_at=now,
        )
        for r in human.itertuples(index=False)
    ]
    # Must not count: a flagged clinician who always picks b, and an LLM judge (no cohort).
    flagged = RaterFactory(study=study, cohort="clinician", flagged=True, pseudonym="r-flagged")
    for pair in pairs.values():
        rows.append(
            Judgment(study=study, pair=pair, judge_kind="human", rater=flagged,
                     judge=flagged.pseudonym, winner="b", strength=2, strength_max=2,
                     shown_left="a", submitted_at=now)
        )  # fmt: skip
        rows.append(
            Judgment(study=study, pair=pair, judge_kind="llm", judge="judge-gpt",
                     winner="a", strength=5, strength_max=5, shown_left="a", submitted_at=now)
        )  # fmt: skip
    Judgment.objects.bulk_create(rows)
    return study

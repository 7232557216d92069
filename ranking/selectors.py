"""Reads for the ranking app: judgments and systems as DataFrames, snapshots for the pages.

Each loader is one query (`values()` over joins), so its cost does not grow with the number of
pairs, systems or raters beyond the rows themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import (
    BooleanField,
    Count,
    F,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.expressions import Combinable
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce

from annotation.models import AXES, Judgment, Pair, Rater
from completions.models import Completion, DialogueContext, Study, System
from labelling.models import CompletionLabels
from labelling.selectors import label_state

from .limits import MIN_SOURCE_JUDGMENTS
from .models import BoardEvent, BoardEventKind, LeaderboardSnapshot, RefitJob

if TYPE_CHECKING:  # pandas loads with the frames (the fits, in workers), not with the pages
    import pandas as pd

JUDGMENT_COLUMNS = {
    "id": "id",
    "item": "pair_id",
    "context": "pair__context_id",
    "adversarial": "pair__context__adversarial",
    "system_a": "pair__completion_a__system__name",
    "system_b": "pair__completion_b__system__name",
    "kind_a": "pair__completion_a__system__kind",
    "kind_b": "pair__completion_b__system__kind",
    "winner": "winner",
    "strength": "strength",
    "strength_max": "strength_max",
    "judge": "judge",
    "judge_kind": "judge_kind",
    "judge_family": "judge_family",
    "shown_left": "shown_left",
}
AXIS_COLUMNS = [f"axis_{axis}" for axis in AXES]
JUDGMENT_TYPES = dict.fromkeys(JUDGMENT_COLUMNS, "text") | {
    "id": "int",
    "item": "int",
    "context": "int",
    "adversarial": "bool",
    "strength": "int",
    "strength_max": "int",
}


def _excluded_expression() -> Coalesce:
    # Rater.excluded in SQL: the admin's override wins over the computed flag; LLM and
    # imported judgments have no rater and are never excluded.
    return Coalesce(
        "rater__exclusion_override", "rater__flagged", Value(False), output_field=BooleanField()
    )


def judgments_queryset(
    study: Study, *, judges: str = "all", subset: str = "all"
) -> QuerySet[Judgment]:
    """Judgments that count: real pairs (no quality checks) by judges who are not excluded."""
    qs = (
        Judgment.objects.filter(study=study, pair__isnull=False, quality_check=False)
        .alias(excluded=_excluded_expression())
        .filter(excluded=False)
    )
    if judges != "all":
        qs = qs.filter(judge_kind=judges)
    if subset != "all":
        qs = qs.filter(pair__context__adversarial=(subset == "adversarial"))
    return qs


def values_frame(rows: QuerySet[Any], columns: dict[str, str]) -> pd.DataFrame:
    """A `values_list` queryset as a DataFrame; ``columns`` names its values in order, each with
    its type: "text", "int", "bool" or "category" (text with few distinct values: read as a
    pandas category on PostgreSQL, with its categories sorted; as text elsewhere).

    On PostgreSQL the rows come as one `COPY (query) TO STDOUT` in CSV, parsed by pyarrow's C
    reader: millions of judgments load in a fraction of the time a Python tuple per row takes
    (docs/benchmarks.md, the large study). A NULL stays missing and an empty text stays empty
    (PostgreSQL writes NULL unquoted and an empty text as ``""``); booleans come back as booleans,
    integers as integers (as floats where some are missing, as pandas makes them from tuples).
    Elsewhere, the tuples.
    """
    import pandas as pd

    if connection.vendor != "postgresql":
        return pd.DataFrame.from_records(list(rows), columns=list(columns))
    import io
    import time

    import pyarrow as pa
    from pyarrow import csv

    types = {
        "text": pa.string(),
        "category": pa.dictionary(pa.int32(), pa.string()),
        "int": pa.int64(),
        "bool": pa.bool_(),
    }

    try:
        sql, params = rows.query.sql_with_params()
    except EmptyResultSet:  # a filter that matches nothing (`none()`, `__in=[]`)
        return pd.DataFrame.from_records([], columns=list(columns))
    statement = f"COPY ({sql}) TO STDOUT (FORMAT csv)"
    buffer = io.BytesIO()
    start = time.monotonic()
    with connection.cursor() as cursor, cursor.cursor.copy(statement, params) as copy:
        for block in copy:
            buffer.write(block)
    if connection.queries_logged:  # counted and shown as Django's cursor shows a query
        took = time.monotonic() - start
        connection.queries_log.append({"sql": statement, "time": f"{took:.3f}"})
    if not buffer.getbuffer().nbytes:
        return pd.DataFrame.from_records([], columns=list(columns))
    buffer.seek(0)
    table = csv.read_csv(
        buffer,
        read_options=csv.ReadOptions(column_names=list(columns)),
        convert_options=csv.ConvertOptions(
            column_types={name: types[kind] for name, kind in columns.items()},
            null_values=[""],
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
            true_values=["t"],
            false_values=["f"],
        ),
    )
    frame: pd.DataFrame = table.to_pandas()
    for name, kind in columns.items():
        if kind == "category":  # categories in sorted order, as `astype("category")` makes them
            frame[name] = frame[name].cat.reorder_categories(sorted(frame[name].cat.categories))
    return frame


def judgments_frame(
    study: Study, *, judges: str = "all", subset: str = "all", everyone: bool = False
) -> pd.DataFrame:
    """One row per counted judgment, canonical orientation, axes spread into axis_H..axis_T,
    in the order stored (``id``).

    With ``everyone``, excluded raters' judgments too, marked by an ``excluded`` column, and
    each judgment's rater ``cohort`` (missing without a rater): a refit reads the study once for
    its boards, its raters' quality (which measures excluded raters too) and its cohorts.

    The judgments table is read alone, its pairs once, and the small tables (completions,
    systems, contexts, raters) joined here on integer positions: the database's join of
    3,000,000 judgments with their pairs, completions and systems took 10-15 s and sent every
    system's name 6,000,000 times (docs/benchmarks.md, the large study)."""
    import numpy as np
    import pandas as pd

    # The axis winners come out of the JSON as text in SQL: no per-row JSON decoding.
    axes = {
        column: KT(f"axes__{axis}__winner") for axis, column in zip(AXES, AXIS_COLUMNS, strict=True)
    }
    queryset = Judgment.objects.filter(study=study, pair__isnull=False, quality_check=False)
    if judges != "all":
        queryset = queryset.filter(judge_kind=judges)
    if subset != "all":
        queryset = queryset.filter(pair__context__adversarial=(subset == "adversarial"))
    own_columns = {
        "id": "int",
        "item": "int",
        "rater": "int",
        "winner": "category",
        "strength": "int",
        "strength_max": "int",
        "judge": "category",
        "judge_kind": "category",
        "judge_family": "category",
        "shown_left": "category",
    } | dict.fromkeys(AXIS_COLUMNS, "category")
    rows = (
        queryset.annotate(**axes)
        .order_by()  # no sort in the database: the frame is put in id order here
        .values_list("id", "pair_id", "rater_id", *OWN_FIELDS, *AXIS_COLUMNS)
    )
    own = values_frame(rows, own_columns)
    own = own.sort_values("id", kind="stable", ignore_index=True)

    pairs, at = _pairs_of(study, own["item"].to_numpy(dtype=np.int64))
    context = pairs["context"].to_numpy(dtype=np.int64)[at]

    completion_rows = list(
        Completion.objects.filter(system__study=study).values_list("id", "system_id")
    )
    system_rows = list(System.objects.filter(study=study).values_list("id", "name", "kind"))
    system_ids = pd.Index([pk for pk, _, _ in system_rows])
    completion_ids = pd.Index([pk for pk, _ in completion_rows])
    system_of = system_ids.get_indexer(pd.Index([system for _, system in completion_rows]))
    names = np.array([name for _, name, _ in system_rows], dtype=object)
    kinds = np.array([kind for _, _, kind in system_rows], dtype=object)

    def side(column: str) -> np.ndarray:
        found = completion_ids.get_indexer(pd.Index(pairs[column].to_numpy(dtype=np.int64)[at]))
        position: np.ndarray = np.append(system_of, -1)[found]  # not found: -1
        return position

    contexts = dict(DialogueContext.objects.filter(study=study).values_list("id", "adversarial"))
    adversarial = pd.Series(context).map(contexts).to_numpy(dtype=bool)
    system_a, system_b = side("completion_a"), side("completion_b")
    frame = pd.DataFrame(
        {
            "id": own["id"],
            "item": own["item"],
            "context": context,
            "adversarial": adversarial,
            "system_a": _labels(system_a, names),
            "system_b": _labels(system_b, names),
            "kind_a": _labels(system_a, kinds),
            "kind_b": _labels(system_b, kinds),
        }
    )
    for column in own_columns:
        if column not in frame.columns and column != "rater":
            frame[column] = own[column]
    excluded, cohort = _rater_columns(study, own["rater"])
    keep = np.ones(len(frame), dtype=bool)
    if everyone:
        frame["excluded"] = excluded
        frame["cohort"] = cohort
    else:
        keep &= ~excluded
    if not keep.all():
        frame = frame[keep].reset_index(drop=True)
    return judgments_tidy(frame)


def _pairs_of(study: Study, items: Any) -> tuple[pd.DataFrame, Any]:
    """The study's pairs (item, context, completion_a, completion_b) by one `COPY`, and the
    position of each of ``items`` among them (a judged pair of another study, which nothing
    stores, is read on its own)."""
    import numpy as np
    import pandas as pd

    columns = {"item": "int", "context": "int", "completion_a": "int", "completion_b": "int"}
    fields = ("id", "context_id", "completion_a_id", "completion_b_id")
    pairs = values_frame(Pair.objects.filter(study=study).values_list(*fields), columns)
    at = pd.Index(pairs["item"].to_numpy(dtype=np.int64)).get_indexer(pd.Index(items))
    if (at < 0).any():
        stray = np.unique(items[at < 0]).tolist()
        others = values_frame(Pair.objects.filter(id__in=stray).values_list(*fields), columns)
        pairs = pd.concat([pairs, others], ignore_index=True)
        at = pd.Index(pairs["item"].to_numpy(dtype=np.int64)).get_indexer(pd.Index(items))
    return pairs, at


def _labels(position: Any, values: Any) -> Any:
    """``values[position]`` as a pandas categorical of the values that occur, sorted (as a
    `COPY` read as a category gives them), built from codes: no string per row. A position of
    -1, or a value None, is missing."""
    import numpy as np
    import pandas as pd

    names = [None if value is None else str(value) for value in values]
    categories = sorted({name for name in names if name is not None})
    lookup = {name: code for code, name in enumerate(categories)}
    code_of = np.array([-1 if n is None else lookup[n] for n in names] + [-1], dtype=np.int64)
    labels = pd.Categorical.from_codes(code_of[position], categories=pd.Index(categories))
    return labels.remove_unused_categories()


def _rater_columns(study: Study, raters: pd.Series) -> tuple[Any, Any]:
    """Per judgment, whether its rater is excluded (the admin's override, else the flag; no
    rater: never) and the rater's cohort (missing without a rater)."""
    import numpy as np
    import pandas as pd

    rows = list(
        Rater.objects.filter(study=study).values_list(
            "id", "exclusion_override", "flagged", "cohort"
        )
    )
    ids = pd.Index([pk for pk, _, _, _ in rows], dtype="int64")
    excluded_of = np.array(
        [bool(flagged if override is None else override) for _, override, flagged, _ in rows]
        + [False]
    )
    cohorts = [cohort for _, _, _, cohort in rows]
    known = raters.notna().to_numpy()
    position = np.full(len(raters), -1, dtype=np.int64)
    position[known] = ids.get_indexer(pd.Index(raters.to_numpy()[known].astype(np.int64)))
    excluded = excluded_of[position]  # -1 (no rater, or one of another study) picks False
    return excluded, _labels(position, cohorts)


def judgments_tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """The judgments' rows as the fits read them: verdicts and names as categories, an empty
    side or family as missing, an axis winner other than a, b or tie as missing."""
    import pandas as pd

    for column in AXIS_COLUMNS:
        frame[column] = frame[column].where(frame[column].isin(["a", "b", "tie"]), None)
    frame["shown_left"] = frame["shown_left"].replace("", None)
    family = frame["judge_family"]
    if isinstance(family.dtype, pd.CategoricalDtype):  # read as a category: drop "" from it
        frame["judge_family"] = family.cat.remove_categories(
            [""] if "" in family.cat.categories else []
        )
    else:
        frame["judge_family"] = family.replace("", None)
    # Few distinct values in many rows: categories make every later selection, grouping and
    # fit work on integer codes (a million judgments are then as cheap as their codes).
    # Verdict columns share one dtype, so they compare with each other (winner == shown_left).
    for column in CATEGORICAL:
        frame[column] = frame[column].astype("category")
    for column in ["winner", "shown_left", *AXIS_COLUMNS]:
        frame[column] = frame[column].astype(pd.CategoricalDtype(VERDICTS))
    return frame


#: The judgment's own fields judgments_frame reads besides its id, pair and rater.
OWN_FIELDS = [
    "winner",
    "strength",
    "strength_max",
    "judge",
    "judge_kind",
    "judge_family",
    "shown_left",
]
#: The columns of judgments_frame held as categories.
CATEGORICAL = ["system_a", "system_b", "kind_a", "kind_b", "judge", "judge_kind", "judge_family"]
VERDICTS = ["a", "b", "tie"]


def judge_counts(
    study: Study, *, up_to: int = MIN_SOURCE_JUDGMENTS, state: dict[str, Any] | None = None
) -> dict[str, int]:
    """Counted judgments per judge kind ({"human": n, "llm": n}), each counted up to `up_to`:
    what the pages ask (has a kind judged; has it the minimum a combined board needs) is
    answered by the first rows, so a page read costs the same with 3,000,000 judgments.

    A kind that has reached `up_to` keeps that count (in the cache) until a rater is excluded
    or withdraws (`state`, judgments_state: otherwise judgments are only ever added). Finding
    the first rows of a kind can still read far: PostgreSQL plans the search as if the kinds
    were spread evenly, and one LLM run's 1,500,000 verdicts stored after 1,500,000 human ones
    took 0.5-0.8 s to reach."""
    from django.core.cache import cache

    state = state if state is not None else judgments_state(study)
    basis = [state["excluded"], state["withdrawn"]]
    # The creation time too: a test database may give a new study the key of a deleted one.
    key = f"judge-counts:{study.pk}:{study.created_at.timestamp()}:{up_to}"
    cached = cache.get(key)
    known = cached["counts"] if cached and cached["basis"] == basis else {}
    counts = {
        kind: known[kind]
        if known.get(kind, 0) >= up_to
        else judgments_queryset(study, judges=kind)[:up_to].count()
        for kind in ("human", "llm")
    }
    if counts != known:
        cache.set(key, {"basis": basis, "counts": counts}, timeout=None)
    return counts


def default_judges(study: Study, counts: dict[str, int] | None = None) -> str:
    """The board a study's design makes primary: the human judges' when humans judged (a
    counted human verdict exists), else the LLM judges' when they judged, else the humans'."""
    counts = counts if counts is not None else judge_counts(study)
    if counts["human"]:
        return "human"
    return "llm" if counts["llm"] else "human"


def context_clusters(study: Study) -> dict[int, str]:
    """Context id -> the source conversation it was cut from (the bootstrap's cluster).

    Contexts cut from one dialogue share its ``source:source_id``; an adversarial variant
    belongs to its source context's conversation; a context with no known origin is its own.
    """
    rows = list(
        DialogueContext.objects.filter(study=study).values_list(
            "id", "source", "source_id", "adversarial_source_id"
        )
    )
    own = {
        pk: f"{source}:{source_id}" if source_id else f"context:{pk}"
        for pk, source, source_id, _ in rows
    }
    return {
        pk: own.get(parent, own[pk]) if parent and not source_id else own[pk]
        for pk, _, source_id, parent in rows
    }


def pair_texts_frame(study: Study) -> pd.DataFrame:
    """Per pair (index ``item``): the texts of its two completions (None when unknown), for the
    style features. Two queries; each completion's text is read once."""
    import pandas as pd

    texts = dict(
        Completion.objects.filter(system__study=study, text_unknown=False).values_list("id", "text")
    )
    rows = list(
        Pair.objects.filter(study=study).values_list("id", "completion_a_id", "completion_b_id")
    )
    frame = pd.DataFrame.from_records(rows, columns=["item", "completion_a", "completion_b"])
    frame["text_a"] = frame["completion_a"].map(texts)
    frame["text_b"] = frame["completion_b"].map(texts)
    return frame.set_index("item")[["text_a", "text_b"]]


def completion_words(study: Study) -> pd.DataFrame:
    """Per completion with a known text: its ``context``, ``system`` name and length in
    ``words`` (one row per context and system)."""
    import pandas as pd

    rows = Completion.objects.filter(system__study=study, text_unknown=False).values_list(
        "context_id", "system__name", "text"
    )
    return pd.DataFrame.from_records(
        [(context, system, len(text.split())) for context, system, text in rows.iterator(2000)],
        columns=["context", "system", "words"],
    )


def context_categories(study: Study, key: str) -> dict[int, str]:
    """Context id -> its value of ``key``: ``emotion_type``, ``problem_type`` or a key of the
    context's metadata (a missing or empty value reads "(none)")."""
    if key in CONTEXT_CATEGORY_FIELDS:
        rows = DialogueContext.objects.filter(study=study).values_list("id", key)
    else:
        rows = (
            DialogueContext.objects.filter(study=study)
            .annotate(value=KT(f"metadata__{key}"))
            .values_list("id", "value")
        )
    return {pk: (str(value) if value not in (None, "") else NO_CATEGORY) for pk, value in rows}


def context_category_keys(study: Study) -> list[str]:
    """What a board can be split by: the two ESConv fields, then the metadata keys the study's
    contexts carry (read from a sample of contexts, so the list is cheap on any study)."""
    keys: set[str] = set()
    contexts = DialogueContext.objects.filter(study=study)
    for metadata in contexts.values_list("metadata", flat=True)[:500]:
        if isinstance(metadata, dict):
            keys.update(
                k for k, v in metadata.items() if isinstance(v, str | int | bool) and v != ""
            )
    # An ESConv field is offered only when some context has a value for it (one query).
    present = contexts.aggregate(
        **{f: Count("id", filter=~Q(**{f: ""})) for f in CONTEXT_CATEGORY_FIELDS}
    )
    fields = [f for f in CONTEXT_CATEGORY_FIELDS if present[f]]
    return [*fields, *sorted(keys - set(CONTEXT_CATEGORY_FIELDS))]


CONTEXT_CATEGORY_FIELDS = ["emotion_type", "problem_type"]
NO_CATEGORY = "(none)"


def systems_frame(study: Study) -> pd.DataFrame:
    """Systems with kind, family, TTFT (the system's, else its completions' median), score."""
    import pandas as pd

    rows = (
        System.objects.filter(study=study)
        .order_by("name")
        .values_list("name", "kind", "family", "ttft_ms", "external_score")
    )
    frame = pd.DataFrame.from_records(
        list(rows), columns=["system", "kind", "family", "ttft_ms", "external_score"]
    ).set_index("system")
    return frame


def completions_frame(study: Study, *, label_set: int | None = None) -> pd.DataFrame:
    """One row per completion: system, family, kind, TTFT and strategy labels.

    The labels come from the label set ``label_set`` (strategies marked present; None for a
    completion it did not label), else from the completion's own metadata (ESConv's
    annotation or imported labels). Still one query.
    """
    import pandas as pd

    strategies: Combinable
    if label_set is None:
        strategies = F("metadata__strategies")
    else:
        strategies = Subquery(
            CompletionLabels.objects.filter(
                label_set_id=label_set, completion_id=OuterRef("pk")
            ).values("present")[:1]
        )
    rows = (
        Completion.objects.filter(system__study=study)
        .annotate(labels_present=strategies)
        .order_by("id")
        .values_list(
            "id",
            "system__name",
            "system__family",
            "system__kind",
            "ttft_ms",
            "labels_present",
            "context_id",
        )
    )
    columns = ["completion", "system", "family", "kind", "ttft_ms", "strategies", "context"]
    return pd.DataFrame.from_records(list(rows), columns=columns)


def judgments_state(study: Study) -> dict[str, Any]:
    """Cheap fingerprint of a study's inputs (pages compare it with their snapshot's): the
    last judgment id, the number and id-sum of excluded raters (so a flag or an override
    changes it), the number of raters who withdrew (their judgments were deleted), the
    strategy label set the analyses use and the analysis settings.

    Judgments are only ever added (imports and submissions create rows, nothing updates
    them; a withdrawal's deletions count in "withdrawn"), so the last id says when there are
    new ones without counting a million rows. A judgment deleted by hand in the Django admin
    is caught by the next refit (nightly, or *Refit now*), whose fingerprint covers every id."""
    state = Judgment.objects.filter(study=study).aggregate(last=Max("id"))
    is_excluded = Q(is_excluded=True)
    withdrawn = Q(withdrawn_at__isnull=False)  # their judgments were deleted: no new last id
    raters = (
        Rater.objects.filter(study=study)
        .alias(is_excluded=Coalesce("exclusion_override", "flagged", output_field=BooleanField()))
        .filter(is_excluded | withdrawn)
        .aggregate(
            n=Count("id", filter=is_excluded),
            ids=Sum("id", filter=is_excluded),
            withdrawn=Count("id", filter=withdrawn),
        )
    )
    return {
        "last": state["last"],
        "excluded": [raters["n"], int(raters["ids"] or 0)],
        "withdrawn": raters["withdrawn"],
        "labels": label_state(study),
        # The study's analysis settings change what is counted and how: inputs too.
        "llm_games": study.llm_games,
        "analysis": analysis_settings(study),
    }


_ON_OFF = (BoardEventKind.SYSTEM_REMOVED, BoardEventKind.SYSTEM_RESTORED)


def off_board(study: Study) -> list[str]:
    """Names of the systems currently taken off the board (their latest on/off event)."""
    latest: dict[str, str] = {}
    for system, kind in (
        BoardEvent.objects.filter(study=study, kind__in=_ON_OFF)
        .order_by("at", "id")
        .values_list("system", "kind")
    ):
        latest[system] = kind
    return sorted(name for name, kind in latest.items() if kind == BoardEventKind.SYSTEM_REMOVED)


def analysis_settings(study: Study) -> dict[str, Any]:
    return {
        "human_majority_min": study.human_majority_min,
        "human_weight_share": study.human_weight_share,
        "anchor": study.leaderboard_anchor or None,
        "family_aliases": dict(sorted((study.family_aliases or {}).items())),
        "style_features": list(study.style_features or []),
        "rater_weights": study.rater_weights,
        # A system taken off the board changes what is counted (ranking.record).
        "off_board": off_board(study),
    }


def snapshot_latest(
    study: Study, *, judges: str, subset: str, preset: str = "default"
) -> LeaderboardSnapshot | None:
    return (
        LeaderboardSnapshot.objects.filter(study=study, judges=judges, subset=subset, preset=preset)
        .defer("sections")  # read only by the pages that show them (snapshot_sections)
        .order_by("-created_at", "-id")
        .first()
    )


def snapshot_sections(snapshot_id: int) -> dict[str, Any]:
    """A snapshot's boards by context field and by cohort ({} when it has none)."""
    rows = LeaderboardSnapshot.objects.filter(pk=snapshot_id).values_list("sections", flat=True)
    return dict(rows.first() or {})


def snapshot_history(study: Study, *, limit: int = 100) -> QuerySet[LeaderboardSnapshot]:
    return LeaderboardSnapshot.objects.filter(study=study).order_by("-created_at", "-id")[:limit]


def refit_jobs_recent(study: Study, *, limit: int = 5) -> QuerySet[RefitJob]:
    """The latest requested refits, so a queued, running or failed one shows with its reason."""
    return RefitJob.objects.filter(study=study).order_by("-created_at", "-id")[:limit]


def studies_active() -> QuerySet[Study]:
    return Study.objects.exclude(status="closed").order_by("id")

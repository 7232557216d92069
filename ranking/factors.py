"""Factor structure of the HEART axes (paper 9.11). Pure pandas/numpy/statsmodels.

Axis-level marks become per-response scores: each verdict on an axis gives the response
(one system's completion on one context) +1 for a win, 0 for a tie and -1 for a loss; a
response's axis score is the mean over the verdicts that marked that axis. Scores are
z-scored per axis over the responses with a score on every axis, then:

* eigenvalues of the axes' correlation matrix (one dominant eigenvalue = one latent
  "conversational EQ"; several above 1 = separable sub-skills);
* loadings of a one-factor principal-axis factor analysis (statsmodels);
* Cronbach's alpha of the five z-scored axes;
* Pearson correlation of the mean axis z-score with the response's overall score (its
  mean +1/0/-1 on the primary verdict).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.multivariate.factor import Factor

AXES = ["H", "E", "A", "R", "T"]
MIN_RESPONSES = 10
SCORES = {"a": 1.0, "tie": 0.0, "b": -1.0}


def response_scores(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per response (context, system): mean +1/0/-1 per axis and for the overall verdict."""
    columns = ["winner"] + [f"axis_{axis}" for axis in AXES if f"axis_{axis}" in judgments]
    values = {c: _scores(judgments[c]) for c in columns}
    sums: list[pd.DataFrame] = []
    counts: list[pd.DataFrame] = []
    for side, sign in (("a", 1.0), ("b", -1.0)):
        # Each side grouped on its own (a categorical system column stays integer codes).
        part = pd.DataFrame({c: sign * v for c, v in values.items()}, index=judgments.index)
        keys = [judgments["context"], judgments[f"system_{side}"]]
        grouped = part.groupby(keys, observed=True)
        for out, result in ((sums, grouped.sum(min_count=1)), (counts, grouped.count())):
            result.index = result.index.set_names(["context", "system"])
            out.append(result.set_axis(result.index.map(lambda key: (key[0], str(key[1])))))
    total = sums[0].add(sums[1], fill_value=0.0)
    n = counts[0].add(counts[1], fill_value=0.0)
    scores = total / n.where(n > 0)
    scores.index = pd.MultiIndex.from_tuples(scores.index, names=["context", "system"])
    named: pd.DataFrame = scores.rename(columns=lambda c: c.removeprefix("axis_"))
    return named.rename(columns={"winner": "overall"})


def _scores(column: pd.Series) -> np.ndarray:
    if isinstance(column.dtype, pd.CategoricalDtype):  # by its codes: no string per row
        by_code = np.array([SCORES.get(str(c), np.nan) for c in column.cat.categories] + [np.nan])
        scores: np.ndarray = by_code[column.cat.codes.to_numpy()]  # code -1 (missing): NaN
        return scores
    verdict = column.to_numpy(dtype=object)
    return np.select(
        [verdict == "a", verdict == "tie", verdict == "b"], [1.0, 0.0, -1.0], default=np.nan
    )


def cronbach_alpha(items: pd.DataFrame | np.ndarray) -> float:
    """Cronbach's alpha of an observations x items matrix (complete rows)."""
    data = np.asarray(items, dtype=float)
    k = data.shape[1]
    total = data.sum(axis=1).var(ddof=1)
    if k < 2 or total == 0:
        return math.nan
    return float(k / (k - 1) * (1.0 - data.var(axis=0, ddof=1).sum() / total))


def factor_structure(judgments: pd.DataFrame) -> dict[str, Any] | None:
    """The paper 9.11 summary, or None without enough responses marked on every axis."""
    scores = response_scores(judgments)
    axes = [axis for axis in AXES if axis in scores]
    complete = scores.dropna(subset=axes)
    if len(axes) < 2 or len(complete) < MIN_RESPONSES:
        return None
    marks = complete[axes]
    if (marks.std(ddof=1) == 0).any():
        return None
    z = (marks - marks.mean()) / marks.std(ddof=1)
    eigenvalues = np.sort(np.linalg.eigvalsh(np.corrcoef(z.to_numpy(), rowvar=False)))[::-1]
    try:
        loadings = Factor(z.to_numpy(), n_factor=1, method="pa").fit().loadings[:, 0]
    except np.linalg.LinAlgError:
        # Perfectly collinear axes (e.g. a judge marking every axis alike): no factor model,
        # and the leaderboard must not fail for it.
        return None
    loadings = loadings if loadings.sum() >= 0 else -loadings  # sign is arbitrary
    overall = complete["overall"]
    mean_z = z.mean(axis=1)
    r = float(np.corrcoef(mean_z, overall)[0, 1]) if overall.std(ddof=1) > 0 else math.nan
    return {
        "n_responses": len(complete),
        "axes": axes,
        "eigenvalues": [float(v) for v in eigenvalues],
        "explained_by_first": float(eigenvalues[0] / eigenvalues.sum()),
        "loadings": {axis: float(v) for axis, v in zip(axes, loadings, strict=True)},
        "cronbach_alpha": cronbach_alpha(z),
        "correlation_with_overall": r,
    }

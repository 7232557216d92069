"""Does an interval called 95 % cover the truth 95 % of the time? Simulation with known
strengths on a study's own design. No Django import.

The design is a comparisons frame as the board fits it (``system_a``, ``system_b``, ``weight``,
``judge_kind`` and the resampling columns ``cluster``/``context``/``item``): which systems
meet, in which conversations, how often, with what weights, judged by whom. Each replicate
keeps all of that and draws every verdict anew from known strengths θ:

- a human verdict is a tie with the humans' tie share (``tie_share["human"]``), an LLM verdict
  with the LLM judges' (0 by default), and otherwise a win for side a with the probability
  that makes the expected score Bradley–Terry's, Pr(a) + Pr(tie)/2 = σ(θ_a − θ_b); the
  half-tie likelihood the board maximises is then correctly specified in its mean, so the
  estimate is consistent for θ whatever the tie share;
- a verdict's weight (its strength on the judge's scale) stays with its row.

The truth of a system is its Elo on the board's scale, 400 (θ_i − mean θ) / ln 10 + 1500 over
the systems of the design; an interval covers when it contains it. Rows the board marks
``too_few`` are not intervals and are not counted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import bradley_terry

ELO_SCALE = 400.0 / math.log(10.0)
ELO_BASE = 1500.0

#: A fit: comparisons in, a table indexed by system with ``ci_low`` and ``ci_high`` (Elo)
#: and optionally ``too_few`` out.
Fitter = Callable[[pd.DataFrame], pd.DataFrame]


@dataclass(frozen=True)
class Coverage:
    """How often the intervals of one method covered the truth."""

    intervals: int
    covered: int
    mean_width: float
    per_system: dict[str, float] = field(default_factory=dict)
    skipped: int = 0  # rows marked too few judgments (no interval)

    @property
    def rate(self) -> float:
        return self.covered / self.intervals if self.intervals else math.nan

    def standard_error(self) -> float:
        """The binomial standard error of ``rate`` (intervals taken as independent)."""
        p = self.rate
        return math.sqrt(p * (1.0 - p) / self.intervals) if self.intervals else math.nan


def true_elo(theta: pd.Series) -> pd.Series:
    """Elo of known strengths on the board's scale (mean-centred)."""
    return ELO_SCALE * (theta - theta.mean()) + ELO_BASE


def simulate(
    design: pd.DataFrame,
    theta: pd.Series,
    rng: np.random.Generator,
    *,
    tie_share: dict[str, float] | None = None,
) -> pd.DataFrame:
    """``design`` with every ``winner`` drawn anew from the strengths ``theta`` (see the module
    doc). ``tie_share``: per judge kind, the share of ties (missing kinds: none)."""
    shares = tie_share or {}
    kinds = (
        design["judge_kind"].astype(str).to_numpy()
        if "judge_kind" in design.columns
        else np.full(len(design), "human")
    )
    tie = (
        np.array([shares.get(str(kind), 0.0) for kind in kinds])
        if shares
        else np.zeros(len(design))
    )
    a = theta.reindex(design["system_a"].astype(str)).to_numpy()
    b = theta.reindex(design["system_b"].astype(str)).to_numpy()
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("every system of the design needs a strength")
    # An ``offset`` column (say, a known style effect beta x) adds to the logit.
    offset = design["offset"].to_numpy(dtype=float) if "offset" in design.columns else 0.0
    expected = 0.5 * (1.0 + np.tanh(0.5 * (a - b + offset)))  # σ(θ_a − θ_b + offset)
    # Pr(tie) may not exceed twice the weaker side's expected score.
    tie = np.minimum(tie, 2.0 * np.minimum(expected, 1.0 - expected))
    p_a = expected - tie / 2.0
    u = rng.random(len(design))
    winner = np.where(u < p_a, "a", np.where(u < p_a + tie, "tie", "b"))
    return design.assign(winner=winner)


def coverage(
    design: pd.DataFrame,
    theta: pd.Series,
    fit: Fitter,
    *,
    replicates: int,
    seed: int = 0,
    tie_share: dict[str, float] | None = None,
) -> Coverage:
    """Fit ``replicates`` simulated studies of ``design`` and count the intervals that hold the
    true Elo (see the module doc)."""
    rng = np.random.default_rng(seed)
    truth = true_elo(theta.astype(float))
    hits: dict[str, list[bool]] = {str(s): [] for s in truth.index}
    widths: list[float] = []
    skipped = 0
    for _ in range(replicates):
        table = fit(simulate(design, theta, rng, tie_share=tie_share))
        for system, row in table.iterrows():
            if bool(row.get("too_few", False)) or pd.isna(row["ci_low"]):
                skipped += 1
                continue
            value = float(truth.loc[str(system)])
            hits[str(system)].append(bool(row["ci_low"] <= value <= row["ci_high"]))
            widths.append(float(row["ci_high"] - row["ci_low"]))
    flat = [hit for system_hits in hits.values() for hit in system_hits]
    return Coverage(
        intervals=len(flat),
        covered=int(sum(flat)),
        mean_width=float(np.mean(widths)) if widths else math.nan,
        per_system={s: float(np.mean(h)) for s, h in hits.items() if h},
        skipped=skipped,
    )


def acceptable(rate: float, level: float = 0.95, tolerance: float = 0.03) -> bool:
    """Whether a measured coverage is within ``tolerance`` of the nominal ``level``."""
    return not math.isnan(rate) and abs(rate - level) <= tolerance


def formula_coverage(
    comparisons: pd.DataFrame,
    theta: pd.Series,
    *,
    ci: bradley_terry.CiMethod,
    alpha: float = 0.05,
    replicates: int = 200,
    seed: int = 0,
    min_n: int = 0,
) -> Coverage:
    """The coverage of an asymptotic interval ("paper", "fisher", "sandwich") on the design of
    ``comparisons`` if ``theta`` (say, the board's own estimate) were the truth: every verdict
    drawn anew as in :func:`simulate`, each kind of judge tying as often as it did here, and
    each replicate fitted on the fast path (:func:`ranking.bradley_terry.interval_of`). Rows
    with fewer than ``min_n`` comparisons are not counted (the board shows no interval there)."""
    enc = bradley_terry.encode(comparisons)
    kinds = (
        comparisons["judge_kind"].astype(str).to_numpy()
        if "judge_kind" in comparisons.columns
        else np.full(len(comparisons), "all")
    )
    tie = np.zeros(len(comparisons))
    for kind in np.unique(kinds):
        mine = kinds == kind
        tie[mine] = float((enc.outcome[mine] == 2).mean())
    strengths = theta.reindex(enc.systems.astype(str)).to_numpy(dtype=float)
    expected = 0.5 * (1.0 + np.tanh(0.5 * (strengths[enc.a] - strengths[enc.b])))
    tie = np.minimum(tie, 2.0 * np.minimum(expected, 1.0 - expected))
    p_a = expected - tie / 2.0
    truth = ELO_SCALE * (strengths - strengths.mean()) + ELO_BASE
    counted = np.bincount(enc.a, minlength=len(strengths)) + np.bincount(
        enc.b, minlength=len(strengths)
    )
    shown = counted >= min_n
    rng = np.random.default_rng([seed, 29])
    covered = intervals = 0
    widths = []
    for _ in range(replicates):
        u = rng.random(len(p_a))
        outcome = np.where(u < p_a, 0, np.where(u < p_a + tie, 2, 1))
        _, low, high = bradley_terry.interval_of(enc, outcome, ci=ci, alpha=alpha)
        covered += int(((low <= truth) & (truth <= high))[shown].sum())
        intervals += int(shown.sum())
        widths.append(float((high - low)[shown].mean()) if shown.any() else math.nan)
    return Coverage(
        intervals=intervals,
        covered=covered,
        mean_width=float(np.nanmean(widths)) if intervals else math.nan,
        skipped=int((~shown).sum()) * replicates,
    )


def paper_design(
    *,
    systems: int = 10,
    conversations: int = 150,
    contexts_per_conversation: int = 2,
    pairs_per_context: int = 5,
    judgments_per_pair: int = 5,
    llm_judges: int = 0,
    seed: int = 0,
) -> pd.DataFrame:
    """A design of HEART's shape: contexts cut two by two from source conversations, a few
    system pairs per context drawn at random, ``judgments_per_pair`` human verdicts on each
    pair (normalised strengths 1 or 2, as the 5-point scale gives) and, with ``llm_judges``,
    each LLM judge's two position-swapped verdicts (strengths 1-5 normalised onto 1-2)."""
    rng = np.random.default_rng([seed, 11])
    names = [f"s{i:02d}" for i in range(systems)]
    rows = []
    item = 0
    for conversation in range(conversations):
        for c in range(contexts_per_conversation):
            context = f"c{conversation}-{c}"
            for _ in range(pairs_per_context):
                i, j = rng.choice(systems, 2, replace=False)
                for _ in range(judgments_per_pair):
                    rows.append((names[i], names[j], context, conversation, item, "human", 0))
                for judge in range(llm_judges):
                    for _order in range(2):
                        rows.append((names[i], names[j], context, conversation, item, "llm", judge))
                item += 1
    frame = pd.DataFrame(
        rows,
        columns=["system_a", "system_b", "context", "cluster", "item", "judge_kind", "judge"],
    )
    human = frame["judge_kind"] == "human"
    strength = np.where(human, rng.integers(1, 3, len(frame)), rng.integers(1, 6, len(frame)))
    frame["weight"] = np.where(human, strength, 1.0 + (strength - 1) / 4.0).astype(float)
    frame["winner"] = "a"
    return frame


def spread_strengths(systems: list[str], elo_range: float) -> pd.Series:
    """Strengths evenly spaced over ``elo_range`` Elo (the paper's board spans about 270)."""
    steps = np.linspace(-0.5, 0.5, len(systems)) if len(systems) > 1 else np.zeros(1)
    return pd.Series(steps * elo_range / ELO_SCALE, index=systems, name="theta")

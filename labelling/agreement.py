"""Agreement of LLM strategy labels with a human consensus (paper 9.10). Pure: no Django.

Binary per strategy: present (1) or not (0); an LLM's "uncertain" counts as not present, as
in the analyses. Per strategy: precision, recall, F1 and Cohen's kappa over the items both
sides labelled; macro averages are unweighted means over the strategies where the statistic
is defined (F1 is undefined for a strategy neither side ever marked, kappa when both sides
give every item the same value: chance agreement is 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


def f1_score(truth: Sequence[bool] | np.ndarray, predicted: Sequence[bool] | np.ndarray) -> float:
    """F1 of ``predicted`` against ``truth`` for the positive class; NaN without positives."""
    t = np.asarray(truth, dtype=bool)
    p = np.asarray(predicted, dtype=bool)
    tp = int((t & p).sum())
    fp = int((~t & p).sum())
    fn = int((t & ~p).sum())
    if tp + fp + fn == 0:
        return float("nan")
    return 2 * tp / (2 * tp + fp + fn)


def cohen_kappa(a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray) -> float:
    """Cohen's kappa of two binary raters: (p_o - p_e) / (1 - p_e); NaN when p_e = 1."""
    x = np.asarray(a, dtype=bool)
    y = np.asarray(b, dtype=bool)
    n = len(x)
    if n == 0:
        return float("nan")
    observed = float((x == y).mean())
    expected = float(x.mean() * y.mean() + (1 - x.mean()) * (1 - y.mean()))
    if expected >= 1.0:
        return float("nan")
    return (observed - expected) / (1 - expected)


@dataclass
class LabelAgreement:
    per_strategy: pd.DataFrame  # index strategy; n, tp, fp, fn, precision, recall, f1, kappa
    macro_f1: float
    macro_kappa: float
    n_items: int


def label_agreement(
    llm: pd.DataFrame, human: pd.DataFrame, strategies: Sequence[str]
) -> LabelAgreement:
    """Compare two boolean tables (items x strategies) on the items they share."""
    items = llm.index.intersection(human.index)
    rows = {}
    for name in strategies:
        p = np.asarray(
            llm.reindex(items)[name].fillna(False).astype(bool).to_numpy() if len(items) else [],
            dtype=bool,
        )
        t = np.asarray(
            human.reindex(items)[name].fillna(False).astype(bool).to_numpy() if len(items) else [],
            dtype=bool,
        )
        tp, fp, fn = int((t & p).sum()), int((~t & p).sum()), int((t & ~p).sum())
        rows[name] = {
            "n": len(items),
            "human_present": int(t.sum()),
            "llm_present": int(p.sum()),
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else float("nan"),
            "recall": tp / (tp + fn) if tp + fn else float("nan"),
            "f1": f1_score(t, p),
            "kappa": cohen_kappa(t, p),
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "strategy"
    return LabelAgreement(
        per_strategy=table,
        macro_f1=float(table["f1"].mean()) if table["f1"].notna().any() else float("nan"),
        macro_kappa=float(table["kappa"].mean()) if table["kappa"].notna().any() else float("nan"),
        n_items=len(items),
    )


def present_table(present: dict[Any, Any], strategies: Sequence[str]) -> pd.DataFrame:
    """Boolean items x strategies table from {item: [strategies present]}."""
    return pd.DataFrame(
        [[name in set(names) for name in strategies] for names in present.values()],
        index=list(present.keys()),
        columns=list(strategies),
        dtype=bool,
    )

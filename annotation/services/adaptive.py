"""Adaptive assignment's part of the claim: the order pairs come up in, read from a small table.

A study with `Study.adaptive_assignment` on is served from `PairPriority`, which the refit
writes (ranking.design): the claim statement walks that table's (study, rank) index instead of
the pairs' (study, n_judgments) one, under the same conditions (room under the quota, a pair
the rater has not had, the per-context limit, no text-unknown completion), and the lease
statement moves the leased pair's rank on. Both stay single statements, so a round trip sends
as many queries as without adaptive assignment. A study whose priorities are not written yet
(or all taken) is served the least-judged pair, as without it.
"""

from __future__ import annotations

from ..models import Pair, PairPriority, Rater

_PLAIN_SOURCE = "FROM {pair} p\nWHERE p.study_id = %s"
_PLAIN_ORDER = "ORDER BY p.n_judgments"


def is_adaptive(rater: Rater) -> bool:
    return bool(getattr(rater.study, "adaptive_assignment", False))


def adaptive_claim_sql(sql: str) -> str:
    """The claim statement rewritten to take pairs in `PairPriority` order (same parameters)."""
    source = (
        f"FROM {PairPriority._meta.db_table} pp JOIN {Pair._meta.db_table} p "
        "ON p.id = pp.pair_id\nWHERE pp.study_id = %s"
    )
    pair_source = _PLAIN_SOURCE.format(pair=Pair._meta.db_table)
    if pair_source not in sql or _PLAIN_ORDER not in sql:
        raise RuntimeError("the claim statement changed: update adaptive_claim_sql")
    return sql.replace(pair_source, source, 1).replace(_PLAIN_ORDER, "ORDER BY pp.rank", 1)


# Run by the lease statement only when its INSERT happened: the next draw of this pair is an
# exponential time later on its clock (1 - random() is in (0, 1], so the log is finite).
RANK_BUMP_CTE = """, bumped AS (
  UPDATE {priority} SET rank = rank - ln(1.0 - random()) / rate
  WHERE pair_id = %s AND EXISTS (SELECT 1 FROM leased) RETURNING 1
)"""


def rank_bump_cte() -> str:
    return RANK_BUMP_CTE.format(priority=PairPriority._meta.db_table)

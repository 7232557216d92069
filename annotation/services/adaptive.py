"""Adaptive assignment's part of the claim: the order pairs come up in, read from a small table.

A study with `Study.adaptive_assignment` on is served from `PairPriority`, which the refit
writes (ranking.design): the claim statement walks that table's (study, rank) index instead of
the pairs' (study, n_judgments) one, under the same conditions (room under the quota, a pair
the rater has not had, the per-context limit, no text-unknown completion), and the lease
statement moves the leased pair's rank on. Both stay single statements, so a round trip sends
as many queries as without adaptive assignment. A study whose priorities are not written yet
(or all taken) is served the least-judged pair, as without it.

The claim reads the first `WINDOW` priorities in a subquery with its own LIMIT, then looks each
pair up by key. Joining the whole priority table instead lets PostgreSQL's planner filter every
pair of the study first and match the ranks afterwards: 7 ms a claim on 10,000 pairs instead of
0.3 ms, and a rater round trip three times slower (benchmarks/bench_rater_throughput.py
--adaptive). Only pairs with room are in the table (the refit leaves full ones out, a lease
moves its pair back), so the window is rarely exhausted; when it is, the pair with fewest
judgments is served.
"""

from __future__ import annotations

from ..models import Pair, PairPriority, Rater

_PLAIN_SOURCE = "FROM {pair} p\nWHERE p.study_id = %s"
_PLAIN_ORDER = "ORDER BY p.n_judgments"
#: How many of the study's best-ranked pairs one claim looks at.
WINDOW = 256


def is_adaptive(rater: Rater) -> bool:
    return bool(getattr(rater.study, "adaptive_assignment", False))


def adaptive_claim_sql(sql: str) -> str:
    """The claim statement rewritten to take pairs in `PairPriority` order (same parameters)."""
    source = (
        f"FROM (SELECT pair_id, rank FROM {PairPriority._meta.db_table} WHERE study_id = %s "
        f"ORDER BY rank LIMIT {WINDOW}) pp\n"
        f"JOIN {Pair._meta.db_table} p ON p.id = pp.pair_id\nWHERE TRUE"
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

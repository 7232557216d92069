"""Which completions of a context are compared: pure pair sampling, no Django.

- "all": every pair of a context's completions.
- "balanced": `per_context` pairs per context, chosen so that every system pair is compared about
  equally often across the study. Greedy: contexts are visited in a seeded shuffle of their
  sorted ids; in each, the next pair is the candidate whose system pair has been used least so
  far (pairs already stored count), then whose two systems have been used least, then a seeded
  random tie-break. With every system on every context this keeps max - min usage of the system
  pairs within 1. Same input and seed -> same output.

Pairs are canonical: (smaller completion id, larger completion id).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import combinations

# A completion as the design sees it: (completion id, system name).
Item = tuple[int, str]
PairIds = tuple[int, int]


def canonical(a: int, b: int) -> PairIds:
    return (a, b) if a < b else (b, a)


def system_pair(x: Item, y: Item) -> tuple[str, str]:
    return (x[1], y[1]) if x[1] <= y[1] else (y[1], x[1])


def all_pairs(items: Sequence[Item]) -> list[PairIds]:
    """Every pair of a context's completions, canonical, sorted."""
    return sorted(canonical(x[0], y[0]) for x, y in combinations(items, 2))


def design_all[K: Hashable](contexts: Mapping[K, Sequence[Item]]) -> dict[K, list[PairIds]]:
    return {key: all_pairs(items) for key, items in contexts.items()}


def design_balanced[K: Hashable](
    contexts: Mapping[K, Sequence[Item]],
    *,
    per_context: int,
    seed: int,
    existing: Mapping[K, Iterable[PairIds]] | None = None,
) -> dict[K, list[PairIds]]:
    """New pairs per context so that each context has up to `per_context` pairs in all."""
    rng = random.Random(seed)
    existing = existing or {}
    usage, system_use = _usage(contexts, existing)
    order = sorted(contexts, key=repr)
    rng.shuffle(order)
    design: dict[K, list[PairIds]] = {}
    for key in order:
        items = sorted(contexts[key])
        have = {canonical(*p) for p in existing.get(key, ())}
        candidates = [
            (x, y) for x, y in combinations(items, 2) if canonical(x[0], y[0]) not in have
        ]
        ties = {canonical(x[0], y[0]): rng.random() for x, y in candidates}
        chosen = []
        for _ in range(max(0, per_context - len(have))):
            if not candidates:
                break
            best = min(
                candidates,
                key=lambda c: (
                    usage[system_pair(*c)],
                    system_use[c[0][1]] + system_use[c[1][1]],
                    ties[canonical(c[0][0], c[1][0])],
                ),
            )
            candidates.remove(best)
            usage[system_pair(*best)] += 1
            system_use.update((best[0][1], best[1][1]))
            chosen.append(canonical(best[0][0], best[1][0]))
        design[key] = sorted(chosen)
    return design


def _usage[K: Hashable](
    contexts: Mapping[K, Sequence[Item]], existing: Mapping[K, Iterable[PairIds]]
) -> tuple[Counter[tuple[str, str]], Counter[str]]:
    """How often each system pair and each system already appear in stored pairs."""
    usage: Counter[tuple[str, str]] = Counter()
    system_use: Counter[str] = Counter()
    for key, pairs in existing.items():
        systems = dict(contexts.get(key, ()))
        for a, b in pairs:
            if a in systems and b in systems:
                usage[system_pair((a, systems[a]), (b, systems[b]))] += 1
                system_use.update((systems[a], systems[b]))
    return usage, system_use


def system_pair_counts[K: Hashable](
    contexts: Mapping[K, Sequence[Item]], design: Mapping[K, Iterable[PairIds]]
) -> Counter[tuple[str, str]]:
    """How often each system pair is compared in a design (for checks and reports)."""
    counts: Counter[tuple[str, str]] = Counter()
    for key, pairs in design.items():
        systems = dict(contexts[key])
        for a, b in pairs:
            counts[system_pair((a, systems[a]), (b, systems[b]))] += 1
    return counts

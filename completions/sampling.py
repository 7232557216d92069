"""Stratified sampling shared by the label validation sample and adversarial sources."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping


def stratified_round_robin[K, T](
    strata: Mapping[K, Iterable[T]], n: int, *, seed: int = 0
) -> list[tuple[K, T]]:
    """Up to ``n`` (stratum, member) picks, one per stratum in turn (order shuffled by seed)."""
    rng = random.Random(seed)
    keys = sorted(strata, key=str)
    queues: dict[K, list[T]] = {}
    for key in keys:
        members = list(strata[key])
        rng.shuffle(members)
        queues[key] = members
    order = list(keys)
    rng.shuffle(order)
    picks: list[tuple[K, T]] = []
    while len(picks) < n and any(queues[k] for k in order):
        for key in order:
            if queues[key] and len(picks) < n:
                picks.append((key, queues[key].pop(0)))
    return picks

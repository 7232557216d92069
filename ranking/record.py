"""The board's record: every system ever judged stays on it, and what changed the board is a
dated event (`BoardEvent`): a system first judged, taken off the board with a reason, put back,
the sampling policy changed.

A system taken off keeps its judgments (exports and the release bundle carry them); the boards
fitted after the event leave its judgments out (`off_board`, read by
`ranking.services.study_data_load`). Each snapshot states the sampling policy in force and each
system's share of the judgments (`sampling_section`); `board_history` puts snapshots and events
on one dated list (the history page, the `board_history` command, the release bundle).
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from django.db import connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.models import Judgment, Pair
from annotation.services.pairs import pairs_close_for_system, pairs_reopen_for_system
from completions.models import Completion, Study, System

from .models import BoardEvent, BoardEventKind, LeaderboardSnapshot
from .selectors import off_board


def sampling_policy(study: Study) -> dict[str, Any]:
    """The study's sampling policy as the record states it: uniform, or adaptive with its goal
    (``k`` for top k, ``anchor`` for the anchor goal)."""
    if not study.adaptive_assignment:
        return {"policy": "uniform"}
    policy: dict[str, Any] = {"policy": "adaptive", "goal": study.adaptive_goal}
    if study.adaptive_goal == "top_k":
        policy["k"] = study.adaptive_k
    if study.adaptive_goal == "anchor":
        policy["anchor"] = study.adaptive_anchor or study.leaderboard_anchor or None
    return policy


def _system_check(study: Study, name: str) -> None:
    if not System.objects.filter(study=study, name=name).exists():
        raise ValueError(f"the study has no system called {name!r}")


@transaction.atomic
def system_take_off(*, study: Study, system: str, reason: str, by: str = "") -> BoardEvent:
    """Take ``system`` off the board from now on, with the admin's reason (required). Raters
    are offered none of its pairs any more (an item they hold now may still be answered)."""
    reason = reason.strip()
    if not reason:
        raise ValueError("say why the system is taken off the board")
    _system_check(study, system)
    Study.objects.select_for_update().filter(pk=study.pk).first()  # one change at a time
    if system in off_board(study):
        raise ValueError(f"{system} is already off the board")
    closed = pairs_close_for_system(study=study, system=system)
    return BoardEvent.objects.create(
        study=study,
        kind=BoardEventKind.SYSTEM_REMOVED,
        system=system,
        reason=reason,
        at=timezone.now(),
        by=by,
        detail={"pairs_closed": closed},
    )


@transaction.atomic
def system_put_back(*, study: Study, system: str, reason: str = "", by: str = "") -> BoardEvent:
    """Put a system taken off back on the board; its pairs are offered to raters again (those
    with another system still off stay closed)."""
    _system_check(study, system)
    Study.objects.select_for_update().filter(pk=study.pk).first()
    gone = off_board(study)
    if system not in gone:
        raise ValueError(f"{system} is on the board")
    reopened = pairs_reopen_for_system(study=study, system=system, still_off=gone)
    return BoardEvent.objects.create(
        study=study,
        kind=BoardEventKind.SYSTEM_RESTORED,
        system=system,
        reason=reason.strip(),
        at=timezone.now(),
        by=by,
        detail={"pairs_reopened": reopened},
    )


def policy_record(*, study: Study, by: str = "") -> BoardEvent | None:
    """Record the study's sampling policy when it differs from the last one recorded (call
    after the study's settings are saved). The first record of a study is its policy then."""
    policy = sampling_policy(study)
    last = (
        BoardEvent.objects.filter(study=study, kind=BoardEventKind.POLICY_CHANGED)
        .order_by("-at", "-id")
        .first()
    )
    if last is not None and last.detail == policy:
        return None
    if last is None and policy == {"policy": "uniform"}:
        return None  # the default since the study began: nothing changed
    return BoardEvent.objects.create(
        study=study, kind=BoardEventKind.POLICY_CHANGED, detail=policy, at=timezone.now(), by=by
    )


def systems_added_sync(study: Study) -> int:
    """A "system added" event, dated at its first judgment, for every system judged that has
    none yet (run at each refit and before the record is read). Returns how many."""
    recorded = set(
        BoardEvent.objects.filter(study=study, kind=BoardEventKind.SYSTEM_ADDED).values_list(
            "system", flat=True
        )
    )
    # Only systems without the event are looked for: once every system has it, a refit reads
    # no judgment here (a study of 3,000,000 judgments spent 21 s on this scan at each refit).
    missing = set(System.objects.filter(study=study).values_list("name", flat=True)) - recorded
    if not missing:
        return 0
    first = _first_judged(study, missing)
    # A judgment imported without its time leaves the first one unknown: the event is dated
    # when the record found the system, and says so.
    now = timezone.now()
    BoardEvent.objects.bulk_create(
        [
            BoardEvent(
                study=study,
                kind=BoardEventKind.SYSTEM_ADDED,
                system=name,
                at=at or now,
                detail={} if at else {"first_judged": None},
            )
            for name, at in sorted(first.items())
        ],
        ignore_conflicts=True,
    )
    return len(first)


def _first_judged(study: Study, systems: set[str]) -> dict[str, Any]:
    """Each of ``systems`` that has a counted judgment, with the time of its first one (None
    when none of its judgments has a time). One pass over the study's judgments, grouped by
    the pair's two systems (a few thousand groups, each system's minimum taken here): grouping
    by pair instead made PostgreSQL spill 1,500,000 groups to disk (13-15 s for 3,000,000
    judgments, 5.5 s now)."""
    judgment, pair = Judgment._meta.db_table, Pair._meta.db_table
    completion, system = Completion._meta.db_table, System._meta.db_table
    sql = f"""
        SELECT sa.name, sb.name, min(j.submitted_at)
        FROM {judgment} j
        JOIN {pair} p ON p.id = j.pair_id
        JOIN {completion} ca ON ca.id = p.completion_a_id
        JOIN {completion} cb ON cb.id = p.completion_b_id
        JOIN {system} sa ON sa.id = ca.system_id
        JOIN {system} sb ON sb.id = cb.system_id
        WHERE j.study_id = %s AND j.pair_id IS NOT NULL AND NOT j.quality_check
        GROUP BY sa.name, sb.name
    """  # noqa: S608 (table names from the models; every value a parameter)
    with connection.cursor() as cursor:
        cursor.execute(sql, [study.pk])
        rows = cursor.fetchall()
    first: dict[str, Any] = {}
    for name_a, name_b, at in rows:
        moment = _moment(at)
        for name in (name_a, name_b):
            if name not in systems:
                continue
            if name not in first or (moment is not None and _earlier(moment, first[name])):
                first[name] = moment
    return first


def _earlier(moment: Any, known: Any) -> bool:
    return known is None or moment < known


def _moment(value: Any) -> Any:
    """A time read by raw SQL: SQLite gives the stored text (UTC), PostgreSQL a datetime."""
    if isinstance(value, str):
        parsed = parse_datetime(value)
        if parsed is not None and timezone.is_naive(parsed):
            parsed = timezone.make_aware(parsed, UTC)
        return parsed
    return value


def sampling_section(judgments: Any, study: Study, systems: list[str]) -> dict[str, Any]:
    """What a snapshot states about how its judgments were gathered: the policy in force when
    it was fitted, each system's share of the board's judgments (the share of judgments it
    appears in: the shares sum to 2), and the systems off the board then."""
    n = len(judgments)
    shares = {name: 0.0 for name in systems}
    if n:
        # Counted on the columns as they are (categories: their codes, no string per row).
        counts = judgments["system_a"].value_counts().rename(index=str)
        counts = counts.add(judgments["system_b"].value_counts().rename(index=str), fill_value=0)
        shares.update({str(name): round(float(c) / n, 4) for name, c in counts.items() if c})
    return {
        "policy": sampling_policy(study),
        "shares": dict(sorted(shares.items(), key=lambda item: -item[1])),
        "off_board": off_board(study),
    }


def _event_row(event: BoardEvent) -> dict[str, Any]:
    row: dict[str, Any] = {"at": event.at.isoformat(), "kind": event.kind}
    if event.system:
        row["system"] = event.system
    if event.reason:
        row["reason"] = event.reason
    if event.kind == BoardEventKind.POLICY_CHANGED:
        row["policy"] = event.detail
    elif event.detail:
        row.update(event.detail)
    if event.by:
        row["by"] = event.by
    return row


def _snapshot_row(snapshot: LeaderboardSnapshot) -> dict[str, Any]:
    sampling = snapshot.result.get("sampling") or {}
    return {
        "at": snapshot.created_at.isoformat(),
        "id": snapshot.pk,
        "judges": snapshot.judges,
        "subset": snapshot.subset,
        "preset": snapshot.preset,
        "trigger": snapshot.trigger,
        "n_judgments": snapshot.n_judgments,
        "systems": [
            {"system": row.get("system"), "elo": row.get("elo")}
            for row in snapshot.result.get("systems", [])
        ],
        "sampling": sampling.get("policy"),
        "shares": sampling.get("shares"),
        "off_board": sampling.get("off_board", []),
    }


def board_history(study: Study, *, snapshots: int = 500) -> dict[str, Any]:
    """The study board's record, oldest first: its snapshots (each with its sampling policy
    and shares) and its events; ``systems``: every system ever judged, with whether it is on
    the board now."""
    systems_added_sync(study)
    events = list(BoardEvent.objects.filter(study=study).order_by("at", "id"))
    stored = list(
        LeaderboardSnapshot.objects.filter(study=study).order_by("-created_at", "-id")[:snapshots]
    )
    gone = set(off_board(study))
    judged = sorted({e.system for e in events if e.kind == BoardEventKind.SYSTEM_ADDED})
    return {
        "study": study.slug,
        "policy": sampling_policy(study),
        "systems": [{"system": name, "on_board": name not in gone} for name in judged],
        "events": [_event_row(e) for e in events],
        "snapshots": [_snapshot_row(s) for s in reversed(stored)],
    }

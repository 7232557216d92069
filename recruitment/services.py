"""Writes: the Prolific token, publishing the study, reading submissions back, paying.

Each of publish / sync / pay takes `dry_run`: then nothing is sent to Prolific and nothing is
stored, and the returned report lists what would happen, to whom, and why.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.models import Assignment, Rater
from annotation.services import rater_finish
from care.models import Outcome as CareOutcome
from care.selectors import care_settings
from completions.models import Study
from llm import keys

from .client import ProlificClient, ProlificError
from .models import CompletedAction, ProlificAction, ProlificSettings, ProlificSubmission
from .selectors import PROLIFIC_GONE, bonus_plan, prolific_settings, rater_outcomes

log = logging.getLogger(__name__)
SETTLED = ("APPROVED", "REJECTED", "SCREENED-OUT")
PROLIFIC_QUERY = {
    "PROLIFIC_PID": "{{%PROLIFIC_PID%}}",
    "STUDY_ID": "{{%STUDY_ID%}}",
    "SESSION_ID": "{{%SESSION_ID%}}",
}
STOP_RETURN_REASON = (
    "You stopped early: please return the submission. You are paid for the time you worked "
    "as a bonus."
)
REJECT_MESSAGE = (
    "Your submission failed {n} of the study's attention checks, each an explicit instruction "
    "to choose a given answer, so it cannot be approved under Prolific's attention-check rules."
)


class ProlificNotReady(Exception):
    """A step cannot run yet (no token, not published): the message says what to do first."""


@dataclass
class Report:
    """What a step did (or, in a dry run, would do): one line per person or call."""

    dry_run: bool
    lines: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, what: str, line: str) -> None:
        self.counts[what] += 1
        self.lines.append(line)


def prolific_settings_for_update(*, study: Study) -> ProlificSettings:
    found, _ = ProlificSettings.objects.get_or_create(study=study)
    return found


def prolific_token_set(*, study: Study, token: str) -> ProlificSettings:
    """Store the study's Prolific API token encrypted (as LLM endpoint keys); "" removes it."""
    pay = prolific_settings_for_update(study=study)
    if token:
        problem = keys.key_problem(token)
        if problem:
            raise ValueError(problem.replace("an API key", "a Prolific token"))
        pay.api_token_encrypted = keys.key_encrypt(token)
        pay.api_token_hint = keys.key_hint(token)
    else:
        pay.api_token_encrypted = pay.api_token_hint = ""
    pay.save(update_fields=["api_token_encrypted", "api_token_hint"])
    return pay


def _client(pay: ProlificSettings) -> ProlificClient:
    if not pay.api_token_encrypted:
        raise ProlificNotReady("no Prolific API token: enter one on the study's Prolific page")
    return ProlificClient(keys.key_decrypt(pay.api_token_encrypted))


# --- Publish --------------------------------------------------------------------------------


def completion_codes(*, study: Study, group_id: str) -> list[dict[str, Any]]:
    """One code per outcome that hands one out, each with an action Prolific documents."""
    pay = prolific_settings(study=study)
    care = care_settings(study=study)
    completed: list[dict[str, Any]] = [{"action": pay.completed_action}]
    if group_id:
        completed.append({"action": "ADD_TO_PARTICIPANT_GROUP", "participant_group": group_id})
    codes = [{"code": study.completion_code, "code_type": "COMPLETED", "actions": completed}]
    # A screen-out is reviewed and screened out by `pay`; an early stop is asked to return the
    # submission and paid for the time worked as a bonus. Neither is approved as complete,
    # unless the care settings pay them as complete (then they get the completion code).
    if care.fail_outcome == CareOutcome.CODE:
        codes.append(
            {"code": care.screenout_code, "code_type": "FIXED_SCREENOUT",
             "actions": [{"action": "MANUALLY_REVIEW"}]}
        )  # fmt: skip
    if care.stop_outcome == CareOutcome.CODE:
        codes.append(
            {"code": care.stop_code, "code_type": "OTHER",
             "actions": [{"action": "REQUEST_RETURN", "return_reason": STOP_RETURN_REASON}]}
        )  # fmt: skip
    return codes


def study_body(*, study: Study, base_url: str, group_id: str) -> dict[str, Any]:
    pay = prolific_settings(study=study)
    entry = base_url.rstrip("/") + reverse(
        "annotation:entry", kwargs={"invite_token": study.invite_token}
    )
    return {
        "name": study.name,
        "internal_name": study.slug,
        "description": study.description or study.name,
        "external_study_url": entry,
        "prolific_id_option": "url_parameters",
        "url_parameters": PROLIFIC_QUERY,
        "completion_codes": completion_codes(study=study, group_id=group_id),
        "total_available_places": pay.places,
        "estimated_completion_time": pay.estimated_minutes,
        "reward": pay.reward_cents,
        "device_compatibility": ["desktop", "tablet"],
    }


def prolific_publish(*, study: Study, base_url: str, dry_run: bool = False) -> Report:
    """Create the study on Prolific (its participant group first) and publish it. A study
    created by an earlier attempt whose publishing failed is published, not created again."""
    pay = prolific_settings(study=study)
    report = Report(dry_run=dry_run)
    if pay.published_at:
        raise ProlificNotReady(f"already published as Prolific study {pay.prolific_study_id}")
    if dry_run:
        group = "(new group)" if pay.participant_group else ""
        body = study_body(study=study, base_url=base_url, group_id=group)
        report.add(
            "study",
            f"would create {study.name!r}: {body['total_available_places']} places, reward "
            f"{body['reward']} (cents) for {body['estimated_completion_time']} min, entry "
            f"{body['external_study_url']}",
        )
        for code in body["completion_codes"]:
            actions = ", ".join(a["action"] for a in code["actions"])
            report.add("code", f"code {code['code']} ({code['code_type']}): {actions}")
        return report
    pay = prolific_settings_for_update(study=study)
    with _client(pay) as client:
        if pay.participant_group and not pay.participant_group_id:
            made = client.group_create(f"{study.name}: qualified raters")
            pay.participant_group_id = made["id"]
            pay.save(update_fields=["participant_group_id"])
            report.add("group", f"participant group {made['id']} created")
        body = study_body(study=study, base_url=base_url, group_id=pay.participant_group_id)
        if not pay.prolific_study_id:
            pay.prolific_study_id = client.study_create(body)["id"]
            pay.save(update_fields=["prolific_study_id"])
            for code in body["completion_codes"]:
                report.add("code", f"code {code['code']} ({code['code_type']})")
        client.study_publish(pay.prolific_study_id)
    pay.published_at = timezone.now()
    pay.save(update_fields=["published_at"])
    report.add("study", f"Prolific study {pay.prolific_study_id} published")
    return report


# --- Sync -----------------------------------------------------------------------------------


def prolific_sync(*, study: Study, dry_run: bool = False) -> Report:
    """Read the submissions back. A returned or timed-out one frees the rater's places at once:
    their open items go back to the pool and they stop counting among the active raters."""
    pay = prolific_settings(study=study)
    if not pay.prolific_study_id:
        raise ProlificNotReady("not published on Prolific yet: publish first")
    with _client(pay) as client:
        rows = client.submissions(pay.prolific_study_id)
    report = Report(dry_run=dry_run)
    raters = {
        r.external_id: r
        for r in Rater.objects.filter(
            study=study, external_id__in=[row["participant_id"] for row in rows]
        )
    }
    for row in rows:
        rater = raters.get(row["participant_id"])
        report.add(row["status"], f"{row['participant_id']}: {row['status']}")
        if dry_run:
            continue
        _submission_store(study=study, row=row, rater=rater)
        if rater is not None and row["status"] in PROLIFIC_GONE:
            freed = rater_release(rater=rater)
            if freed:
                report.add("freed", f"{row['participant_id']}: {freed} open item(s) freed")
    if not dry_run:
        pay.synced_at = timezone.now()
        ProlificSettings.objects.filter(pk=pay.pk).update(synced_at=pay.synced_at)
    return report


def prolific_sync_published() -> list[int]:
    """Sync every open or paused study published on Prolific with a token; a study whose sync
    fails is logged and left for the next round (the others go on). The ids synced."""
    synced = []
    published = ProlificSettings.objects.exclude(prolific_study_id="").exclude(
        api_token_encrypted=""
    )
    for pay in published.filter(study__status__in=["open", "paused"]).select_related("study"):
        try:
            prolific_sync(study=pay.study)
        except (ProlificError, ProlificNotReady, keys.KeyUnavailable) as exc:
            log.warning("prolific sync of study %s failed: %s", pay.study.slug, exc)
            continue
        synced.append(pay.study_id)
    return synced


def _submission_store(*, study: Study, row: dict[str, Any], rater: Rater | None) -> None:
    ProlificSubmission.objects.update_or_create(
        study=study,
        submission_id=row["id"],
        defaults={
            "participant_id": row["participant_id"],
            "rater": rater,
            "status": row["status"],
            "study_code": row.get("study_code") or "",
            "started_at": parse_datetime(row["started_at"]) if row.get("started_at") else None,
            "completed_at": (
                parse_datetime(row["completed_at"]) if row.get("completed_at") else None
            ),
            "synced_at": timezone.now(),
        },
    )


@transaction.atomic
def rater_release(*, rater: Rater) -> int:
    """The rater has left through Prolific: their leased items go back to the pool now and
    they are finished here (so they no longer hold a place under the active-rater cap)."""
    now = timezone.now()
    freed = Assignment.objects.filter(rater=rater, status=Assignment.Status.LEASED).update(
        status=Assignment.Status.EXPIRED, lease_expires_at=now
    )
    if rater.finished_at is None:
        rater_finish(rater=rater)
    return freed


# --- Pay ------------------------------------------------------------------------------------


def prolific_pay(*, study: Study, dry_run: bool = False) -> Report:
    """Approve, screen out and reject in bulk, pay the bonuses, fill the participant group.

    Reads the submissions first (sync). Only a submission awaiting review can be approved,
    screened out or rejected; every action is recorded before it is sent (ProlificAction, one
    per participant and kind), so a second run never approves, rejects or pays anyone twice.
    """
    pay = prolific_settings(study=study)
    if not pay.prolific_study_id:
        raise ProlificNotReady("not published on Prolific yet: publish first")
    if not dry_run:
        prolific_sync(study=study)
    rows = [row for row in rater_outcomes(study=study) if row.participant_id]
    done = set(ProlificAction.objects.filter(study=study).values_list("participant_id", "kind"))
    report = Report(dry_run=dry_run)
    for pid, kind in ProlificAction.objects.filter(
        study=study, status=ProlificAction.Status.SENDING
    ).values_list("participant_id", "kind"):
        report.add("unsure", f"{pid}: {kind} was sent once and its answer never came back: "
                             "check it on Prolific (it is never sent again)")  # fmt: skip
    batches: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for row in rows:
        sub = row.submission
        if row.action == "NONE" or (row.participant_id, row.action) in done:
            continue
        if sub is not None and sub.status in SETTLED:
            continue  # approved automatically by its code, or reviewed on Prolific's site
        if sub is None or sub.status != "AWAITING REVIEW":
            state = sub.status if sub else "not seen on Prolific (sync)"
            report.add("waiting", f"{row.participant_id}: {row.action} later, submission "
                                  f"{state} ({row.reason})")  # fmt: skip
            continue
        batches[row.action].append((row.participant_id, sub.submission_id, row.reason))
        why = f"{row.reason}; failed attention checks: {row.failed_attention}"
        report.add(row.action, f"{row.participant_id}: {row.action} ({why})")
    bonuses = _bonuses_due(study=study, done=done)
    seen = set(
        ProlificSubmission.objects.filter(study=study).values_list("participant_id", flat=True)
    )
    for pid, (amount, reason) in list(bonuses.items()):
        if pid not in seen:  # Prolific pays bonuses only to participants of the study
            del bonuses[pid]
            report.add("waiting", f"{pid}: bonus {amount} later, not seen on Prolific (sync)")
            continue
        report.add("BONUS", f"{pid}: bonus {amount} {pay.currency} ({reason})")
    group = [
        r.participant_id
        for r in rows
        if r.outcome == "completed" and (r.participant_id, "GROUP") not in done
    ]
    if pay.participant_group_id and group:
        report.add("GROUP", f"participant group {pay.participant_group_id}: {len(group)} added")
    if dry_run:
        return report
    with _client(pay) as client:
        _send_actions(client, study=study, pay=pay, batches=batches, failed={
            r.participant_id: r.failed_attention for r in rows
        })  # fmt: skip
        _send_bonuses(client, study=study, pay=pay, bonuses=bonuses)
        if pay.participant_group_id and group:
            _claim(study, [(pid, "GROUP", Decimal(0), "completed") for pid in group])
            client.group_add(pay.participant_group_id, group)
            _done(study, group, "GROUP")
    return report


def _bonuses_due(*, study: Study, done: set[tuple[str, str]]) -> dict[str, tuple[Decimal, str]]:
    due: dict[str, tuple[Decimal, str]] = {}
    for line in bonus_plan(study=study):
        if (line.participant_id, "BONUS") in done:
            continue
        amount, reason = due.get(line.participant_id, (Decimal(0), ""))
        due[line.participant_id] = (
            amount + line.amount,
            f"{reason}; {line.reason}" if reason else line.reason,
        )
    return due


def _send_actions(
    client: ProlificClient,
    *,
    study: Study,
    pay: ProlificSettings,
    batches: dict[str, list[tuple[str, str, str]]],
    failed: dict[str, int],
) -> None:
    for action, people in batches.items():
        _claim(study, [(pid, action, Decimal(0), reason) for pid, _, reason in people])
        subs = [sub for _, sub, _ in people]
        if action == "APPROVE":
            client.bulk_approve(pay.prolific_study_id, subs)
        elif action == "SCREEN_OUT":
            client.screen_out(pay.prolific_study_id, subs)
        else:
            for pid, sub, _ in people:
                message = REJECT_MESSAGE.format(n=failed.get(pid, 0))
                client.reject(sub, message=message, category="FAILED_CHECK")
        _done(study, [pid for pid, _, _ in people], action)


def _send_bonuses(
    client: ProlificClient,
    *,
    study: Study,
    pay: ProlificSettings,
    bonuses: dict[str, tuple[Decimal, str]],
) -> None:
    if not bonuses:
        return
    _claim(study, [(pid, "BONUS", amount, why) for pid, (amount, why) in bonuses.items()])
    setup = client.bonus_setup(
        pay.prolific_study_id, [(pid, f"{amount:.2f}") for pid, (amount, _) in bonuses.items()]
    )
    client.bonus_pay(setup["id"])
    _done(study, list(bonuses), "BONUS")


def _claim(study: Study, rows: list[tuple[str, str, Decimal, str]]) -> None:
    """Record the actions before sending them: if two pays race, one claims and the other
    stops with an error instead of sending twice."""
    try:
        with transaction.atomic():
            ProlificAction.objects.bulk_create(
                ProlificAction(
                    study=study, participant_id=pid, kind=kind, amount=amount, reason=why[:500]
                )
                for pid, kind, amount, why in rows
            )
    except IntegrityError:
        raise ProlificError("another pay is sending the same actions: run pay again") from None


def _done(study: Study, participants: list[str], kind: str) -> None:
    ProlificAction.objects.filter(study=study, participant_id__in=participants, kind=kind).update(
        status=ProlificAction.Status.DONE
    )


__all__ = [
    "CompletedAction",
    "ProlificError",
    "ProlificNotReady",
    "Report",
    "prolific_pay",
    "prolific_publish",
    "prolific_sync",
    "prolific_token_set",
    "rater_release",
]

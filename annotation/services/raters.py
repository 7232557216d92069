"""Raters: entry (invitation or Prolific), consent, finishing, an admin's exclusion decision."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from completions.models import Study

from ..models import Assignment, Judgment, Pair, Rater


def _pseudonym(*, study: Study, external_id: str) -> str:
    """Keyed HMAC for panel ids (stable, not reversible); random for invitation raters."""
    if not external_id:
        return "r-" + secrets.token_hex(8)
    key = settings.PSEUDONYM_KEY.encode()
    digest = hmac.new(key, f"{study.pk}:{external_id}".encode(), hashlib.sha256).hexdigest()
    return "r-" + digest[:16]


class StudyFull(Exception):
    """The study's cap on active raters is reached: no new rater now."""


class ProlificMismatch(Exception):
    """This Prolific id has already started the study from another Prolific session."""


def rater_enter(
    *,
    study: Study,
    external_id: str = "",
    prolific_study_id: str = "",
    prolific_session_id: str = "",
    cohort: str = "crowd",
) -> Rater:
    """A new invitation rater, or the panel rater with this id (a returning one resumes).

    No cap, no Prolific check: for imports and tests. The rater pages use `rater_join`.
    """
    if not external_id:
        pseudonym = _pseudonym(study=study, external_id="")
        return Rater.objects.create(study=study, pseudonym=pseudonym, cohort=cohort)
    rater, _ = Rater.objects.get_or_create(
        study=study,
        external_id=external_id,
        defaults=_panel_fields(
            study=study,
            external_id=external_id,
            prolific_study_id=prolific_study_id,
            prolific_session_id=prolific_session_id,
            cohort=cohort,
        ),
    )
    return rater


def _panel_fields(
    *, study: Study, external_id: str, prolific_study_id: str, prolific_session_id: str, cohort: str
) -> dict[str, Any]:
    return {
        "pseudonym": _pseudonym(study=study, external_id=external_id),
        "source": "prolific",
        "prolific_study_id": prolific_study_id[:200],
        "prolific_session_id": prolific_session_id[:200],
        "cohort": cohort,
    }


def prolific_rater_resumable(
    *, study: Study, external_id: str, prolific_study_id: str, prolific_session_id: str
) -> Rater | None:
    """The existing rater with this Prolific id, if the visit proves it is the same session.

    Prolific sends the same STUDY_ID and SESSION_ID every time a participant reopens their own
    submission; someone who only knows (or guesses) another participant's PROLIFIC_PID does not
    have their SESSION_ID. Raises ProlificMismatch when the id exists with other session ids.
    """
    rater = Rater.objects.filter(study=study, external_id=external_id).first()
    if rater is None:
        return None
    same = (
        bool(prolific_session_id)
        and rater.prolific_session_id == prolific_session_id[:200]
        and rater.prolific_study_id == prolific_study_id[:200]
    )
    if not same:
        raise ProlificMismatch(external_id)
    return rater


def active_rater_count(*, study: Study, now: datetime | None = None) -> int:
    """Raters working now: consented, not finished, and holding a lease or seen recently."""
    from django.db.models import Exists, OuterRef, Q

    from ..models import Assignment

    now = now or timezone.now()
    recent = now - timedelta(seconds=study.lease_seconds)
    leasing = Assignment.objects.filter(
        rater=OuterRef("pk"), status=Assignment.Status.LEASED, lease_expires_at__gt=now
    )
    return (
        Rater.objects.filter(study=study, consented_at__isnull=False, finished_at__isnull=True)
        .filter(Q(consented_at__gt=recent) | Exists(leasing))
        .count()
    )


@transaction.atomic
def rater_join(
    *, study: Study, prolific: dict[str, Any] | None = None, cohort: str = "crowd"
) -> Rater:
    """A new rater who has just consented, within the study's cap on active raters.

    The study row is locked, so concurrent joins are counted one after the other and the cap
    holds exactly. The lock is FOR NO KEY UPDATE: it excludes other joins but not the foreign-key
    checks (FOR KEY SHARE) of every row inserted with this study, so a join never waits for the
    raters' answers in flight, nor they for it (FOR UPDATE conflicts with FOR KEY SHARE, so
    under a launch burst every join also queued behind every open submit). `prolific` carries
    pid / study_id / session_id of a Prolific visit; a participant who joins twice (two tabs)
    gets the same rater back. `cohort` is the entry
    link's cohort, recorded for a new rater (a returning one keeps theirs).
    """
    locked = Study.objects.select_for_update(no_key=True).get(pk=study.pk)
    if prolific:
        existing = prolific_rater_resumable(
            study=study,
            external_id=prolific["pid"],
            prolific_study_id=prolific["study_id"],
            prolific_session_id=prolific["session_id"],
        )
        if existing is not None:
            return rater_consent(rater=existing)
    cap = locked.max_active_raters
    if cap is not None and active_rater_count(study=locked) >= cap:
        raise StudyFull(study.slug)
    # One INSERT, consented: every statement here runs while the study's joins wait for the lock.
    # Under the lock no other join can add this participant, so no get_or_create is needed.
    fields: dict[str, Any] = {"cohort": cohort, "consented_at": timezone.now()}
    if prolific:
        fields.update(
            external_id=prolific["pid"],
            **_panel_fields(
                study=study,
                external_id=prolific["pid"],
                prolific_study_id=prolific["study_id"],
                prolific_session_id=prolific["session_id"],
                cohort=cohort,
            ),
        )
    else:
        fields["pseudonym"] = _pseudonym(study=study, external_id="")
    return Rater.objects.create(study=study, **fields)


def rater_consent(*, rater: Rater) -> Rater:
    if rater.consented_at is None:
        rater.consented_at = timezone.now()
        rater.save(update_fields=["consented_at"])
    return rater


def rater_finish(*, rater: Rater) -> Rater:
    """Mark the rater finished (once) and re-evaluate their quality flags."""
    from ..quality import rater_quality_update

    if rater.finished_at is None:
        rater.finished_at = timezone.now()
        rater.save(update_fields=["finished_at"])
    return rater_quality_update(rater=rater, with_timing=True)


def rater_set_exclusion(*, rater: Rater, override: bool | None) -> Rater:
    """An admin's decision: True exclude, False include, None follow the automatic flag."""
    rater.exclusion_override = override
    rater.save(update_fields=["exclusion_override"])
    return rater


@transaction.atomic
def rater_withdraw(*, rater: Rater, now: datetime | None = None) -> Rater:
    """The rater withdraws (the study allows it; the caller checks): every judgment of theirs
    is deleted, so it leaves every board, count and export, and the places they took in their
    pairs' quotas are freed for others; their assignments are released (an answer sent later
    is refused). Recorded once, with the time (`withdrawn_at`); the rater row stays, for the
    payment of the time worked."""
    locked = Rater.objects.select_for_update().get(pk=rater.pk)
    if locked.withdrawn_at is not None:
        return locked
    now = now or timezone.now()
    Assignment.objects.filter(
        rater=locked, status__in=[Assignment.Status.LEASED, Assignment.Status.SUBMITTED]
    ).update(status=Assignment.Status.RELEASED, lease_expires_at=now)
    judgments = Judgment.objects.filter(rater=locked)
    per_pair = Counter(judgments.filter(pair__isnull=False).values_list("pair_id", flat=True))
    for pair_id, n in sorted(per_pair.items()):  # one order, as every pair lock is taken
        Pair.objects.filter(pk=pair_id).update(n_judgments=F("n_judgments") - n)
    judgments.delete()
    locked.withdrawn_at = now
    locked.save(update_fields=["withdrawn_at"])
    return locked

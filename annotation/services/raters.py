"""Raters: entry (invitation or Prolific), consent, finishing, an admin's exclusion decision."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings
from django.utils import timezone

from completions.models import Study

from ..models import Rater


def _pseudonym(*, study: Study, external_id: str) -> str:
    """Keyed HMAC for panel ids (stable, not reversible); random for invitation raters."""
    if not external_id:
        return "r-" + secrets.token_hex(8)
    key = settings.PSEUDONYM_KEY.encode()
    digest = hmac.new(key, f"{study.pk}:{external_id}".encode(), hashlib.sha256).hexdigest()
    return "r-" + digest[:16]


def rater_enter(
    *,
    study: Study,
    external_id: str = "",
    prolific_study_id: str = "",
    prolific_session_id: str = "",
) -> Rater:
    """A new invitation rater, or the panel rater with this id (a returning one resumes)."""
    if not external_id:
        return Rater.objects.create(study=study, pseudonym=_pseudonym(study=study, external_id=""))
    rater, _ = Rater.objects.get_or_create(
        study=study,
        external_id=external_id,
        defaults={
            "pseudonym": _pseudonym(study=study, external_id=external_id),
            "source": "prolific",
            "prolific_study_id": prolific_study_id[:200],
            "prolific_session_id": prolific_session_id[:200],
        },
    )
    return rater


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

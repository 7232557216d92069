"""What recruitment tells the rater pages (core.care.PanelForRaters): a rater whose Prolific
submission came back returned or timed out (read by `prolific sync`) gets no more items and no
completion code."""

from __future__ import annotations

from annotation.models import Rater

from .models import ProlificSubmission
from .selectors import PROLIFIC_GONE


class ProlificPanel:
    def rater_left(self, rater: Rater, /) -> str | None:
        if not rater.external_id:  # not from Prolific: nothing to ask (and no query)
            return None
        latest = (
            ProlificSubmission.objects.filter(
                study_id=rater.study_id, participant_id=rater.external_id
            )
            .order_by("-started_at", "-pk")
            .values_list("status", flat=True)
            .first()
        )
        return PROLIFIC_GONE.get(latest) if latest is not None else None

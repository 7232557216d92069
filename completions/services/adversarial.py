"""Adversarial variants as contexts: choose the sources, store an accepted rewrite."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from completions import adversarial
from completions.models import DialogueContext, Study


def adversarial_sources_choose(*, study: Study, n: int, seed: int = 0) -> list[DialogueContext]:
    """``n`` regular contexts stratified by emotion and problem type (eligible ones only)."""
    candidates = [
        adversarial.SourceContext(c.pk, c.turns, c.emotion_type, c.problem_type)
        for c in DialogueContext.objects.filter(study=study, adversarial=False).only(
            "id", "turns", "emotion_type", "problem_type"
        )
    ]
    ids = adversarial.stratified_sources(candidates, n, seed=seed)
    by_id = DialogueContext.objects.in_bulk(ids)
    return [by_id[pk] for pk in ids]


def variant_external_id(source: DialogueContext, profile: str) -> str:
    return f"{source.external_id}-adv-{profile.lower()}"


def adversarial_context_create(
    *,
    source: DialogueContext,
    profile: str,
    raw_reply: str,
    provenance: dict[str, Any] | None = None,
) -> DialogueContext:
    """Check a rewrite against the schema made for the source and store it as an adversarial
    context (what normalising changed goes to its metadata).

    Raises adversarial.RewriteRejected (with every reason) when the reply breaks the schema.
    """
    rewrite = adversarial.rewrite_parse(raw_reply, source.turns, profile)
    if rewrite.normalised:
        provenance = {**(provenance or {}), "normalised": rewrite.normalised}
    return adversarial_turns_store(
        source=source, profile=profile, turns=rewrite.turns, provenance=provenance
    )


@transaction.atomic
def adversarial_turns_store(
    *,
    source: DialogueContext,
    profile: str,
    turns: list[dict[str, Any]],
    provenance: dict[str, Any] | None = None,
) -> DialogueContext:
    """Store accepted turns as a new adversarial context linked to ``source``. Storing the
    same source and profile twice returns the first variant: a re-run never doubles it."""
    hostility = [t["hostility"] for t in turns if t["speaker"] == "seeker"]
    variant, _ = DialogueContext.objects.get_or_create(
        study=source.study,
        external_id=variant_external_id(source, profile),
        defaults={
            "turns": [{"speaker": t["speaker"], "text": t["text"]} for t in turns],
            "emotion_type": source.emotion_type,
            "problem_type": source.problem_type,
            "source": source.source,
            "source_id": source.source_id,
            "adversarial": True,
            "escalation_profile": profile,
            "adversarial_source": source,
            "metadata": {
                "adversarial": {
                    "source_context": source.external_id,
                    "prompt_version": adversarial.PROMPT_VERSION,
                    "prompt_hash": adversarial.PROMPT_HASH,
                    "target_hostility": adversarial.target_hostility(profile, len(hostility)),
                    "hostility": hostility,
                    **(provenance or {}),
                }
            },
        },
    )
    return variant

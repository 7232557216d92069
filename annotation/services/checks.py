"""Quality checks made from a study's own material, and the admin's edits to them.

A check a script can pass tells nothing about a rater, and one that looks unlike the study's
items is recognised at a glance. So the checks are cut from the study itself:

- the conversation is one of the study's own contexts, drawn from those raters judge, as it
  is shown in a real item: turn count and length follow the real items by construction;
- a gold check sets the reply a system wrote for this conversation against the reply the
  same system wrote for another one (same voice, same care: the only difference is that one
  answers this seeker). The other conversation is chosen so that the expected reply is the
  longer one in half of the checks and the shorter one in the other half, and the expected
  side alternates, so neither length nor side predicts the answer (annotation/bots.py scores
  that). A study with a single usable context falls back to written weaker replies
  (dismissive, generic, off-role) of lengths either side of its own reply;
- an attention check is a real item whose second reply, in a supporter's voice, asks for an
  exact scale point; the point, the side of the instruction and which reply is longer vary.
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass
from itertools import cycle
from typing import Any

from django.db import transaction
from django.utils import timezone

from completions.models import Completion, DialogueContext, Study

from ..models import QualityCheckItem
from ..selectors import quality_item_count_forget
from .common import SCALE

MAX_TRIES = 40  # conversations tried for one check before a looser way (keeps opening quick)
MIN_CHECKS = 6  # enough that a rater's few checks are rarely the same as their neighbour's
GOLD_NOTE = "gold from {own}: its own reply against one written for {other}"
FALLBACK_NOTE = "gold from {own}: its own reply against a written weaker one"
ATTENTION_NOTE = "attention from {own}: asks for {choice}"

# Weaker replies for a study too small to set its own replies against each other: the rubric's
# low side (paper Table 2), short and long, so that either side of a reply's length is found.
WEAKER_REPLIES = (
    "OK. Try to stay positive.",
    "That happens to a lot of people. You'll be fine.",
    "That sucks. Anyway, lots of people go through this, so you'll probably get over it.",
    "I get that life can be hard sometimes. Just try to stay positive and things will work "
    "out eventually.",
    "Honestly, everyone goes through things like this at some point, and most of the time it "
    "is not nearly as serious as it feels. You should stop thinking about it so much, keep "
    "busy, work harder and stay positive like other people do, and it will sort itself out.",
    "Well, there are always two sides to every story, and from what you say it sounds like you "
    "might be overreacting a little. Lots of people have it much worse, so try to focus on the "
    "good things in your life instead. Make a list of goals, get up early, exercise every day "
    "and stop dwelling on the past. If you still feel bad in a few weeks, you could look up "
    "some tips online, but I am sure it is nothing to worry about.",
)
ATTENTION_REPLIES = (
    'Thank you for telling me this. To show you are reading carefully, please choose "{label}" '
    "for this item.",
    "I can hear how much this has been on your mind, and I want every reply here to get a "
    "careful read. So this one is a check rather than a real reply: to show you are reading "
    'closely, please choose "{label}" for this item, whatever you think of the other reply.',
)
_WORD = re.compile(r"[a-z']{4,}")


def quality_checks_wanted(*, study: Study) -> int:
    """How many checks a study with a check rate needs: one rater's share, at least six."""
    rate = study.quality_check_rate
    if rate <= 0:
        return 0
    per_rater = round(study.items_per_rater * rate / (1 - rate))
    return max(MIN_CHECKS, per_rater)


@dataclass
class _Material:
    contexts: list[DialogueContext]
    replies: dict[int, list[Completion]]  # context id -> its completions with a known text
    by_system: dict[int, list[Completion]]  # system id -> its completions with a known text
    names: dict[int, str]  # context id -> its external id


def _material(study: Study) -> _Material:
    judged = DialogueContext.objects.filter(study=study, pairs__isnull=False).distinct()
    contexts = list(judged.order_by("pk")) or list(study.contexts.order_by("pk"))
    replies: dict[int, list[Completion]] = {c.pk: [] for c in contexts}
    by_system: dict[int, list[Completion]] = {}
    known = Completion.objects.filter(context__study=study, text_unknown=False).order_by("pk")
    for completion in known:
        if completion.text.strip() and completion.context_id in replies:
            replies[completion.context_id].append(completion)
            by_system.setdefault(completion.system_id, []).append(completion)
    usable = [c for c in contexts if replies[c.pk]]
    return _Material(
        contexts=usable,
        replies={c.pk: replies[c.pk] for c in usable},
        by_system=by_system,
        names={c.pk: c.external_id for c in contexts},
    )


def _words(text: str) -> int:
    return len(text.split())


# Words any reply may use: they say nothing about which conversation a reply answers.
# fmt: off
_COMMON = frozenset([
    "that", "this", "with", "have", "what", "your", "from", "they", "them", "their", "there",
    "then", "than", "been", "were", "will", "would", "could", "should", "about", "just", "like",
    "really", "know", "feel", "feeling", "think", "some", "when", "more", "much", "very", "even",
    "also", "because", "into", "going", "things", "thing", "want", "make", "does", "doing", "sure",
    "well", "time", "good", "sounds", "seems", "help", "need", "people", "anything", "something",
    "everything", "here", "right", "maybe", "still", "said", "tell", "talk", "understand", "sorry",
    "hear", "glad", "okay",
])
# fmt: on


@functools.lru_cache(maxsize=4096)
def _content_words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower())) - _COMMON


def _overlap(text: str, context: DialogueContext) -> int:
    """How many of the conversation's content words the reply takes up."""
    said = _content_words(" ".join(t["text"] for t in context.turns))
    return len(said & _content_words(text))


def _mismatch(
    material: _Material,
    context: DialogueContext,
    expected_longer: bool,
    rng: random.Random,
    *,
    strict: bool,
) -> tuple[Completion, Completion] | None:
    """This context's reply and the same system's reply to another context, the expected
    (own) reply longer or shorter as asked. Own replies that take up more of this
    conversation's words come first; `strict` takes only an other reply that takes up fewer
    of them than the own one (it plainly answers someone else), else the fewest first."""
    own_replies = material.replies[context.pk][:]
    rng.shuffle(own_replies)
    own_replies.sort(key=lambda own: -_overlap(own.text, context))
    for own in own_replies:
        own_overlap = _overlap(own.text, context)
        if strict and own_overlap < 2:
            continue  # strict: only a reply that takes up this conversation's own words
        others = [
            o
            for o in material.by_system[own.system_id]
            if o.context_id != context.pk
            and o.text.strip() != own.text.strip()
            and (_words(own.text) > _words(o.text)) == expected_longer
            and _words(own.text) != _words(o.text)
            and (not strict or _overlap(o.text, context) < own_overlap)
        ]
        if not others:
            continue
        rng.shuffle(others)
        others.sort(key=lambda o: _overlap(o.text, context))
        return own, others[0]
    return None


def _fallback(
    material: _Material, context: DialogueContext, expected_longer: bool, rng: random.Random
) -> tuple[Completion, str] | None:
    for own in rng.sample(material.replies[context.pk], len(material.replies[context.pk])):
        n = _words(own.text)
        fits = [w for w in WEAKER_REPLIES if (n > _words(w)) == expected_longer and n != _words(w)]
        if fits:  # the nearest length: a weaker reply as long as real ones, not an outlier
            return own, min(fits, key=lambda w: abs(_words(w) - n))
    return None


def _stored(expected: str, good: str, bad: str) -> tuple[str, str]:
    return (good, bad) if expected == "a" else (bad, good)


def _gold_items(
    study: Study, material: _Material, n: int, rng: random.Random
) -> list[QualityCheckItem]:
    # Every combination of side and length in turn, shuffled within each round of four.
    plans: list[tuple[str, bool]] = []
    while len(plans) < n:
        block = [("a", True), ("a", False), ("b", True), ("b", False)]
        rng.shuffle(block)
        plans.extend(block)
    contexts = material.contexts[:]
    rng.shuffle(contexts)
    turn = cycle(contexts)
    items = []
    for expected, expected_longer in plans[:n]:
        # The study's own replies first, plainly mismatched where any conversation allows;
        # written weaker replies only failing that.
        for mode in ("strict", "loose", "written"):
            found = None
            for _ in range(min(len(contexts), MAX_TRIES)):
                context = next(turn)
                found = _gold_item(
                    study, material, context, expected, expected_longer, rng, mode=mode
                )
                if found is not None:
                    items.append(found)
                    break
            if found is not None:
                break
    return items


def _gold_item(
    study: Study,
    material: _Material,
    context: DialogueContext,
    expected: str,
    expected_longer: bool,
    rng: random.Random,
    *,
    mode: str,
) -> QualityCheckItem | None:
    written = mode == "written"
    pair = (
        None
        if written
        else _mismatch(material, context, expected_longer, rng, strict=mode == "strict")
    )
    if pair is not None:
        own, other = pair
        other_name = material.names[other.context_id]
        bad, note = other.text, GOLD_NOTE.format(own=context.external_id, other=other_name)
    elif not written:
        return None
    else:
        fallback = _fallback(material, context, expected_longer, rng)
        if fallback is None:
            return None
        own, bad = fallback
        note = FALLBACK_NOTE.format(own=context.external_id)
    text_a, text_b = _stored(expected, own.text, bad)
    return QualityCheckItem(
        study=study,
        kind=QualityCheckItem.Kind.GOLD,
        turns=context.turns,
        text_a=text_a,
        text_b=text_b,
        expected=expected,
        note=note[:300],
    )


def _attention_plans(n: int, rng: random.Random) -> list[tuple[str, bool, bool, int]]:
    """(expected side, its reply the longer?, instruction on the expected side?, point) for
    each attention check. In each pair of checks the asked side and the longer reply differ
    from one check to the other, so no side or length bot passes both; the strength asked
    for and the instruction's side vary on their own."""
    plans: list[tuple[str, bool, bool, int]] = []
    while len(plans) < n:
        pairs = [[("a", True), ("b", False)], [("a", False), ("b", True)]]
        rng.shuffle(pairs)
        for side, longer in pairs[0] + pairs[1]:
            strong = rng.random() < 0.5
            point = (1 if strong else 2) if side == "a" else (5 if strong else 4)
            plans.append((side, longer, rng.random() < 0.5, point))
    return plans[:n]


def _attention_item(
    study: Study, context: DialogueContext, real: str, plan: tuple[str, bool, bool, int]
) -> QualityCheckItem | None:
    side, longer, on_side, point = plan
    other = "b" if side == "a" else "a"
    # The instruction's side is free: the planned one first, else the other one.
    tries = [(s, t) for s in (on_side, not on_side) for t in ATTENTION_REPLIES]
    for instruction_on_side, template in tries:
        instruction_side = side if instruction_on_side else other
        instruction = template.format(label=SCALE[point])
        text_a, text_b = _stored(instruction_side, instruction, real)
        expected_text, other_text = (text_a, text_b) if side == "a" else (text_b, text_a)
        n_expected, n_other = _words(expected_text), _words(other_text)
        if n_expected != n_other and (n_expected > n_other) == longer:
            note = ATTENTION_NOTE.format(own=context.external_id, choice=SCALE[point])
            return QualityCheckItem(
                study=study,
                kind=QualityCheckItem.Kind.ATTENTION,
                turns=context.turns,
                text_a=text_a,
                text_b=text_b,
                expected=side,
                expected_choice=point,
                note=note[:300],
            )
    return None


def _attention_items(
    study: Study, material: _Material, n: int, rng: random.Random
) -> list[QualityCheckItem]:
    contexts = rng.sample(material.contexts, len(material.contexts))
    turn = cycle(contexts)
    items = []
    for plan in _attention_plans(n, rng):
        for _ in range(len(contexts)):  # the first conversation with a reply that fits
            context = next(turn)
            replies = rng.sample(material.replies[context.pk], len(material.replies[context.pk]))
            found = next(
                (
                    item
                    for reply in replies
                    if (item := _attention_item(study, context, reply.text, plan)) is not None
                ),
                None,
            )
            if found is not None:
                items.append(found)
                break
    return items


@transaction.atomic
def quality_items_seed_from_study(
    *, study: Study, n: int | None = None, seed: int | None = None
) -> list[QualityCheckItem]:
    """Make `n` checks (default: `quality_checks_wanted`) from the study's own contexts and
    replies, about a third of them attention checks; [] when its material has no context
    with a reply of known text (no check can be made)."""
    n = n if n is not None else max(quality_checks_wanted(study=study), MIN_CHECKS)
    material = _material(study)
    if not material.contexts or n <= 0:
        return []
    rng = random.Random(seed if seed is not None else f"{study.pk}-{study.created_at}-{n}")
    # A third attention checks, as the rubric's seeds had (5 gold, 2 attention): six checks
    # are four gold ones, one of each side-and-length combination, and two attention ones.
    n_attention = max(1, round(n / 3)) if n >= 3 else 0
    created = _gold_items(study, material, n - n_attention, rng)
    created += _attention_items(study, material, n_attention, rng)
    items = QualityCheckItem.objects.bulk_create(created)
    quality_item_count_forget(study=study)
    return items


def quality_checks_ensure(*, study: Study) -> list[QualityCheckItem]:
    """A study with a check rate and no check in use gets its checks now (see the module)."""
    if study.quality_check_rate <= 0:
        return []
    if QualityCheckItem.objects.filter(study=study, retired_at__isnull=True).exists():
        return []
    return quality_items_seed_from_study(study=study)


def quality_item_save(*, item: QualityCheckItem) -> QualityCheckItem:
    """An admin's new or edited check. Answers given before an edit keep their result."""
    if item.kind == QualityCheckItem.Kind.GOLD:
        item.expected_choice = None
    elif item.expected_choice:
        item.expected = "a" if item.expected_choice < 3 else "b"
    item.save()
    quality_item_count_forget(study=item.study)
    return item


def quality_item_retire(*, item: QualityCheckItem, retired: bool = True) -> QualityCheckItem:
    """Retire a check (handed out no more; its answers stay) or bring it back."""
    item.retired_at = timezone.now() if retired else None
    item.save(update_fields=["retired_at"])
    quality_item_count_forget(study=item.study)
    return item


def turns_from_text(text: str) -> list[dict[str, Any]]:
    """An admin's conversation, one turn a line as "seeker: ..." or "supporter: ..."."""
    turns = []
    for line in text.splitlines():
        speaker, sep, said = line.partition(":")
        if not line.strip():
            continue
        if not sep or speaker.strip().lower() not in ("seeker", "supporter") or not said.strip():
            raise ValueError(
                f'each line is "seeker: ..." or "supporter: ...", not "{line.strip()[:60]}"'
            )
        turns.append({"speaker": speaker.strip().lower(), "text": said.strip()})
    if not turns or turns[-1]["speaker"] != "seeker":
        raise ValueError("the conversation ends with the seeker's turn, as a real item does")
    return turns


def turns_to_text(turns: list[dict[str, Any]]) -> str:
    return "\n".join(f"{t['speaker']}: {t['text']}" for t in turns)

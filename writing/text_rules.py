"""Counting a reply the way the writing page does (static/js/writer.js mirrors these rules).

Words: runs of non-space characters. Sentences: runs of text ended by ., ! or ? (a run of
them counts once) plus a trailing unterminated fragment, so "I hear you. Tell me more" is two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SENTENCE_END = re.compile(r"[.!?…]+(?=\s|$)")


def word_count(text: str) -> int:
    return len(text.split())


def sentence_count(text: str) -> int:
    parts = [part for part in _SENTENCE_END.split(text) if part.strip()]
    return len(parts)


@dataclass(frozen=True)
class Limits:
    min_words: int
    max_words: int
    max_chars: int
    band_min_words: int
    band_max_words: int
    band_min_sentences: int
    band_max_sentences: int


def limit_errors(text: str, limits: Limits) -> list[str]:
    """Why the server refuses a text (empty list: within the hard limits)."""
    words = word_count(text)
    if not text.strip():
        return ["Please write a reply before submitting."]
    errors = []
    if words < limits.min_words:
        errors.append(
            f"Your reply has {words} word{'s' if words != 1 else ''}; "
            f"please write at least {limits.min_words}."
        )
    if words > limits.max_words:
        errors.append(f"Your reply has {words} words; the limit is {limits.max_words}.")
    if len(text) > limits.max_chars:
        errors.append(f"Your reply has {len(text)} characters; the limit is {limits.max_chars}.")
    return errors


def limit_note(text: str, limits: Limits) -> str:
    """A warning at the hard limit the submit enforces ('' below it); static/js/writer.js
    says the same live."""
    words = word_count(text)
    if words > limits.max_words:
        return (
            f"Over the limit: {words} words, at most {limits.max_words} can be submitted. "
            "Please shorten it."
        )
    if words == limits.max_words:
        return f"At the limit: {limits.max_words} words is the most a reply may have."
    return ""


def band_note(text: str, limits: Limits) -> str:
    """A gentle note when the text is outside the suggested band ('' inside it)."""
    words, sentences = word_count(text), sentence_count(text)
    if not text.strip():
        return ""
    if words < limits.band_min_words:
        return f"A little short: about {limits.band_min_words}-{limits.band_max_words} words suit."
    if words > limits.band_max_words:
        return f"A little long: about {limits.band_min_words}-{limits.band_max_words} words suit."
    if sentences > limits.band_max_sentences:
        return f"Consider {limits.band_min_sentences}-{limits.band_max_sentences} sentences."
    return ""

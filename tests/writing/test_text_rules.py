"""Counting rules, limits, behaviour clamping and flags (pure functions)."""

from __future__ import annotations

from writing.behaviour import behaviour_clean, behaviour_flags
from writing.text_rules import (
    Limits,
    band_note,
    limit_errors,
    sentence_count,
    word_count,
)

LIMITS = Limits(
    min_words=3,
    max_words=20,
    max_chars=200,
    band_min_words=5,
    band_max_words=12,
    band_min_sentences=1,
    band_max_sentences=2,
)


def test_words_and_sentences_are_counted_like_the_page():
    assert word_count("  I hear you.  Tell me more ") == 6
    assert sentence_count("I hear you. Tell me more") == 2
    assert sentence_count("Wait... really?! Yes.") == 3
    assert sentence_count("The score was 3.5 today") == 1
    assert sentence_count("") == 0


def test_hard_limits_refuse_with_a_reason():
    assert limit_errors("   ", LIMITS) == ["Please write a reply before submitting."]
    assert "at least 3" in limit_errors("Too short", LIMITS)[0]
    assert "limit is 20" in limit_errors("word " * 21, LIMITS)[0]
    assert limit_errors("This one is fine to send.", LIMITS) == []


def test_the_band_note_is_gentle_and_only_outside_the_band():
    assert band_note("Short one here.", LIMITS).startswith("A little short")
    assert band_note("One two three four five six. Seven eight.", LIMITS) == ""
    assert band_note("One two three. Four five six. Seven eight.", LIMITS).startswith("Consider")
    assert band_note("word " * 15, LIMITS).startswith("A little long")


def test_behaviour_is_clamped_to_what_could_have_happened():
    raw = {"measured": "1", "active_ms": "999999999", "keystrokes": "-5", "inserted_chars": "x"}
    clean = behaviour_clean(raw, elapsed_ms=30_000, text_chars=100)
    assert clean.active_ms == 30_000 and clean.keystrokes == 0 and clean.inserted_chars == 0
    assert clean.measured


def test_flags_pasted_fast_and_insert_after_away():
    typed = behaviour_clean(
        {"measured": "1", "active_ms": "40000", "keystrokes": "130"},
        elapsed_ms=60_000,
        text_chars=120,
    )
    assert behaviour_flags(typed, text_chars=120) == []
    pasted = behaviour_clean(
        {"measured": "1", "active_ms": "3000", "inserted_chars": "60", "longest_insert": "60"},
        elapsed_ms=60_000,
        text_chars=120,
    )
    assert behaviour_flags(pasted, text_chars=120) == ["pasted", "fast"]
    away = behaviour_clean(
        {
            "measured": "1",
            "active_ms": "30000",
            "inserted_chars": "30",
            "longest_insert": "30",
            "insert_after_away": "1",
        },
        elapsed_ms=60_000,
        text_chars=120,
    )
    assert behaviour_flags(away, text_chars=120) == ["away_insert"]
    assert behaviour_flags(behaviour_clean({}, elapsed_ms=1, text_chars=5), text_chars=5) == [
        "unmeasured"
    ]

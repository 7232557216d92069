"""Writing behaviour: clamp what the browser reports and derive the review flags (no Django).

The browser measures (static/js/writer.js); nothing it sends is trusted beyond plausibility:
every number is clamped to what could have happened since the context was first leased.
Flags are for a human reviewer; they never reject anything by themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

MAX_COUNT = 1_000_000
PASTED_SHARE = 0.5  # share of the text's characters inserted without typing
# Sustained typing beyond ~15 characters per active second (about 180 words a minute) is
# beyond what people type; a text produced that fast most likely came from elsewhere.
MAX_CHARS_PER_SECOND = 15.0
LONG_INSERT_CHARS = 20  # an insertion this long right after the page was away

FLAG_TEXT = {
    "pasted": "At least half of the text was inserted without typing (paste, drop, autofill).",
    "fast": "Implausibly fast: more than 15 characters per second of active writing.",
    "away_insert": "A long insertion came right after the page had lost focus.",
    "unmeasured": "No behaviour was recorded (JavaScript off or blocked).",
}


@dataclass(frozen=True)
class Behaviour:
    measured: bool = False
    active_ms: int = 0
    keystrokes: int = 0
    inserted_chars: int = 0
    focus_lost: int = 0
    longest_insert: int = 0
    insert_after_away: bool = False

    def fields(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("measured")
        return data


def _int(value: object, upper: int) -> int:
    try:
        number = int(str(value).strip() or 0)
    except (TypeError, ValueError):
        return 0
    return max(0, min(number, upper))


def behaviour_clean(raw: Mapping[str, object], *, elapsed_ms: int, text_chars: int) -> Behaviour:
    """Parse and clamp the hidden fields of the writing form."""
    inserted = _int(raw.get("inserted_chars"), MAX_COUNT)
    return Behaviour(
        measured=str(raw.get("measured", "")) == "1",
        active_ms=_int(raw.get("active_ms"), max(0, elapsed_ms)),
        keystrokes=_int(raw.get("keystrokes"), MAX_COUNT),
        inserted_chars=inserted,
        focus_lost=_int(raw.get("focus_lost"), MAX_COUNT),
        longest_insert=min(_int(raw.get("longest_insert"), MAX_COUNT), inserted),
        insert_after_away=str(raw.get("insert_after_away", "")) == "1",
    )


def behaviour_flags(behaviour: Behaviour, *, text_chars: int) -> list[str]:
    """Flag names (keys of FLAG_TEXT) for the reviewer, in a fixed order."""
    if not behaviour.measured:
        return ["unmeasured"]
    flags = []
    if text_chars and behaviour.inserted_chars >= PASTED_SHARE * text_chars:
        flags.append("pasted")
    typed_chars = max(0, text_chars - behaviour.inserted_chars)
    seconds = behaviour.active_ms / 1000
    if typed_chars and (seconds <= 0 or typed_chars / seconds > MAX_CHARS_PER_SECOND):
        flags.append("fast")
    if behaviour.insert_after_away and behaviour.longest_insert >= LONG_INSERT_CHARS:
        flags.append("away_insert")
    return flags

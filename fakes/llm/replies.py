"""Deterministic, plausible replies: supportive turns, judge verdicts, schema-shaped objects.

Everything derives from a hash of the prompt and the model name, so a re-run gets the same
reply and a demo judge run produces a real-looking leaderboard.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

OPENERS = [
    "That sounds really hard, and it makes sense that you feel {feeling}.",
    "I'm so sorry you're carrying this right now; feeling {feeling} like that is exhausting.",
    "I hear you, and it sounds like this has left you feeling {feeling}.",
    "Thank you for telling me this. It's completely understandable to feel {feeling}.",
    "Okay.",
    "Lots of people go through this, so try not to worry too much.",
]
FOLLOW_UPS = [
    "What feels heaviest about it today?",
    "Would it help to talk through what happened?",
    "You don't have to figure it all out at once.",
    "Is there someone close to you who knows what you're going through?",
    "Just stay positive and it will work out.",
    "",
]
FEELINGS = ["overwhelmed", "stuck", "hurt", "anxious", "alone", "worn out"]
WARM = re.compile(
    r"\b(sorry|hear you|sounds|understandable|feel|feeling|makes sense|thank you|with you)\b", re.I
)
COLD = re.compile(r"\b(just|anyway|lots of people|stay positive|get over)\b", re.I)
AXES = ("H", "E", "A", "R", "T")


def digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def supportive_reply(model: str, prompt: str) -> str:
    """A 1-3 sentence supporter turn; some models (by their name's hash) write better ones."""
    h = digest(model, prompt)
    quality = digest(model) % 3  # 0: strong, 1: mixed, 2: weak
    opener_pool = OPENERS[:4] if quality == 0 else OPENERS if quality == 1 else OPENERS[3:]
    follow_pool = FOLLOW_UPS[:4] if quality == 0 else FOLLOW_UPS
    opener = opener_pool[h % len(opener_pool)].format(feeling=FEELINGS[(h >> 8) % len(FEELINGS)])
    follow = follow_pool[(h >> 16) % len(follow_pool)]
    return f"{opener} {follow}".strip()


def _score(text: str) -> float:
    words = len(text.split())
    warmth = len(WARM.findall(text)) - 1.5 * len(COLD.findall(text))
    return warmth + 0.5 * ("?" in text) - abs(words - 35) / 25


def _between(prompt: str, tag: str) -> str:
    match = re.search(rf"<{tag}>(.*?)</{tag}>", prompt, re.S)
    return match.group(1).strip() if match else ""


def _replies(prompt: str) -> tuple[str, str]:
    """The two replies a judge prompt shows: from its JSON material block (heart-judge-v2 on),
    or from the <response_a>/<response_b> tags of the first template."""
    try:
        parts = json.loads(prompt)
    except ValueError:
        parts = [prompt]
    for part in parts:
        content = part.get("content", "") if isinstance(part, dict) else str(part)
        match = re.search(r"<material>\n(.*)\n</material>", content, re.S)
        if match:
            material = json.loads(match.group(1))
            return material["response_a"], material["response_b"]
    return _between(prompt, "response_a"), _between(prompt, "response_b")


def judge_verdict(model: str, prompt: str, bias: float) -> dict[str, Any]:
    """Prefer the warmer, well-sized reply, with a little noise and a first-position pull."""
    first, second = _replies(prompt)
    noise = (digest(model, prompt) % 1000) / 1000 - 0.5
    diff = _score(first) - _score(second) + bias + 0.6 * noise
    winner = "a" if diff >= 0 else "b"
    strength = 1 + min(4, int(abs(diff) * 1.5))
    axes = {}
    for i, axis in enumerate(AXES):
        axis_noise = (digest(model, prompt, axis) % 1000) / 1000 - 0.5
        axis_diff = diff + axis_noise * (1 + i * 0.2)
        if abs(axis_diff) < 0.4:
            axes[axis] = {"winner": "none", "strength": 0}
        else:
            axes[axis] = {
                "winner": "a" if axis_diff > 0 else "b",
                "strength": 1 + min(4, int(abs(axis_diff))),
            }
    better = "Response A" if winner == "a" else "Response B"
    rationale = (
        f"{better} acknowledges the seeker's feelings more specifically and stays closer to "
        "what they said, without padding."
    )
    return {"rationale": rationale, "winner": winner, "strength": strength, "axes": axes}


def from_schema(schema: dict[str, Any], seed: int) -> Any:
    """Any object valid for a (simple) JSON schema, chosen by the seed."""
    if "enum" in schema:
        return schema["enum"][seed % len(schema["enum"])]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {
            name: from_schema(sub, seed >> 3 or seed + i)
            for i, (name, sub) in enumerate(props.items())
        }
    if kind == "array":
        return [from_schema(schema.get("items", {}), seed)] if schema.get("minItems") else []
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0.5))
    if kind == "boolean":
        return bool(seed % 2)
    if kind == "string":
        return "fake"
    return None


def breaking(schema: dict[str, Any]) -> dict[str, Any]:
    """Valid JSON that breaks the schema: the required fields are missing."""
    return {"unexpected": True, "note": "this reply ignores the schema"}


def reply_text(model: str, prompt: str, schema: dict[str, Any] | None, bias: float) -> str:
    if schema is None:
        return supportive_reply(model, prompt)
    if "winner" in schema.get("properties", {}):
        return json.dumps(judge_verdict(model, prompt, bias))
    from .strategy_replies import reply as strategy_reply  # labelling and rewrites

    special = strategy_reply(model, prompt, schema)
    if special is not None:
        return special
    return json.dumps(from_schema(schema, digest(model, prompt)))

"""Fake replies for strategy labelling and adversarial rewrites (deterministic).

Labels: keyword rules over the response text, with evidence copied from it. Rewrites: every
seeker turn rewritten with the hostility asked for, supporter turns copied.

A model name can ask for an odd reply (tests): ``offtaxonomy`` adds a strategy outside the
taxonomy and ``brokenrule`` changes a supporter turn (both break the schema sent);
``badevidence`` quotes words the response never says (the schema allows it: the evidence is
set aside). With ``-once`` in the name only the first reply is odd and the repair (whose
prompt carries the engine's "did not match" note) comes back valid.
"""

from __future__ import annotations

import json
import re
from typing import Any

REPAIR_NOTE = "did not match the required JSON schema"

RULES: list[tuple[str, str]] = [
    (
        "Reflective Statements",
        r"[^.?!]*\b(sounds like|it sounds|you feel|you're feeling)\b[^.?!]*[.?!]?",
    ),
    (
        "Emotional Validation",
        r"[^.?!]*\b(makes sense|understandable|normal to feel|of course)\b[^.?!]*[.?!]?",
    ),
    ("Clarification", r"[^.?!]*\?"),
    ("Normalize Experiences", r"[^.?!]*\b(lots of people|many people|common)\b[^.?!]*[.?!]?"),
    ("Offer Hope", r"[^.?!]*\b(will work out|get through|better)\b[^.?!]*[.?!]?"),
    ("Affirmation", r"[^.?!]*\b(thank you for|courage|strong|resilien\w*)\b[^.?!]*[.?!]?"),
    ("Suggest Options", r"[^.?!]*\b(could|might|option|try)\b[^.?!]*[.?!]?"),
    ("Emotional Validation", r"[^.?!]*\b(sorry|hear you)\b[^.?!]*[.?!]?"),
]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _user_text(prompt: str, marker: str) -> str:
    try:
        parts = _strings(json.loads(prompt))
    except ValueError:
        parts = [prompt]
    return next((p for p in parts if marker in p), "")


def _broken(model: str, flag: str, prompt: str) -> bool:
    if flag not in model:
        return False
    return not ("-once" in model and REPAIR_NOTE in prompt)


def label_reply(model: str, prompt: str, names: list[str]) -> str:
    user = _user_text(prompt, "Response to label:")
    match = re.search(r"<<<\n(.*)\n>>>", user, re.S)
    text = match.group(1) if match else ""
    labels = {n: {"status": "absent", "p": 0.05, "evidence": None} for n in names}
    for name, pattern in RULES:
        found = re.search(pattern, text, re.I)
        if found and name in labels and labels[name]["status"] != "present":
            labels[name] = {"status": "present", "p": 0.9, "evidence": found.group(0).strip()}
    if _broken(model, "offtaxonomy", prompt):
        labels["Self-disclosure"] = {"status": "present", "p": 0.7, "evidence": None}
    if _broken(model, "badevidence", prompt):
        labels[names[0]] = {"status": "present", "p": 0.8, "evidence": "words never said"}
    return json.dumps({"reasoning": "Matched phrases to the taxonomy.", "labels": labels})


HOSTILE = [
    "Okay, I guess. {base}",
    "I'm not sure talking helps. {base}",
    "Honestly, I doubt you get it. {base}",
    "Stop with the scripted questions. {base}",
    "You clearly don't care, so why pretend? {base} Nothing you say will help.",
]


def rewrite_reply(model: str, prompt: str) -> str:
    user = _user_text(prompt, "Conversation (JSON):")
    targets_line = re.search(r"Target hostility per seeker turn, in order: ([\d, ]*)", user)
    targets = [int(t) for t in re.findall(r"\d+", targets_line.group(1))] if targets_line else []
    conversation = user.split("Conversation (JSON):\n", 1)[-1].split("\n\nReturn ", 1)[0]
    try:
        turns = json.loads(conversation)
    except ValueError:
        turns = []
    out: list[dict[str, Any]] = []
    k = 0
    for turn in turns:
        if turn["speaker"] == "seeker":
            level = targets[k] if k < len(targets) else 10
            style = HOSTILE[min(len(HOSTILE) - 1, level // 2)]
            out.append(
                {"speaker": "seeker", "text": style.format(base=turn["text"]), "hostility": level}
            )
            k += 1
        else:
            out.append({"speaker": "supporter", "text": turn["text"], "hostility": None})
    if _broken(model, "brokenrule", prompt) and out:
        out[0]["text"] = "Hey. " + out[0]["text"]
    return json.dumps({"turns": {f"turn_{i}": turn for i, turn in enumerate(out, start=1)}})


def reply(model: str, prompt: str, schema: dict[str, Any]) -> str | None:
    """The reply for a labelling or rewrite schema; None for any other schema."""
    props = schema.get("properties", {})
    if "labels" in props:
        names = list(props["labels"].get("properties", {}))
        return label_reply(model, prompt, names)
    if "turns" in props:
        return rewrite_reply(model, prompt)
    return None

"""Small study files as a study admin would upload them."""

from __future__ import annotations

import json

TURNS = [
    {"speaker": "supporter", "text": "Hi, what is on your mind today?"},
    {"speaker": "seeker", "text": "I lost my job last week and I feel like a failure."},
]
SYSTEMS = [("model-alpha", "alpha"), ("model-beta", "beta"), ("model-gamma", "gamma")]


def contexts_jsonl(n: int = 3) -> bytes:
    lines = [
        {"id": f"ctx-{i}", "turns": TURNS, "emotion_type": "sadness", "source": "test"}
        for i in range(n)
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def completions_jsonl(n: int = 3, systems=SYSTEMS) -> bytes:
    lines = [
        {
            "context_id": f"ctx-{i}",
            "system": name,
            "family": family,
            "kind": "model",
            "text": f"{name} says: losing a job is hard, and it is not a verdict on you ({i}).",
        }
        for i in range(n)
        for name, family in systems
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def bad_contexts_jsonl() -> bytes:
    good = json.dumps({"id": "ok-1", "turns": TURNS})
    return (good + "\n" + '{"id": "broken", "turns": "not a list"}\n').encode()

"""What each kind of material file looks like, and which kind a file is.

The studio's material page shows an example line of each kind and links its JSON Schema
(`/formats/<kind>.schema.json`, served from the same definitions as docs/formats/), and an
upload is recognised from its first bytes: "this looks like JSON Lines contexts". Recognising
needs only the keys a kind requires (contexts: `turns`; completions: `text` and `system`;
judgments: `system_a`, `system_b` and `winner`; ESConv: a JSON list of objects with a `dialog`
list), so a file the importer would accept is always recognised as its kind.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from studio.models import ImportKind

HEAD_BYTES = 64 * 1024  # enough for the first line or conversation of any file we take

KIND_WORDS: dict[str, str] = {
    ImportKind.ESCONV: "an ESConv JSON file (a list of conversations)",
    ImportKind.CONTEXTS: "JSON Lines contexts",
    ImportKind.COMPLETIONS: "JSON Lines completions",
    ImportKind.JUDGMENTS: "JSON Lines judgments",
}

# One line of each kind, as a user would write it (tests import each of them for real).
EXAMPLES: dict[str, str] = {
    ImportKind.ESCONV: (
        '[{"id": "conv-1", "emotion_type": "anxiety", "problem_type": "job crisis", "dialog": ['
        '{"speaker": "seeker", "content": "Hi, can I talk to someone?"}, '
        '{"speaker": "supporter", "content": "Of course. What is on your mind?", '
        '"annotation": {"strategy": "Question"}}, '
        '{"speaker": "seeker", "content": "I lost my job today."}, '
        '{"speaker": "supporter", "content": "I am so sorry. That is a big shock."}, '
        '{"speaker": "seeker", "content": "I feel hopeless and I do not know how to tell my '
        'family."}, '
        '{"speaker": "supporter", "content": "That is a heavy thing to carry alone.", '
        '"annotation": {"strategy": "Reflection of feelings"}}]}]'
    ),
    ImportKind.CONTEXTS: (
        '{"id": "ctx-1", "turns": [{"speaker": "seeker", "text": "I lost my job today."}, '
        '{"speaker": "supporter", "text": "I am so sorry. How are you holding up?"}, '
        '{"speaker": "seeker", "text": "Not well. I do not know how to tell my family."}], '
        '"emotion_type": "anxiety", "problem_type": "job crisis"}'
    ),
    ImportKind.COMPLETIONS: (
        '{"context_id": "ctx-1", "system": "my-model", "family": "llama", "kind": "model", '
        '"text": "That is a lot to carry. What worries you most about telling them?"}'
    ),
    ImportKind.JUDGMENTS: (
        '{"context_id": "ctx-1", "system_a": "my-model", "system_b": "other-model", '
        '"judge": "rater-7", "winner": "a", "strength": 1}'
    ),
}


def _any_case(word: str) -> str:
    """A JSON Schema (ECMA-262) pattern matching `word` in any case."""
    return "".join(f"[{c.upper()}{c.lower()}]" for c in word)


SPEAKER_PATTERN = (
    r"^\s*(" + "|".join(_any_case(w) for w in ("seeker", "supporter", "speaker", "listener"))
) + r")\s*$"
OPTIONAL_TEXT = {"type": ["string", "null"]}

# ESConv has no format of ours to generate a schema from (completions.esconv reads it by hand):
# this states what that reader accepts.
ESCONV_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://heart-studio.example/formats/esconv.schema.json",
    "description": (
        "ESConv conversations: one JSON list (ESConv.json, esconv-dialogs.json, or "
        "FailedESConv.json with speaker/listener). Consecutive utterances of one speaker are "
        "merged into one turn; the import screens the conversations into contexts and keeps "
        "each chosen turn's original supporter reply (docs/screening.md)."
    ),
    "type": "array",
    "items": {
        "type": "object",
        "required": ["dialog"],
        "properties": {
            "id": {"description": "the conversation's id; without one, a hash of its text"},
            "emotion_type": OPTIONAL_TEXT,
            "problem_type": OPTIONAL_TEXT,
            "experience_type": OPTIONAL_TEXT,
            "situation": OPTIONAL_TEXT,
            "dialog": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["speaker", "content"],
                    "properties": {
                        "speaker": {
                            "type": "string",
                            "pattern": SPEAKER_PATTERN,
                            "description": "seeker or supporter (speaker or listener), any case",
                        },
                        "content": {"type": "string"},
                        "annotation": {
                            "type": ["object", "null"],
                            "properties": {"strategy": OPTIONAL_TEXT, "feedback": {}},
                        },
                    },
                },
            },
        },
    },
}


@dataclass(frozen=True)
class Detection:
    """What a file looks like: `kind` (None when it is none of ours) and why, in words."""

    kind: str | None
    description: str

    @property
    def words(self) -> str:
        return KIND_WORDS[self.kind] if self.kind else self.description


def detect_kind(head: bytes) -> Detection:
    """Recognise a material file from its first bytes (HEAD_BYTES are plenty)."""
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not just a character cut at the end of the head
            return Detection(None, "it is not UTF-8 text")
        text = head[: exc.start].decode("utf-8-sig")
    text = text.lstrip()
    if not text:
        return Detection(None, "the file is empty")
    if text[0] == "[":
        return _detect_list(text)
    if text[0] == "{":
        return _detect_object(text.split("\n", 1)[0].strip())
    return Detection(None, f"it is not JSON (it starts with “{text[:30].splitlines()[0]}”)")


def _detect_list(text: str) -> Detection:
    first = _first_value(text, 1)
    keys = set(first) if isinstance(first, dict) else _keys_seen(text)
    if "dialog" in keys:
        return Detection(ImportKind.ESCONV, "a JSON list of conversations with a 'dialog'")
    if {"model_a", "model_b"} <= keys:
        return Detection(
            None,
            "it is a Chatbot Arena battle export: import it with "
            "`manage.py import_judgments FILE --study SLUG --format arena`",
        )
    return Detection(None, "it is a JSON list, but its items have no 'dialog' (ESConv)")


def _detect_object(line: str) -> Detection:
    first = _first_value(line, 0)
    keys = set(first) if isinstance(first, dict) else _keys_seen(line)
    if "turns" in keys:
        return Detection(ImportKind.CONTEXTS, "its first line has 'turns'")
    if {"system_a", "system_b"} <= keys:
        return Detection(ImportKind.JUDGMENTS, "its first line has 'system_a' and 'system_b'")
    if {"model_a", "model_b"} <= keys or {"model_1", "model_2"} <= keys:
        return Detection(
            None,
            "it holds judgments of another tool (MT-Bench or Chatbot Arena): import it with "
            "`manage.py import_judgments FILE --study SLUG --format mtbench` (or arena)",
        )
    if "text" in keys and ("system" in keys or "context_id" in keys):
        return Detection(ImportKind.COMPLETIONS, "its first line has 'system' and 'text'")
    if "dialog" in keys:
        return Detection(None, "it is one ESConv conversation; an ESConv file is a JSON list")
    named = ", ".join(sorted(keys)[:6]) or "none"
    return Detection(None, f"its first line has none of the keys we know (it has: {named})")


def _first_value(text: str, start: int) -> Any:
    """The first JSON value at `start` (after blanks), or None when the head cuts it off."""
    decoder = json.JSONDecoder()
    position = start
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    try:
        return decoder.raw_decode(text, position)[0]
    except (json.JSONDecodeError, RecursionError):  # cut off, or nested too deep to read here
        return None


TOP_KEY = re.compile(r'"([A-Za-z_]+)"\s*:')


def _keys_seen(text: str) -> set[str]:
    """Keys named in a head too long to parse whole (a very long first line)."""
    return set(TOP_KEY.findall(text))

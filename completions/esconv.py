"""ESConv parsing and "response potential" screening (paper 9.2). Pure: no Django, no database.

Input: a JSON list of conversations in the ESConv.json schema (the original ESConv.json, the
shipped `esconv-dialogs.json`) or the FailedESConv.json variant (seeker = "speaker", supporter =
"listener", no "id" key). A file that is not valid JSON is refused with the decoder's line and
column; a conversation of the wrong shape is refused with its index (the whole file, never a part).

Rules, applied in this order (docs/screening.md says the same for readers):

1. Dialogue id: the "id" key when present, else "esconv-" + the first 10 hex digits of the SHA-1
   of the conversation's utterances (speaker + text), stable across runs and machines.
2. Speakers: seeker|speaker -> "seeker", supporter|listener -> "supporter". Consecutive
   utterances of one speaker are merged into one turn (ESConv splits turns into messages); the
   supporter strategy labels of the merged messages are kept in order, without repeats.
3. Dialogue-level drops (the whole conversation): fewer than MIN_TURNS merged turns
   ("too_short"); any utterance with an explicit self-harm / suicide plan ("safety_self_harm")
   or a slur ("safety_hate_speech"). Such conversations need clinical expertise (criterion iii)
   or must not ship at all, so no part of them is used.
4. Candidate turns: a seeker turn that (a) has at least MIN_HISTORY turns before it including at
   least one supporter turn, (b) has at least MIN_WORDS words, (c) is followed by a supporter
   turn of at least MIN_REPLY_WORDS words (the original reply becomes the "dataset"
   completion), and (d) carries a signal: a distress word or an explicit request for help.
5. Identifying information (e-mail, phone number, URL, street address) in the released text of
   a candidate (its history, the turn, the original reply) drops that candidate only; text after
   the cut is never released, so the rest of the conversation may still yield a context.
6. Score = 2 x distinct distress phrases + 3 x distinct help-request phrases + 1 if the turn
   has at least 20 words. The top candidates by score (earlier turn first on ties) are picked
   greedily, at most MAX_PER_DIALOGUE, never two adjacent seeker turns (indices within 2).
   A conversation with no surviving candidate is dropped as "no_candidate" (or
   "identifying_info" when candidates existed but all carried identifying information).

Each pick becomes a context "<dialog_id>-t<turn index>" whose turns are the merged history up to
and including the seeker turn, with the dialogue metadata (emotion_type, problem_type,
experience_type, situation, survey_score, seeker feedback, the history's strategy labels and the
screening score and signals) and the original supporter reply with its strategy labels.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .importers import ImportFileError, check_text
from .phones import phone_numbers

MIN_TURNS = 5
MIN_HISTORY = 3
MIN_WORDS = 6
MIN_REPLY_WORDS = 3
LONG_TURN_WORDS = 20
MAX_PER_DIALOGUE = 2
SOURCE = "ESConv"

SPEAKERS = {
    "seeker": "seeker",
    "speaker": "seeker",
    "supporter": "supporter",
    "listener": "supporter",
}


def _patterns(words: Iterable[str]) -> re.Pattern[str]:
    """One case-insensitive alternation of whole-word patterns (one scan per text)."""
    return re.compile(r"\b(?:" + "|".join(words) + r")\b", re.IGNORECASE)


# Distress: clear emotional signal words (regex fragments; \b added around each).
DISTRESS = _patterns(
    [
        r"overwhelm(?:ed|ing)?",
        r"hopeless(?:ness)?",
        r"helpless",
        r"anxious",
        r"anxiety",
        r"depress(?:ed|ion|ing)",
        r"lonely",
        r"loneliness",
        r"alone",
        r"isolated",
        r"scared",
        r"afraid",
        r"terrified",
        r"panic(?:king)?",
        r"stress(?:ed|ful)?",
        r"heartbroken",
        r"devastated",
        r"miserable",
        r"exhausted",
        r"worthless",
        r"ashamed",
        r"guilty",
        r"frustrat(?:ed|ing)",
        r"upset",
        r"hurt(?:s|ing)?",
        r"crying",
        r"cry",
        r"sad(?:ness)?",
        r"angry",
        r"worried",
        r"worry(?:ing)?",
        r"nervous",
        r"grief",
        r"griev(?:e|ing)",
        r"can'?t cope",
        r"cannot cope",
        r"can'?t take (?:it|this)",
        r"giving up",
        r"give up",
        r"falling apart",
        r"breaking down",
        r"(?:so|really|very) (?:down|low)",
        r"lost",
        r"stuck",
        r"betrayed",
        r"rejected",
        r"broke up",
        r"lost my (?:job|mother|father|mom|dad)",
    ]
)
# Explicit requests for help or advice.
HELP_REQUEST = _patterns(
    [
        r"(?:don'?t|do not) know what to do",
        r"what (?:can|should|do) i do",
        r"should i",
        r"help me",
        r"can you help",
        r"any (?:advice|suggestions?|ideas|tips)",
        r"how (?:can|do) i",
        r"what would you do",
        r"i need (?:help|advice|someone)",
        r"how to (?:cope|deal|handle)",
        r"(?:don'?t|do not) know how to",
        r"is it (?:normal|wrong|okay|ok)",
    ]
)
SELF_HARM = _patterns(
    [
        r"kill(?:ing)? myself",
        r"end(?:ing)? my life",
        r"end it all",
        r"suicid(?:e|al)",
        r"overdos(?:e|ing)",
        r"take my (?:own )?life",
        r"slit(?:ting)? my wrists?",
        r"hang(?:ing)? myself",
        r"self[- ]harm(?:ing)?",
        r"cut(?:ting)? myself",
        r"(?:want|wanted|going) to die",
        r"jump(?:ing)? off (?:a|the) (?:bridge|building)",
    ]
)
# A short list of unambiguous slurs; the point is to catch them, not to catalogue them.
HATE_SPEECH = _patterns(
    [
        r"n[i1]gg(?:er|a)s?",
        r"fagg?ots?",
        r"k[iy]kes?",
        r"sp[i1]cs?",
        r"ch[i1]nks?",
        r"retards?",
        r"trann(?:y|ies)",
        r"wetbacks?",
        r"raghead",
    ]
)
# The personal-data screen: contexts at import, and writer texts and rater rationales before
# a release bundle (studio/downloads/screening.py). Each kind by the name a person knows.
IDENTIFYING_KINDS = {
    "e-mail address": re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+"),
    "phone number": re.compile(r"(?:\+?\d[\s.-]?)?(?:\(\d{3}\)|\b\d{3})[\s.-]\d{3}[\s.-]\d{4}\b"),
    "web address": re.compile(r"\b(?:https?://|www\.)\S+|\b[\w-]+\.(?:com|org|net|io|co\.uk)\b"),
    "street address": re.compile(
        r"\b\d{1,5}\s+(?:[A-Z][a-z]+\s){1,3}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane"
        r"|Ln|Drive|Dr|Court|Ct|Way)\b"
    ),
}
IDENTIFYING = re.compile("|".join(f"(?:{p.pattern})" for p in IDENTIFYING_KINDS.values()))


class EsconvFormatError(ValueError):
    """The file or one conversation is not ESConv-shaped; the message says where."""


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    strategies: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dialogue:
    id: str
    index: int
    turns: tuple[Turn, ...]
    metadata: dict[str, Any]


@dataclass(frozen=True)
class ScreenedContext:
    """One context to create: history ending in a seeker turn, plus the original reply."""

    external_id: str
    dialog_id: str
    turn_index: int
    turns: list[dict[str, str]]
    emotion_type: str
    problem_type: str
    metadata: dict[str, Any]
    reply: str
    reply_strategies: list[str]
    score: int


@dataclass
class ScreenReport:
    dialogues_read: int = 0
    dialogues_kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    contexts: list[ScreenedContext] = field(default_factory=list)


def load_esconv(path: str | Path) -> list[dict[str, Any]]:
    """Read an ESConv JSON file; a truncated or malformed file raises EsconvFormatError."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        check_text(text)
        data = json.loads(text)
    except ImportFileError as exc:
        raise EsconvFormatError(f"{path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise EsconvFormatError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "is the file truncated?"
        ) from exc
    except UnicodeDecodeError as exc:
        raise EsconvFormatError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    if not isinstance(data, list):
        raise EsconvFormatError(f"{path}: expected a JSON list of conversations")
    return data


def dialogue_id(raw: dict[str, Any]) -> str:
    if raw.get("id"):
        return str(raw["id"])
    text = "\n".join(f"{u.get('speaker')}:{u.get('content')}" for u in raw["dialog"])
    return "esconv-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


def _utterance(u: Any, index: int, position: int) -> tuple[str, str, str | None, str | None]:
    where = f"dialogue {index}, utterance {position}"
    if not isinstance(u, dict):
        raise EsconvFormatError(f"{where}: expected an object")
    speaker = SPEAKERS.get(str(u.get("speaker", "")).strip().lower())
    if speaker is None:
        raise EsconvFormatError(f"{where}: unknown speaker {u.get('speaker')!r}")
    content = u.get("content")
    if not isinstance(content, str):
        raise EsconvFormatError(f"{where}: 'content' must be a string")
    annotation = u.get("annotation") or {}
    if not isinstance(annotation, dict):
        raise EsconvFormatError(f"{where}: 'annotation' must be an object")
    return (
        speaker,
        " ".join(content.split()),
        annotation.get("strategy"),
        annotation.get("feedback"),
    )


def merge_turns(utterances: Iterable[tuple[str, str, str | None]]) -> tuple[Turn, ...]:
    """Consecutive utterances of one speaker become one turn; strategy labels kept in order."""
    turns: list[Turn] = []
    for speaker, text, strategy in utterances:
        if not text:
            continue
        labels = (str(strategy),) if strategy and speaker == "supporter" else ()
        if turns and turns[-1].speaker == speaker:
            last = turns[-1]
            merged = last.strategies + tuple(s for s in labels if s not in last.strategies)
            turns[-1] = Turn(speaker, f"{last.text} {text}", merged)
        else:
            turns.append(Turn(speaker, text, labels))
    return tuple(turns)


def parse_dialogue(raw: Any, index: int) -> Dialogue:
    if not isinstance(raw, dict) or not isinstance(raw.get("dialog"), list):
        raise EsconvFormatError(f"dialogue {index}: expected an object with a 'dialog' list")
    parsed = [_utterance(u, index, i) for i, u in enumerate(raw["dialog"])]
    feedback = [f for _, _, _, f in parsed if f is not None]
    metadata = {
        "dialog_id": dialogue_id(raw),
        "experience_type": raw.get("experience_type"),
        "situation": raw.get("situation"),
        "survey_score": raw.get("survey_score"),
        "seeker_feedback": feedback,
    }
    metadata = {k: v for k, v in metadata.items() if v not in (None, [], {})}
    metadata["emotion_type"] = str(raw.get("emotion_type") or "")
    metadata["problem_type"] = str(raw.get("problem_type") or "")
    turns = merge_turns((s, t, st) for s, t, st, _ in parsed)
    return Dialogue(id=dialogue_id(raw), index=index, turns=turns, metadata=metadata)


def _hits(pattern: re.Pattern[str], text: str) -> list[str]:
    """The distinct phrases matched (lower-cased, in order of first appearance)."""
    return list(dict.fromkeys(m.group(0).lower() for m in pattern.finditer(text)))


def signal(text: str) -> tuple[int, list[str]]:
    """The response-potential score of a seeker turn and the signals found in it."""
    distress, help_request = _hits(DISTRESS, text), _hits(HELP_REQUEST, text)
    if not distress and not help_request:
        return 0, []
    long_bonus = 1 if len(text.split()) >= LONG_TURN_WORDS else 0
    return 2 * len(distress) + 3 * len(help_request) + long_bonus, distress + help_request


def safety_reason(dialogue: Dialogue) -> str | None:
    for turn in dialogue.turns:
        if SELF_HARM.search(turn.text):
            return "safety_self_harm"
        if HATE_SPEECH.search(turn.text):
            return "safety_hate_speech"
    return None


def has_identifying_info(text: str) -> bool:
    return IDENTIFYING.search(text) is not None


def identifying_kinds(text: str, phone_regions: Iterable[str] = ()) -> list[str]:
    """Which kinds of personal data the screen finds in `text` (empty: none). With
    `phone_regions`, phone numbers written the way those regions write them count too
    (completions.phones), beside the US-style ones the pattern knows."""
    if not text:
        return []
    found = set()
    if IDENTIFYING.search(text) is not None:
        found = {kind for kind, pattern in IDENTIFYING_KINDS.items() if pattern.search(text)}
    if "phone number" not in found and phone_regions and phone_numbers(text, phone_regions):
        found.add("phone number")
    return [kind for kind in IDENTIFYING_KINDS if kind in found]


def _is_candidate(turns: tuple[Turn, ...], i: int) -> bool:
    turn = turns[i]
    return (
        turn.speaker == "seeker"
        and i >= MIN_HISTORY
        and any(t.speaker == "supporter" for t in turns[:i])
        and len(turn.text.split()) >= MIN_WORDS
        and i + 1 < len(turns)
        and len(turns[i + 1].text.split()) >= MIN_REPLY_WORDS
    )


def _build(dialogue: Dialogue, i: int, score: int, signals: list[str]) -> ScreenedContext:
    history = dialogue.turns[: i + 1]
    reply = dialogue.turns[i + 1]
    meta = {k: v for k, v in dialogue.metadata.items() if k not in ("emotion_type", "problem_type")}
    meta.update(
        turn_index=i,
        screening={"score": score, "signals": signals},
        turn_strategies=[list(t.strategies) for t in history],
    )
    return ScreenedContext(
        external_id=f"{dialogue.id}-t{i}",
        dialog_id=dialogue.id,
        turn_index=i,
        turns=[{"speaker": t.speaker, "text": t.text} for t in history],
        emotion_type=dialogue.metadata["emotion_type"],
        problem_type=dialogue.metadata["problem_type"],
        metadata=meta,
        reply=reply.text,
        reply_strategies=list(reply.strategies),
        score=score,
    )


def screen_dialogue(dialogue: Dialogue) -> tuple[list[ScreenedContext], str | None]:
    """The dialogue's contexts (at most MAX_PER_DIALOGUE) or ([], the reason it was dropped)."""
    if len(dialogue.turns) < MIN_TURNS:
        return [], "too_short"
    if reason := safety_reason(dialogue):
        return [], reason
    candidates, identifying = [], 0
    # Index of the first turn carrying identifying information: candidates whose released text
    # (history + turn + reply, i.e. turns[: i + 2]) reaches it are unusable.
    first_pii = next(
        (k for k, t in enumerate(dialogue.turns) if has_identifying_info(t.text)),
        len(dialogue.turns),
    )
    for i in range(len(dialogue.turns)):
        if not _is_candidate(dialogue.turns, i):
            continue
        score, signals = signal(dialogue.turns[i].text)
        if not score:
            continue
        if first_pii <= i + 1:
            identifying += 1
            continue
        candidates.append((score, i, signals))
    picked: list[tuple[int, int, list[str]]] = []
    for score, i, signals in sorted(candidates, key=lambda c: (-c[0], c[1])):
        if len(picked) < MAX_PER_DIALOGUE and all(abs(i - j) > 2 for _, j, _ in picked):
            picked.append((score, i, signals))
    if not picked:
        return [], "identifying_info" if identifying else "no_candidate"
    return [_build(dialogue, i, s, sig) for s, i, sig in sorted(picked, key=lambda p: p[1])], None


def screen_corpus(raw_dialogues: list[Any], *, limit: int | None = None) -> ScreenReport:
    """Parse every conversation first (a bad one raises), then screen up to `limit` of them."""
    dialogues = [parse_dialogue(raw, i) for i, raw in enumerate(raw_dialogues)]
    report = ScreenReport()
    seen: set[str] = set()
    for dialogue in dialogues[:limit] if limit is not None else dialogues:
        report.dialogues_read += 1
        if dialogue.id in seen:
            report.dropped["duplicate_id"] += 1
            continue
        seen.add(dialogue.id)
        contexts, reason = screen_dialogue(dialogue)
        if reason:
            report.dropped[reason] += 1
        else:
            report.dialogues_kept += 1
            report.contexts.extend(contexts)
    return report

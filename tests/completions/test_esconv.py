"""ESConv parsing and screening rules on hand-written dialogues (no database)."""

from __future__ import annotations

import json

import pytest

from completions import esconv

SUPPORT = "I am here for you and I want to listen to what is going on."


def utter(speaker: str, content: str, strategy: str | None = None) -> dict:
    return {
        "speaker": speaker,
        "annotation": {"strategy": strategy} if strategy else {},
        "content": content,
    }


def conversation(
    seeker_turns: list[str], *, seeker="seeker", supporter="supporter", **extra
) -> dict:
    """supporter, seeker, supporter, seeker, ... ending with a supporter reply."""
    dialog = []
    for text in seeker_turns:
        dialog.append(utter(supporter, SUPPORT, "Questions"))
        dialog.append(utter(seeker, text))
    dialog.append(
        utter(supporter, "That sounds so hard, tell me more about it.", "Reflection of feelings")
    )
    return {"emotion_type": "anxiety", "problem_type": "job crisis", "dialog": dialog, **extra}


CALM = "We went to the park and had a nice walk there yesterday afternoon."
HELP = "I feel so overwhelmed at work and I don't know what to do anymore."


def screen(raw: dict) -> tuple[list[esconv.ScreenedContext], str | None]:
    return esconv.screen_dialogue(esconv.parse_dialogue(raw, 0))


def test_it_keeps_a_request_for_help_after_enough_history():
    contexts, reason = screen(conversation([CALM, HELP, CALM], id="d1"))
    assert reason is None
    [context] = contexts
    assert context.external_id == "d1-t3"
    assert context.turns[-1] == {"speaker": "seeker", "text": HELP}
    assert [t["speaker"] for t in context.turns] == ["supporter", "seeker", "supporter", "seeker"]
    assert context.reply == SUPPORT
    assert context.reply_strategies == ["Questions"]
    assert context.emotion_type == "anxiety"
    assert "overwhelmed" in context.metadata["screening"]["signals"]


def test_it_ignores_a_signal_without_enough_history():
    contexts, reason = screen(conversation([HELP, CALM, CALM], id="d1"))
    assert (contexts, reason) == ([], "no_candidate")


def test_it_ignores_a_turn_that_is_too_short():
    contexts, reason = screen(conversation([CALM, "so anxious", CALM], id="d1"))
    assert reason == "no_candidate"


def test_it_drops_the_whole_dialogue_with_a_self_harm_plan():
    plan = "Sometimes I think I will kill myself tonight, I have pills ready."
    contexts, reason = screen(conversation([CALM, HELP, CALM, plan], id="d1"))
    assert (contexts, reason) == ([], "safety_self_harm")


def test_it_drops_a_dialogue_with_a_slur():
    contexts, reason = screen(conversation([CALM, HELP, "He called me a retard today."]))
    assert reason == "safety_hate_speech"


def test_it_drops_a_candidate_whose_history_has_an_email_address():
    email = "You can write to me at jane.doe@example.com whenever you like, ok."
    contexts, reason = screen(conversation([email, HELP, CALM], id="d1"))
    assert (contexts, reason) == ([], "identifying_info")


def test_identifying_information_after_the_cut_does_not_drop_the_context():
    phone = "Call me on 555-123-4567 tomorrow morning if that is fine with you."
    contexts, reason = screen(conversation([CALM, HELP, CALM, phone], id="d1"))
    assert reason is None and [c.turn_index for c in contexts] == [3]


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.org/me",
        "I live at 12 Baker Street now",
        "mail me: a.b@c.io",
        "call (555) 123-4567",
    ],
)
def test_identifying_patterns(text):
    assert esconv.has_identifying_info(text)


def test_it_picks_at_most_two_strongest_non_adjacent_turns():
    strong = "I am anxious and lonely and depressed, should I quit? I don't know what to do."
    turns = [CALM, HELP, strong, CALM, HELP, CALM]
    contexts, reason = screen(conversation(turns, id="d1"))
    assert reason is None
    # seeker turns sit at odd indices 1, 3, 5, ...; the strongest is t5, HELP at t3 is adjacent.
    assert [c.turn_index for c in contexts] == [5, 9]
    assert contexts[0].score > contexts[1].score


def test_it_reads_the_failed_esconv_speaker_convention_and_merges_split_turns():
    raw = {
        "emotion_type": "sadness",
        "problem_type": "breakup",
        "situation": "s",
        "experience_type": "Current Experience",
        "survey_score": {"seeker": {"empathy": "4"}},
        "dialog": [
            utter("listener", "Hi, how are you?", "Questions"),
            utter("speaker", "Not great."),
            utter("speaker", "My partner left me."),
            utter("listener", "I am so sorry to hear that.", "Reflection of feelings"),
            utter("listener", "That must really hurt a lot.", "Reflection of feelings"),
            utter("listener", "What happened?", "Questions"),
            {
                "speaker": "speaker",
                "annotation": {"feedback": "4"},
                "content": "I feel so lonely now and I do not know how to cope with it.",
            },
            utter("listener", "Being alone after a breakup is very hard.", "Self-disclosure"),
        ],
    }
    dialogue = esconv.parse_dialogue(raw, 0)
    assert [t.speaker for t in dialogue.turns] == [
        "supporter",
        "seeker",
        "supporter",
        "seeker",
        "supporter",
    ]
    assert dialogue.turns[1].text == "Not great. My partner left me."
    assert dialogue.turns[2].strategies == ("Reflection of feelings", "Questions")
    assert dialogue.id.startswith("esconv-") and len(dialogue.id) == len("esconv-") + 10
    contexts, reason = esconv.screen_dialogue(dialogue)
    assert reason is None
    [context] = contexts
    assert context.external_id == f"{dialogue.id}-t3"
    assert context.metadata["survey_score"] == {"seeker": {"empathy": "4"}}
    assert context.metadata["seeker_feedback"] == ["4"]
    assert context.metadata["situation"] == "s"
    assert context.reply_strategies == ["Self-disclosure"]


def test_the_content_hash_id_is_stable_and_content_dependent():
    a = conversation([CALM, HELP, CALM])
    assert esconv.dialogue_id(a) == esconv.dialogue_id(json.loads(json.dumps(a)))
    assert esconv.dialogue_id(a) != esconv.dialogue_id(conversation([HELP, HELP, CALM]))


def test_a_dialogue_of_the_wrong_shape_is_refused_with_its_index():
    good = conversation([CALM, HELP, CALM])
    bad = {"dialog": [{"speaker": "narrator", "content": "x"}]}
    with pytest.raises(esconv.EsconvFormatError, match="dialogue 1"):
        esconv.screen_corpus([good, bad])


def test_a_truncated_file_is_refused_with_line_and_column(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('[{"dialog": [\n  {"speaker": "seeker", "content": "hi')
    with pytest.raises(esconv.EsconvFormatError, match=r"line 2, column"):
        esconv.load_esconv(path)


def test_screen_corpus_counts_reasons_and_honours_the_limit():
    dialogues = [
        conversation([CALM, HELP, CALM], id="a"),
        conversation([CALM], id="b"),
        conversation([CALM, CALM, CALM], id="c"),
    ]
    report = esconv.screen_corpus(dialogues)
    assert (report.dialogues_read, report.dialogues_kept) == (3, 1)
    assert report.dropped == {"too_short": 1, "no_candidate": 1}
    assert esconv.screen_corpus(dialogues, limit=1).dialogues_read == 1

"""Hidden and direction characters shown marked where a person reads text; stored unchanged.

A writer's reply with a right-to-left override (U+202E) or a zero-width space (U+200B) reaches
raters, the reviewing admin and the studio as visible marks (⟨U+202E⟩) inside `dir="auto"`
elements, and the writer review page flags it; the database keeps the text as written.
"""

from __future__ import annotations

import pytest
from django.template import engines

from annotation.models import Assignment, Rater
from completions.models import Completion
from core.display import hidden_characters, reveal
from tests.annotation.test_views import _enter, _url
from tests.factories.annotation import build_study
from tests.factories.writing import GOOD_TEXT, behaviour, build_writing_study
from tests.writing.test_views import _admin, _page
from tests.writing.test_views import _enter as _enter_as_writer
from writing.models import Writing

RLO, PDF, ZWSP, LRI, PDI = "\u202e", "\u202c", "\u200b", "\u2066", "\u2069"
TRICK = f"I agree with you. {RLO}.uoy pleh t'nac I{PDF} Take{ZWSP}care {LRI}x{PDI}"


def test_reveal_marks_every_hidden_character_and_escapes_the_rest():
    html = reveal(f"<b>a</b>{RLO}b{ZWSP}c\ufeff")
    assert "<b>" not in html and "&lt;b&gt;a&lt;/b&gt;" in html
    for code in ("U+202E", "U+200B", "U+FEFF"):
        assert f"⟨{code}⟩" in html
    assert RLO not in html and ZWSP not in html and "\ufeff" not in html
    assert 'title="right-to-left override"' in html
    assert reveal("plain text") == "plain text" and reveal(None) == ""


def test_hidden_characters_lists_codes_and_leaves_emoji_joiners_alone():
    assert hidden_characters(TRICK) == ["U+202E", "U+202C", "U+200B", "U+2066", "U+2069"]
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert hidden_characters(f"my {family}") == [] and "⟨" not in reveal(family)
    assert hidden_characters("a\u200db") == ["U+200D"]  # a joiner between letters hides
    assert hidden_characters("") == []


@pytest.mark.parametrize("engine", ["django", "jinja2"])
def test_the_reveal_filter_works_in_both_template_engines(engine):
    template = engines[engine].from_string('<p dir="auto">{{ text|reveal }}</p>')
    html = template.render({"text": f"<i>{RLO}x"})
    assert html == '<p dir="auto">&lt;i&gt;' + reveal(RLO) + "x</p>"


@pytest.mark.django_db
def test_a_rater_sees_the_reply_with_its_hidden_characters_marked(client):
    study = build_study(quality_check_rate=0)
    Completion.objects.filter(context__study=study).update(text=TRICK)
    _enter(client, study)
    html = client.get(_url("item", study)).content.decode()
    assert RLO not in html and ZWSP not in html and LRI not in html
    assert "⟨U+202E⟩" in html and "⟨U+200B⟩" in html and "⟨U+2066⟩" in html
    assert '<p dir="auto">I agree with you.' in html
    rater = Rater.objects.get(study=study)
    assert Assignment.objects.filter(rater=rater).exists()
    assert set(Completion.objects.filter(context__study=study).values_list("text", flat=True)) == {
        TRICK
    }  # stored unchanged


@pytest.mark.django_db
def test_the_writer_review_page_flags_and_marks_hidden_characters(client):
    study = build_writing_study(n_contexts=1, per_context=2)
    for text in (GOOD_TEXT + f" {RLO}gnorw{PDF}", GOOD_TEXT):
        writer = client.__class__()
        invite = _enter_as_writer(writer, study)
        _page_, submit = _page(writer, invite)
        writer.post(submit, {"text": text, **behaviour(inserted_chars=200)})
    _admin(client)
    html = client.get(f"/studio/{study.slug}/writers/").content.decode()
    assert html.count("Contains hidden or direction characters") == 1
    assert "(U+202E, U+202C)" in html
    assert "⟨U+202E⟩</span>gnorw<span" in html
    assert RLO not in html
    assert Writing.objects.filter(text__contains=RLO).count() == 1  # stored as written

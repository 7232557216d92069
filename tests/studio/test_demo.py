"""The embedded default's demo study: loads from the shipped sample, twice without change."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Judgment, Pair, QualityCheckItem
from completions.models import Completion, DialogueContext, System
from studio.demo import DEMO_ADMIN_USERNAME, demo_admin_ensure, load_demo

pytestmark = pytest.mark.django_db


def _counts() -> tuple[int, ...]:
    models = (DialogueContext, System, Completion, Pair, Judgment, QualityCheckItem)
    return tuple(model.objects.count() for model in models)


def test_the_demo_loads_labelled_demo_data_and_a_second_run_changes_nothing():
    study = load_demo()
    first = _counts()
    load_demo()
    assert _counts() == first
    contexts, systems, completions, pairs, judgments, checks = first
    assert contexts > 20 and pairs > 100 and judgments > 100 and checks > 0
    kinds = {s.name: s.kind for s in study.systems.all()}
    assert kinds.pop("original-dataset") == "dataset"
    assert kinds and all(name.startswith("demo-") for name in kinds)
    assert all(c.source == "ESConv" for c in study.contexts.all())
    assert study.style_features == ["length", "questions"]  # the style-controlled board shows


def test_the_demo_admin_can_log_in_and_the_rater_link_answers(client):
    study = load_demo()
    assert demo_admin_ensure() is None  # the test database is not the embedded demo one
    password = demo_admin_ensure(force=True)
    assert get_user_model().objects.get(username=DEMO_ADMIN_USERNAME).is_superuser
    entry = client.get(f"/r/{study.invite_token}/", follow=True)
    assert entry.status_code == 200
    assert entry.redirect_chain[-1][0].endswith("/consent/")
    assert client.login(username=DEMO_ADMIN_USERNAME, password=password)
    assert client.get("/admin/completions/study/").status_code == 200
    board = client.get(f"/studio/{study.slug}/leaderboard/")
    assert board.status_code == 200
    # load_demo left fresh snapshots: the first read is a stored board, splits included.
    assert board.context["result"]["status"] == "current"
    split = client.get(f"/studio/{study.slug}/leaderboard/", {"by": "emotion_type"})
    assert split.context["result"]["by"] and "by_pending" not in split.context["result"]


def test_the_demo_prints_a_writer_link_that_answers(client):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("load_demo", base_url="http://testserver", stdout=out)
    line = next(line for line in out.getvalue().splitlines() if "Writer link:" in line)
    url = line.split("Writer link:")[1].strip()
    assert url.startswith("http://testserver/w/")
    entry = client.get(url.removeprefix("http://testserver"), follow=True)
    assert entry.redirect_chain[-1][0].endswith("/consent/")
    client.post(entry.redirect_chain[-1][0], {"agree": "on"})
    write = client.get(url.removeprefix("http://testserver") + "write/")
    assert write.status_code == 200 and b"Your reply as the supporter" in write.content


def test_the_demo_study_asks_raters_to_qualify_first(client):
    from care.models import CareSettings

    study = load_demo()
    assert CareSettings.objects.get(study=study).qualification_enabled
    assert study.qualification_items.filter(phase="training").count() == 1
    client.get(f"/r/{study.invite_token}/")
    client.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    assert client.get(f"/r/{study.invite_token}/item/").url.endswith("/qualify/")
    assert b"Practice item 1 of 5" in client.get(f"/r/{study.invite_token}/qualify/").content


def test_no_simple_bot_passes_the_demos_qualification_or_its_checks():
    from annotation.bots import GOLD_BAR
    from studio.checks.selectors import bot_table

    study = load_demo()
    table = bot_table(study=study)
    assert table.qualification_on and table.problems == []
    for row in table.rows:
        assert row.qualifies is False, row.bot
        assert row.gold.n >= 4 and row.gold.share <= GOLD_BAR, row.bot
    # The checks are cut from the demo's own conversations (ESConv: 4 turns and more).
    checks = study.quality_items.filter(retired_at__isnull=True)
    own_turns = list(study.contexts.values_list("turns", flat=True))
    assert checks.count() >= 6 and all(c.turns in own_turns for c in checks)
    # Each gold check sets a demo system's reply against its reply to another conversation.
    assert all("one written for" in c.note for c in checks.filter(kind="gold"))

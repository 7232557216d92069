"""Every simple bot goes through the rater pages of a study qualified from the rubric (as the
demo is) and none of them qualifies; a rater who reads does."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from annotation.bots import BOTS
from care.models import RaterCare
from care.selectors import care_forget
from care.services import qualification_items_seed_from_rubric
from tests.factories import CareSettingsFactory
from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db
REPLY = re.compile(r'<h2 id="response-([ab])-heading">Response [AB]</h2>\s*<p[^>]*>(.*?)</p>', re.S)


@pytest.fixture
def study():
    study = build_study(n_contexts=2, quality_check_rate=0, slug="bots")
    CareSettingsFactory(study=study, qualification_enabled=True)  # passing takes 75 %
    care_forget(study=study)
    qualification_items_seed_from_rubric(study=study)
    return study


def _run(study, pid, answer) -> RaterCare:
    """A rater through entry, consent and every qualify page, pressing `answer(left, right)`."""
    client = Client()
    base = f"/r/{study.invite_token}"
    client.get(f"{base}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=X")
    client.post(f"{base}/consent/", {"agree": "on"})
    assert client.get(f"{base}/item/").url == f"{base}/qualify/"
    for _ in range(20):
        page = client.get(f"{base}/qualify/")
        if page.status_code == 302:
            break
        text = page.content.decode()
        replies = {side: html.unescape(said) for side, said in REPLY.findall(text)}
        number = re.search(r'name="number" value="(\d+)"', text).group(1)
        choice = answer(replies["a"], replies["b"])
        client.post(f"{base}/qualify/", {"choice": choice, "number": number})
    result = client.get(f"{base}/qualify/result/").content.decode()
    care = RaterCare.objects.get(rater__study=study, rater__external_id=pid)
    assert ("You can start the study" in result) == (care.qualification == "passed")
    return care


@pytest.mark.parametrize("bot", BOTS, ids=[bot.name for bot in BOTS])
def test_no_bot_qualifies_through_the_rater_pages(study, bot):
    for variant, policy in enumerate(bot.policies):
        care = _run(study, f"PID-{bot.name}-{variant}".replace(" ", "-"), policy)
        assert care.qualification == "failed", (bot.name, variant, care.n_correct)
        assert care.n_correct <= 2 and care.n_qualification == 4


def test_a_rater_who_reads_qualifies(study):
    better = {item.text_a if item.expected == "a" else item.text_b for item in
              study.qualification_items.all()}  # fmt: skip
    care = _run(study, "PID-reader", lambda left, right: 1 if left in better else 5)
    assert (care.qualification, care.n_correct) == ("passed", 4)

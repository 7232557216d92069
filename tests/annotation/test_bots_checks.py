"""The length bots through the rater pages of a study whose checks were made at opening: a
rater who meets every check and always picks the longer (or the shorter) reply matches at
most 60 % of the gold checks. (Side bots meet gold checks in an order drawn per rater: their
expected half is scored in tests/annotation/test_bots.py.)"""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from annotation.bots import BOTS, GOLD_BAR
from annotation.models import Judgment
from annotation.services.checks import quality_checks_ensure
from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db
REPLY = re.compile(r'<h2 id="response-([ab])-heading">Response [AB]</h2>\s*<p[^>]*>(.*?)</p>', re.S)
SUBMIT = re.compile(r'action="(/r/a/[^/"]+/submit/)"')
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.mark.parametrize("name", ["longer", "shorter"])
def test_a_length_bot_matches_at_most_the_bar_of_the_gold_checks(name):
    # 4 real items at a 60 % rate: 6 checks a rater, as many as the study has.
    study = build_study(n_contexts=3, quality_check_rate=0.6, items_per_rater=4, slug="lb")
    made = quality_checks_ensure(study=study)
    assert len(made) == 6
    bot = next(b for b in BOTS if b.name == name)
    for variant, policy in enumerate(bot.policies):
        client = Client()
        base = f"/r/{study.invite_token}"
        client.get(f"{base}/?PROLIFIC_PID=PID-{name}-{variant}&STUDY_ID=S&SESSION_ID=X")
        client.post(f"{base}/consent/", {"agree": "on"})
        page = client.get(f"{base}/item/").content.decode()
        for _ in range(10):
            match = SUBMIT.search(page)
            if match is None:
                break
            replies = {side: html.unescape(text) for side, text in REPLY.findall(page)}
            choice = policy(replies["a"], replies["b"])
            page = client.post(match.group(1), {"choice": choice}, **HTMX).content.decode()
        checks = Judgment.objects.filter(
            rater__external_id=f"PID-{name}-{variant}", quality_check=True
        )
        gold = checks.filter(quality_item__kind="gold")
        assert checks.count() == 6 and gold.count() == 4
        assert gold.filter(passed_check=True).count() <= GOLD_BAR * 4

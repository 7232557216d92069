"""The leaderboard page's honesty: per-axis fits shown when there are axis marks, a statistic
that cannot be computed says why, the refit message matches what happened."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.urls import reverse

from completions.access import STUDY_ADMINS
from tests.factories.ranking import X, Y, add_known_verdicts, build_study, judge

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def admin_client(client):
    user = User.objects.create_user("lead", password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    client.force_login(user)
    return client


def test_axis_marks_give_per_axis_ratings_with_percentiles(admin_client):
    built = build_study(slug="axes")
    for i in range(4):
        winner = built.side(i, X if i < 3 else Y)
        judge(built, i, X if i < 3 else Y, judge=f"judge-{i}", kind="llm", strength=3,
              strength_max=5, axes={"H": {"winner": winner, "strength": 2}})  # fmt: skip
    admin_client.get(reverse("ranking:leaderboard", args=["axes"]))  # the refit follows it
    html = admin_client.get(reverse("ranking:leaderboard", args=["axes"])).content.decode()
    assert "Per-axis ratings (Figure 4)" in html
    table = html[html.index('class="numeric axis-fits"') :]
    table = table[: table.index("</table>")]
    row_x = table[table.index(X) : table.index(Y)]
    assert "<td>100</td>" in row_x  # x leads on H: the top percentile
    assert "Axis E: no judgment marked this axis" in html


def test_a_correlation_that_cannot_be_computed_says_why(admin_client):
    built = build_study(slug="two")
    add_known_verdicts(built)
    admin_client.get(reverse("ranking:leaderboard", args=["two"]))  # the refit follows it
    html = admin_client.get(reverse("ranking:leaderboard", args=["two"])).content.decode()
    assert "not computed: needs at least 3 systems with both values" in html
    assert "p (BH)" in html and ">0<" not in html.split("Correlations")[1]
    # One human rater and no LLM judge: the agreement figures say what they need.
    assert "Fleiss' kappa not computed: it needs pairs judged by at least two humans" in html
    assert "Human–LLM agreement not computed" in html


def test_in_eager_mode_the_refit_message_says_it_has_started(admin_client, settings):
    build_study(slug="eager")
    response = admin_client.post(reverse("ranking:refit", args=["eager"]), follow=True)
    assert "Refit started" in response.content.decode()

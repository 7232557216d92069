from __future__ import annotations

import csv
import io
from datetime import UTC

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from completions.access import STUDY_ADMINS
from ranking.models import LeaderboardSnapshot, RefitJob
from tests.factories.ranking import (
    X,
    Y,
    add_known_verdicts,
    add_noise_that_must_not_count,
    build_study,
    judge,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("few_judgments_shown")]


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


def _fitted(built):
    """The study with its boards stored, as a refit leaves it: pages read snapshots and never
    fit (tests/ranking/test_snapshot_sections.py reads a study before its first refit)."""
    from ranking import services

    services.snapshot_refit_study(study_id=built.study.pk, trigger="nightly")
    return built


@pytest.fixture
def built():
    built = build_study(slug="known")
    add_known_verdicts(built)
    add_noise_that_must_not_count(built)
    return _fitted(built)


@pytest.fixture
def admin_client(client):
    user = User.objects.create_user("lead", password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    client.force_login(user)
    return client


def _urls(slug: str) -> list[tuple[str, str]]:
    return [
        ("get", reverse("ranking:leaderboard", args=[slug])),
        ("get", reverse("ranking:plot", args=[slug, "forest", "svg"])),
        ("get", reverse("ranking:table", args=[slug, "leaderboard"])),
        ("post", reverse("ranking:refit", args=[slug])),
        ("get", reverse("ranking:history", args=[slug])),
        ("get", reverse("api:leaderboard", args=[slug])),
    ]


def test_anonymous_visitors_are_sent_to_login_or_refused(client, built):
    for method, url in _urls("known"):
        response = getattr(client, method)(url)
        assert response.status_code in (302, 401, 403), url  # 401: the API (token or session)
        if response.status_code == 302:
            assert reverse("admin:login") in response["Location"]
    assert not RefitJob.objects.exists()  # nothing refitted for a refused request


@pytest.mark.parametrize("is_staff", [False, True], ids=["rater-account", "staff-non-admin"])
def test_users_who_are_not_study_admins_get_403_everywhere(client, built, is_staff):
    user = User.objects.create_user("someone", password="pw", is_staff=is_staff)
    client.force_login(user)
    for method, url in _urls("known"):
        assert getattr(client, method)(url).status_code == 403, url
    assert not RefitJob.objects.exists()  # nothing refitted for a refused request


def test_a_signed_in_rater_without_an_account_is_not_let_in(client, built):
    from annotation.access import RATER_COOKIE, rater_cookie_value
    from annotation.models import Rater

    rater = Rater.objects.filter(study=built.study, flagged=False).first()
    client.cookies[RATER_COOKIE] = rater_cookie_value([rater.token])  # as rater_login
    for method, url in _urls("known"):
        assert getattr(client, method)(url).status_code in (302, 401, 403), url
    assert not RefitJob.objects.exists()  # nothing refitted for a refused request


def test_the_page_shows_the_elo_table_plots_and_downloads(admin_client, built):
    response = admin_client.get(reverse("ranking:leaderboard", args=["known"]))
    assert response.status_code == 200
    html = response.content.decode()
    table = html.index('id="elo-table"')
    assert html.index(X, table) < html.index(Y, table)  # ranked
    assert 'id="results"' in html
    for name in ("forest", "axes", "win-matrix", "strategies", "ttft"):
        # Humans judged: their board is the one the page opens on.
        assert f"/studio/known/leaderboard/plot/{name}.svg?judges=human&amp;subset=all" in html
        assert f"/studio/known/leaderboard/plot/{name}.png?judges=human&amp;subset=all" in html
    assert 'alt="Forest plot of Elo ratings' in html
    assert "/studio/known/leaderboard/table/leaderboard.csv" in html
    # The filter form works without JavaScript (GET action) and swaps #results with htmx.
    assert 'method="get" action="/studio/known/leaderboard/"' in html
    assert 'hx-get="/studio/known/leaderboard/" hx-target="#results"' in html
    assert "<script>" not in html.replace("<script src", "")


def test_htmx_requests_get_only_the_results_fragment(admin_client, built):
    response = admin_client.get(
        reverse("ranking:leaderboard", args=["known"]), {"judges": "llm"}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="results"')
    assert "<html" not in html
    assert "0 comparisons" in html


def test_an_unknown_filter_value_is_a_bad_request(admin_client, built):
    url = reverse("ranking:leaderboard", args=["known"])
    assert admin_client.get(url, {"judges": "robots"}).status_code == 400
    plot = reverse("ranking:plot", args=["known", "nope", "svg"])
    assert admin_client.get(plot).status_code == 400
    assert (
        admin_client.get(reverse("ranking:plot", args=["known", "forest", "gif"])).status_code
        == 400
    )


@pytest.mark.parametrize("name", ["forest", "axes", "win-matrix", "strategies", "ttft"])
def test_every_plot_renders_as_svg_and_png(admin_client, built, name):
    svg = admin_client.get(reverse("ranking:plot", args=["known", name, "svg"]))
    assert svg["Content-Type"] == "image/svg+xml"
    assert b"<svg" in svg.content
    png = admin_client.get(
        reverse("ranking:plot", args=["known", name, "png"]), {"download": "1", "judges": "human"}
    )
    assert png["Content-Type"] == "image/png"
    assert png.content.startswith(b"\x89PNG")
    assert f'{name}-human-all.png"' in png["Content-Disposition"]


def test_the_forest_plot_names_every_ranked_system(admin_client, built):
    svg = admin_client.get(reverse("ranking:plot", args=["known", "forest", "svg"])).content
    assert X.encode() in svg and Y.encode() in svg


def test_the_leaderboard_csv_has_one_row_per_system(admin_client, built):
    response = admin_client.get(
        reverse("ranking:table", args=["known", "leaderboard"]), {"judges": "human"}
    )
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [row["system"] for row in rows] == [X, Y]
    assert rows[0]["n"] == "4"


@pytest.mark.parametrize(
    "name",
    ["win-matrix", "head-to-head", "strategies", "split", "correlations", "agreement", "factors"],
)
def test_every_table_downloads_as_csv(admin_client, built, name):
    response = admin_client.get(reverse("ranking:table", args=["known", name]))
    assert response.status_code == 200
    assert len(response.content.decode().splitlines()) >= 2


def test_refit_from_the_page_runs_after_the_response_without_a_worker(admin_client, built):
    LeaderboardSnapshot.objects.all().delete()
    response = admin_client.post(reverse("ranking:refit", args=["known"]))
    assert response.status_code == 302
    # In-process Celery: the refit ran once the redirect had been sent.
    assert sorted(LeaderboardSnapshot.objects.values_list("judges", flat=True)) == [
        "all",
        "human",
        "llm",
    ]
    assert set(LeaderboardSnapshot.objects.values_list("trigger", flat=True)) == {"manual"}


def test_refit_refuses_get(admin_client, built):
    assert admin_client.get(reverse("ranking:refit", args=["known"])).status_code == 405


def test_history_lists_snapshots_with_counts_and_top_systems(admin_client, built):
    from ranking import services

    services.snapshot_refit_study(study_id=built.study.pk, trigger="nightly")
    html = admin_client.get(reverse("ranking:history", args=["known"])).content.decode()
    record, snapshots = html.split("Stored snapshots")
    assert snapshots.count("<tr>") == 1 + 3
    assert "nightly" in snapshots
    assert f"{X} (" in snapshots
    assert "uniform" in snapshots  # each snapshot's sampling policy
    assert record.count("System added") == 2  # the record: both systems, each once


def test_the_page_reads_a_current_snapshot_instead_of_refitting(admin_client, built):
    from ranking import services

    snapshot = services.snapshot_refit_study(study_id=built.study.pk, trigger="nightly")[0]
    assert snapshot.judges == "human"  # the board the page opens on
    html = admin_client.get(reverse("ranking:leaderboard", args=["known"])).content.decode()
    assert f"(#{snapshot.pk}, the nightly refit)" in html
    stamp = snapshot.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
    assert f"From the snapshot of {stamp} UTC" in html
    assert "Up to date with every counted judgment." in html
    assert LeaderboardSnapshot.objects.count() == 3  # nothing refitted for the read


def test_the_status_sentence_of_a_board_refitted_when_stale_is_consistent(admin_client, built):
    from ranking import services

    LeaderboardSnapshot.objects.all().delete()  # the fixture's nightly boards: this one is stale
    snapshot = services.snapshot_refit_study(study_id=built.study.pk, trigger="stale")[0]
    html = admin_client.get(reverse("ranking:leaderboard", args=["known"])).content.decode()
    status = html[
        html.index('id="snapshot-status"') : html.index("</p>", html.index("snapshot-status"))
    ]
    assert f"(#{snapshot.pk}, refitted after new judgments or settings)." in status
    assert "Up to date with every counted judgment." in status and "stale" not in status


def _page_queries(client, slug: str) -> int:
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("ranking:leaderboard", args=[slug])).status_code == 200
    return len(queries)


def test_the_page_query_count_does_not_grow_with_the_study(
    admin_client, built, django_assert_max_num_queries
):
    small = _page_queries(admin_client, "known")
    bigger = build_study(slug="bigger")
    add_known_verdicts(bigger)
    for i in range(4):
        judge(bigger, i, X, judge=f"llm-{i}", kind="llm", strength=3, strength_max=5)
        judge(bigger, i, None, judge=f"tie-{i}", kind="llm", strength=None, strength_max=5)
    _fitted(bigger)
    assert _page_queries(admin_client, "bigger") == small
    cache.clear()
    # 15: the judges counted per kind (the default board, the menu: one query per kind, each
    # reading at most the 50 first rows, so it costs the same with 3,000,000 judgments) and
    # which context fields the study has (the split menu), whatever the study's size.
    with django_assert_max_num_queries(15):
        admin_client.get(reverse("ranking:leaderboard", args=["known"]))


def test_the_api_returns_the_leaderboard_contract(admin_client, built):
    response = admin_client.get(reverse("api:leaderboard", args=["known"]), {"judges": "human"})
    assert response.status_code == 200
    body = response.json()
    assert {"study", "judges", "n_comparisons", "systems"} <= set(body)
    assert body["study"] == "known" and body["judges"] == "human"
    assert body["n_comparisons"] == 4
    first = body["systems"][0]
    assert {"system", "elo", "ci_low", "ci_high", "win_rate", "n", "axes"} <= set(first)
    assert first["system"] == X
    assert (
        admin_client.get(reverse("api:leaderboard", args=["known"]), {"judges": "x"}).status_code
        == 400
    )


def test_the_first_leaderboard_api_address_redirects_to_the_api(admin_client, built):
    old = reverse("ranking:api-leaderboard", args=["known"])
    response = admin_client.get(old, {"judges": "human"})
    assert response.status_code == 301
    assert response["Location"] == reverse("api:leaderboard", args=["known"]) + "?judges=human"
    assert admin_client.get(response["Location"]).json()["judges"] == "human"

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import Group, User

from completions.access import STUDY_ADMINS
from ranking.plots import PLOTS
from tests.conftest import assert_accessible
from tests.factories.ranking import X, Y, add_known_verdicts, build_study, judge

pytestmark = [pytest.mark.browser]

IMAGES_LOADED = """() => {
  const images = [...document.querySelectorAll('#results img[data-plot]')];
  return images.length > 0 && images.every(img => img.complete && img.naturalWidth > 0);
}"""


@pytest.fixture
def study_admin(transactional_db, postgres):
    # The page loads five images at once: in-memory SQLite cannot serve concurrent requests
    # from the live server's threads, so these tests run on PostgreSQL only.
    user = User.objects.create_user("lead", password="correct horse battery", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    return user


@pytest.fixture
def study(transactional_db):
    built = build_study(slug="browser-study")
    add_known_verdicts(built)
    judge(built, 0, X, judge="judge-gpt", kind="llm", strength=4, strength_max=5, family="gpt")
    judge(built, 3, Y, judge="judge-gpt", kind="llm", strength=2, strength_max=5, family="gpt")
    from ranking.services import snapshot_refit_study

    snapshot_refit_study(study_id=built.study.pk, trigger="nightly")  # pages read what it stored
    return built.study


def _login(pg, next_url: str) -> None:
    pg.goto(f"/admin/login/?next={next_url}")
    pg.fill("#id_username", "lead")
    pg.fill("#id_password", "correct horse battery")
    pg.click("input[type=submit]")
    pg.wait_for_url(f"**{next_url}")


def test_the_board_header_says_whom_it_counts_what_its_interval_is_and_what_is_too_few(
    page, study_admin, study, artifacts_dir
):
    url = "/studio/browser-study/leaderboard/"
    _login(page, url)
    header = page.locator("#board-header")
    # Humans judged: the page opens on their board, and says whom it counts.
    assert "4 human judgments" in header.locator("[data-field=judges]").inner_text()
    assert (
        "95% bootstrap percentile interval" in header.locator("[data-field=interval]").inner_text()
    )
    assert "needs 20 comparisons" in header.locator("[data-field=too-few]").inner_text()
    # Four comparisons a system: each row says so, with its count, and shows no number.
    too_few = page.locator("#elo-table + .table-scroll tbody tr.too-few-row")
    assert too_few.count() == 2
    assert "too few judgments (4 comparisons)" in too_few.nth(0).inner_text()
    # Two LLM verdicts: no combined board in the menu.
    assert page.locator("#id_judges option[value=all]").count() == 0
    page.screenshot(path=artifacts_dir / f"board-header-{page.viewport_name}.png", full_page=True)
    assert_accessible(page)

    page.select_option("#id_preset", "paper")
    page.wait_for_url("**preset=paper**")
    page.wait_for_function(
        "() => document.querySelector('#board-header [data-field=interval]')"
        ".textContent.includes('not a 95% interval')"
    )
    assert "Interval (not 95%)" in page.locator("#elo-table + .table-scroll thead").inner_text()
    assert_accessible(page)


@pytest.mark.usefixtures("few_judgments_shown")
def test_a_study_admin_filters_the_leaderboard_and_downloads_a_table(
    page, study_admin, study, artifacts_dir
):
    url = "/studio/browser-study/leaderboard/"
    _login(page, url)
    page.goto(url + "?judges=all")  # the combined board (the page opens on the human one)
    assert page.locator("h1").inner_text() == "Leaderboard: Study browser-study"
    rows = page.locator("#elo-table + .table-scroll tbody tr:not(.derived-row)")
    assert rows.count() == 2
    # The human system also gives the two derived rows (Best human, Average human).
    assert page.locator("#elo-table + .table-scroll tbody tr.derived-row").count() == 2
    assert X in rows.nth(0).inner_text()
    for image in page.locator("#results img[data-plot]").all():  # lazy: load when seen
        image.scroll_into_view_if_needed()
    page.wait_for_function(IMAGES_LOADED)
    assert page.locator("#results img[data-plot]").count() == len(PLOTS)

    page.select_option("#id_judges", "llm")
    page.wait_for_url("**judges=llm**")
    page.wait_for_function(
        "() => document.querySelector('#results .meta').textContent.includes('llm judges')"
    )
    page.wait_for_function(IMAGES_LOADED)
    src = page.locator("#results img[data-plot=forest]").get_attribute("src")
    assert "judges=llm" in src
    assert "2 comparisons" in page.locator("#results .meta").first.inner_text()
    page.screenshot(path=artifacts_dir / f"leaderboard-{page.viewport_name}.png", full_page=True)

    with page.expect_download() as download_info:
        page.locator("#results .downloads a", has_text="leaderboard").first.click()
    path = download_info.value.path()
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert {row["system"] for row in rows} == {X, Y}
    assert all(row["n"] == "2" for row in rows)
    assert_accessible(page)


def test_the_leaderboard_works_without_javascript(browser, live_server, study_admin, study):
    context = browser.new_context(java_script_enabled=False, base_url=live_server.url)
    pg = context.new_page()
    try:
        _login(pg, "/studio/browser-study/leaderboard/")
        pg.select_option("#id_subset", "adversarial")
        pg.click(".filters button[type=submit]")
        pg.wait_for_url("**subset=adversarial**")
        assert "adversarial contexts" in pg.locator("#results .meta").first.inner_text()
    finally:
        context.close()

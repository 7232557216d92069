"""Headers, friendly error pages, login throttling, the demo superuser and CSV injection."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.judgment_export import judgments_export
from annotation.models import Judgment, Pair
from annotation.services import assignment_next, judgment_submit, rater_enter
from completions.csv_safe import safe_cell
from ranking import tables
from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def admin_user():
    return get_user_model().objects.create_superuser("boss", "boss@example.org", "right-pw")


# --- headers -----------------------------------------------------------------------------


def test_every_page_has_a_csp_without_unsafe_inline_and_a_permissions_policy(admin_user):
    study = build_study()
    admin = Client()
    admin.force_login(admin_user)
    for client, url in [
        (Client(), f"/r/{study.invite_token}/consent/"),
        (Client(), "/admin/login/"),
        (admin, "/admin/"),
        (admin, f"/studio/{study.slug}/raters/"),
        (admin, f"/studio/{study.slug}/leaderboard/"),
    ]:
        response = client.get(url)
        assert response.status_code == 200, url
        policy = response["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "unsafe-inline" not in policy, url
        assert "frame-ancestors 'none'" in policy
        assert "camera=()" in response["Permissions-Policy"]
        assert "no-store" in response["Cache-Control"], url


def test_pages_have_no_inline_script_style_or_event_handler(admin_user):
    study = build_study(quality_check_rate=0)
    rater = Client()
    rater.get(f"/r/{study.invite_token}/")
    rater.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    admin = Client()
    admin.force_login(admin_user)
    pages = [
        rater.get(f"/r/{study.invite_token}/instructions/"),
        rater.get(f"/r/{study.invite_token}/item/"),
        admin.get(f"/studio/{study.slug}/raters/"),
        admin.get(f"/studio/{study.slug}/leaderboard/"),
        Client().get("/no-such-page/"),
    ]
    for response in pages:
        html = response.content.decode()
        assert not re.search(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", html)
        assert not re.search(r"\sstyle=\"", html)
        assert not re.search(r"\son[a-z]+=\"", html)
        assert "<style" not in html


def test_studio_pages_and_downloads_are_not_stored(admin_user):
    study = build_study()
    admin = Client()
    admin.force_login(admin_user)
    table = admin.get(f"/studio/{study.slug}/leaderboard/table/leaderboard.csv")
    assert table.status_code == 200 and table["Content-Type"].startswith("text/csv")
    assert "no-store" in table["Cache-Control"]


# --- friendly errors ---------------------------------------------------------------------


def test_an_unknown_link_gets_a_friendly_404_even_with_debug_on(settings):
    settings.DEBUG = True
    response = Client().get("/r/not-a-study/")
    html = response.content.decode()
    assert response.status_code == 404 and "Page not found" in html
    assert "Traceback" not in html and "URLconf" not in html and "DEBUG = True" not in html
    unknown = Client().get("/nowhere/at/all/")
    assert unknown.status_code == 404 and "URLconf" not in unknown.content.decode()


def test_opening_a_submit_url_directly_explains_instead_of_a_blank_405():
    response = Client().get(reverse("annotation:submit", args=["whatever"]))
    assert response.status_code == 405
    assert "cannot be opened directly" in response.content.decode()


def test_a_server_error_shows_the_friendly_500_page(settings):
    from core.errors import server_error

    response = server_error(None)
    assert response.status_code == 500
    assert "Something went wrong on our side" in response.content.decode()


def test_an_expired_form_token_explains_what_to_do():
    study = build_study()
    client = Client(enforce_csrf_checks=True)
    response = client.post(f"/r/{study.invite_token}/consent/", {"agree": "on"})
    assert response.status_code == 403
    assert "This page has expired" in response.content.decode()


# --- the demo superuser ------------------------------------------------------------------


def test_load_demo_refuses_the_superuser_on_a_real_database():
    out, err = io.StringIO(), io.StringIO()
    call_command("load_demo", stdout=out, stderr=err)
    assert "not created" in err.getvalue()
    assert "Admin login:      admin /" not in out.getvalue()
    assert not get_user_model().objects.filter(username="admin").exists()


def test_load_demo_with_force_prints_a_random_password_that_works():
    logins = []
    for _ in range(2):
        out = io.StringIO()
        call_command("load_demo", "--force", stdout=out)
        logins.append(re.search(r"Admin login:\s+admin / (\S+)", out.getvalue()).group(1))
    assert logins[0] != logins[1] and len(logins[1]) >= 12 and logins[1] != "heart-demo"
    assert Client().login(username="admin", password=logins[1])


# --- CSV injection -----------------------------------------------------------------------


FORMULAS = ['=HYPERLINK("http://evil")', "+1+1", "-2+3", "@SUM(A1)", "\t=1"]


def test_csv_cells_that_start_a_formula_are_neutralised():
    assert [safe_cell(f) for f in FORMULAS] == ["'" + f for f in FORMULAS]
    assert safe_cell(-1.5) == -1.5 and safe_cell("plain") == "plain"


def test_the_judgment_export_neutralises_formula_cells(tmp_path):
    study = build_study(quality_check_rate=0, items_per_rater=len(FORMULAS))
    for text in FORMULAS:
        rater = rater_enter(study=study)
        item = assignment_next(rater=rater)
        judgment_submit(rater=rater, assignment=item, choice=1, rationale=text)
    assert Judgment.objects.count() == len(FORMULAS)
    path = tmp_path / "j.csv"
    judgments_export(study=study, fmt="csv", path=path)
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    rationales = sorted(r["rationale"] for r in rows)
    # Stored stripped ("\t=1" -> "=1"), written with the apostrophe.
    assert all(r.startswith("'") for r in rationales), rationales


def test_leaderboard_csv_tables_neutralise_system_names():
    result = {
        "systems": [
            {
                "system": "=cmd|'/c calc'!A1",
                "elo": -12.5,
                "ci_low": -20.0,
                "ci_high": 3.0,
                "win_rate": 0.4,
                "n": 10,
                "axes": {},
            }
        ],
    }
    text = tables.to_csv("leaderboard", result)
    row = next(r for r in csv.reader(io.StringIO(text)) if "cmd" in ",".join(r))
    assert row[1] == "'=cmd|'/c calc'!A1" and row[4] == "-12.5"  # numbers stay numbers
    assert Pair.objects.count() == 0

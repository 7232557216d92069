"""The tour (docs/tour.md) walks a study of one's own only through pages and commands that
exist: every studio address resolves, every `manage.py` command and action is real, every button
it names is on its page, and no sentence still sends the admin to the Django admin for checks."""

from __future__ import annotations

import re
from pathlib import Path

from django.core.management import get_commands
from django.urls import Resolver404, resolve

from recruitment.management.commands.prolific import Command as ProlificCommand

ROOT = Path(__file__).resolve().parents[2]
TOUR = (ROOT / "docs" / "tour.md").read_text()


def _part(title: str) -> str:
    """The numbered step of the tour's second part whose bold title starts with `title`."""
    part = TOUR.split("### Before and after the raters", 1)[1]
    step = rf"^\d+\. \*\*{re.escape(title)}.*?(?=^\d+\. \*\*|^The same from)"
    match = re.search(step, part, re.S | re.M)
    assert match, title
    return " ".join(match.group(0).split())


def test_the_tour_no_longer_sends_the_admin_to_the_django_admin_for_checks():
    assert "no page for them" not in TOUR
    assert "/admin/annotation/qualitycheckitem" not in TOUR
    assert "quality_items_seed_from_rubric" not in TOUR
    raters = (ROOT / "docs" / "raters.md").read_text()
    assert "no page for them" not in raters and "/admin/annotation/qualitycheckitem" not in raters


def test_every_studio_address_in_the_tour_resolves():
    addresses = set(re.findall(r"`(/studio/my-study/[^`]*)`", TOUR))
    assert {"/studio/my-study/checks/", "/studio/my-study/prolific/"} <= addresses
    for address in addresses:
        try:
            resolve(address)
        except Resolver404:  # pragma: no cover - the failure message names the address
            raise AssertionError(f"the tour links {address}, which no view answers") from None


def test_every_command_in_the_tour_exists_with_the_actions_it_names():
    commands = get_commands()
    for name in set(re.findall(r"python manage\.py (\w+)", TOUR)):
        assert name in commands, name
    parser = ProlificCommand().create_parser("manage.py", "prolific")
    for action, rest in re.findall(r"python manage\.py prolific (\w+) ([^\n`]*)", TOUR):
        parser.parse_args([action, *rest.split()])
    prolific = _part("Prolific")
    for action in ("publish", "sync", "pay"):
        assert f"prolific {action} --study my-study" in prolific
        assert re.search(rf"prolific {action} --study my-study.*--dry-run", prolific)


def test_the_checks_and_prolific_steps_name_the_buttons_on_their_pages():
    checks_page = (ROOT / "templates" / "studio" / "checks.html").read_text()
    checks = _part("Quality checks")
    for words in ("Could a script pass?", "The checks", "Add a check", "Preview", "Edit", "Retire"):
        assert f"*{words}" in checks and words in checks_page, words
    assert "Make" in checks and "from the study's conversations" in checks_page
    prolific_page = (ROOT / "templates" / "recruitment" / "prolific.html").read_text()
    prolific = _part("Prolific")
    for words in (
        "Publish: dry run",
        "Publish on Prolific",
        "Read submissions back",
        "Pay: dry run",
        "Approve, screen out, reject and pay bonuses",
        "Pay and places",
        "Save Prolific settings",
    ):
        assert f"*{words}*" in prolific, words
        assert words in prolific_page, words
    assert "http://127.0.0.1:8767" in prolific
    demo = (ROOT / "scripts" / "demo.sh").read_text()
    assert 'FAKE_PROLIFIC_PORT="${FAKE_PROLIFIC_PORT:-8767}"' in demo

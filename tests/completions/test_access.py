"""Per-study admins: who reaches which study (Study.admins; superusers reach all)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied

from completions.access import (
    STUDY_ADMINS,
    access_study_for_admin,
    can_admin_study,
    studies_for_admin,
)
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def _admin(name: str) -> User:
    user = User.objects.create_user(name, password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])
    return user


def test_an_admin_reaches_the_studies_listing_them_or_listing_nobody():
    alice, bob = _admin("alice"), _admin("bob")
    hers, his, shared = StudyFactory(slug="hers"), StudyFactory(slug="his"), StudyFactory()
    hers.admins.add(alice)
    his.admins.add(bob)
    assert set(studies_for_admin(alice)) == {hers, shared}
    assert can_admin_study(alice, hers) and can_admin_study(alice, shared)
    assert not can_admin_study(alice, his)
    with pytest.raises(PermissionDenied, match="not an admin of this study"):
        access_study_for_admin(alice, "his")
    assert access_study_for_admin(bob, "his") == his


def test_superusers_reach_every_study_and_others_none():
    root = User.objects.create_superuser("root", password="pw")
    listed = StudyFactory()
    listed.admins.add(_admin("alice"))
    assert can_admin_study(root, listed) and list(studies_for_admin(root)) == [listed]
    staff = User.objects.create_user("staff", password="pw", is_staff=True)
    assert not studies_for_admin(staff).exists() and not can_admin_study(staff, listed)
    with pytest.raises(PermissionDenied):
        access_study_for_admin(staff, listed.slug)


def test_the_studio_home_lists_only_the_studies_an_admin_reaches(client):
    alice, bob = _admin("alice"), _admin("bob")
    hers = StudyFactory(slug="hers", name="Private study of Alice")
    his = StudyFactory(slug="his", name="Private study of Bob")
    StudyFactory(slug="shared", name="Study for every admin")
    hers.admins.add(alice)
    his.admins.add(bob)
    client.force_login(alice)
    html = client.get("/studio/").content.decode()
    assert "Private study of Alice" in html and "Study for every admin" in html
    assert "Private study of Bob" not in html and "/studio/his/" not in html

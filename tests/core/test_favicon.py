"""Every page names the icon, and browsers that ask for /favicon.ico anyway get it: no 404."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories.annotation import build_study

pytestmark = pytest.mark.django_db


def test_pages_name_the_icon_and_favicon_ico_leads_to_it():
    study = build_study()
    for url in (f"/r/{study.invite_token}/", "/no/such/page/"):
        html = Client().get(url, follow=True).content.decode()
        assert '<link rel="icon" href="/static/favicon.svg"' in html, url
    icon = Client().get("/favicon.ico", follow=True)
    assert icon.redirect_chain == [("/static/favicon.svg", 301)]
    assert icon.status_code == 200 and b"<svg" in b"".join(icon.streaming_content)

"""Every login form the site has, brute-forced: one lockout per client address and per username.

The login forms are found by walking every URL the resolver knows (Django's admin included)
and looking for a password field on the page, so a login form added later is brute-forced
here without editing this test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from labelling.access import LABELLERS

pytestmark = pytest.mark.django_db
LIMIT = 3
LOCKED = "Sign-in is paused"


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT


@pytest.fixture
def boss():
    """A superuser who is also a labeller: every login form would let them in."""
    user = get_user_model().objects.create_superuser("boss", "boss@example.org", "right-pw")
    user.groups.add(Group.objects.get_or_create(name=LABELLERS)[0])
    return user


def _plain_paths(patterns, prefix: str = "") -> Iterator[str]:
    """Every URL of the site that needs no parameter (a login page needs none)."""
    for entry in patterns:
        if getattr(entry.pattern, "converters", {}) or "(?P<" in str(entry.pattern):
            continue
        route = str(entry.pattern).lstrip("^").rstrip("$")
        if isinstance(entry, URLResolver):
            yield from _plain_paths(entry.url_patterns, prefix + route)
        elif isinstance(entry, URLPattern):
            yield "/" + prefix + route


def login_urls() -> list[str]:
    found = []
    for path in sorted(set(_plain_paths(get_resolver().url_patterns))):
        page = Client().get(path)
        if page.status_code == 200 and 'type="password"' in page.content.decode(errors="replace"):
            found.append(path)
    return found


def test_the_walk_finds_the_admin_and_labellers_logins():
    urls = login_urls()
    assert {"/admin/login/", "/labelling/login/"} <= set(urls), urls


def _try(client: Client, url: str, password: str, username: str = "boss"):
    return client.post(url, {"username": username, "password": password})


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_every_login_form_locks_a_guessing_client_out(boss):
    for url in login_urls():
        client = Client(REMOTE_ADDR=f"192.0.2.{len(url)}")
        statuses = [_try(client, url, f"guess-{i}", f"user{i}").status_code for i in range(LIMIT)]
        # The form again (with its error), until the LIMIT-th failure locks the address out.
        assert statuses == [200] * (LIMIT - 1) + [429], url
        blocked = _try(client, url, "right-pw")
        assert blocked.status_code == 429, url
        assert LOCKED in blocked.content.decode() and "minutes" in blocked.content.decode()
        assert not _signed_in(client), url
        # Every other login form refuses this address too.
        for other in login_urls():
            assert _try(client, other, "right-pw").status_code == 429, (url, other)
        get_user_model().objects.filter(pk=boss.pk).update(last_login=None)
        from axes.utils import reset

        reset()


def test_every_login_form_locks_a_guessed_username_from_any_address(boss):
    for url in login_urls():
        statuses = [
            _try(Client(REMOTE_ADDR=f"198.51.100.{i}"), url, f"guess-{i}").status_code
            for i in range(LIMIT)
        ]
        assert statuses == [200] * (LIMIT - 1) + [429], url
        fresh = Client(REMOTE_ADDR="203.0.113.9")
        refused = _try(fresh, url, "right-pw", username=" BOSS")
        assert refused.status_code == 429 and not _signed_in(fresh), url
        for other in login_urls():  # the superuser has no side door
            again = Client(REMOTE_ADDR="203.0.113.10")
            assert _try(again, other, "right-pw").status_code == 429, (url, other)
            assert not _signed_in(again)
        from axes.utils import reset

        reset()


def test_a_lockout_does_not_spread_to_other_accounts_and_addresses(boss):
    get_user_model().objects.create_user("ann", password="ann-pw-123")
    guesser = Client(REMOTE_ADDR="192.0.2.50")
    for i in range(LIMIT):
        _try(guesser, "/admin/login/", f"guess-{i}")
    ann = Client(REMOTE_ADDR="192.0.2.51")
    assert _try(ann, "/labelling/login/", "ann-pw-123", username="ann").status_code == 302


def test_successful_logins_do_not_count(boss):
    for _ in range(LIMIT + 2):
        client = Client()
        assert _try(client, "/admin/login/", "right-pw").status_code == 302
        assert _signed_in(client)


def test_a_locked_username_is_refused_even_where_no_request_is_given(boss):
    from django.contrib.auth import authenticate

    for i in range(LIMIT):
        _try(Client(REMOTE_ADDR=f"198.51.100.{i}"), "/admin/login/", f"guess-{i}")
    assert authenticate(username="boss", password="right-pw") is None


@pytest.mark.parametrize(
    ("login", "lands"), [("/admin/login/", "/"), ("/labelling/login/", "/labelling/")]
)
def test_a_sign_in_with_a_foreign_next_lands_on_a_real_page(boss, login, lands):
    client = Client()
    url = f"{login}?next=https://evil.example/"
    page = client.get(url)
    assert page.status_code == 200
    signed_in = client.post(
        url, {"username": "boss", "password": "right-pw", "next": "https://evil.example/"}
    )
    assert signed_in.status_code == 302 and signed_in.url == lands
    assert "evil.example" not in signed_in.url and "/accounts/profile/" not in signed_in.url
    assert client.get(signed_in.url).status_code == 200

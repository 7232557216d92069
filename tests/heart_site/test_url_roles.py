"""Every URL the resolver knows, as every kind of visitor: the expected status for each.

The walk reads `get_resolver().url_patterns`, so a new page is covered without editing this
test; it fails for a view that does not declare its role (`heart_role`, set by
`completions.access.study_admin_required`, `annotation.views.rater_required` or
`core.roles.role(...)`; DRF views: a class attribute) and for a URL keyword this test
cannot fill: add it to KWARGS (by keyword name) or URL_KWARGS (by URL name) below.
Django's own admin (`/admin/...`, with its own permission system) is left out (its login is
throttled with every other login form: tests/core/test_logins.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from annotation.access import RATER_COOKIE, rater_cookie_value
from annotation.services import assignment_next, rater_join
from completions.access import STUDY_ADMINS, WRITERS
from completions.models import Completion
from labelling.access import LABELLERS
from labelling.services import sample_create
from tests.factories import (
    EndpointFactory,
    ImportJobFactory,
    QualityCheckItemFactory,
    ReleaseHoldFactory,
    RunFactory,
    UnitFactory,
)
from tests.factories.annotation import build_study
from writing.services import (
    writer_consent,
    writer_enter,
    writing_contexts_open,
    writing_next,
    writing_settings,
)

pytestmark = pytest.mark.django_db

# URL keyword -> its value in the fixture study (a callable of the fixture dict).
KWARGS = {
    "slug": lambda f: f["study"].slug,
    "invite_token": lambda f: f["study"].invite_token,
    "token": lambda f: f["assignment"].token,
    "pseudonym": lambda f: f["rater"].pseudonym,
}
# Per URL name, for keywords whose value depends on the page (e.g. which plot).
URL_KWARGS = {
    "ranking:plot": {"name": "forest", "fmt": "svg"},
    "ranking:table": {"name": "leaderboard"},
    "llm:run-action": {"action": "cancel"},
    "ranking:strategies-heatmap": {"fmt": "svg"},
    "downloads:file": {"name": "judgments.csv"},
    "labelling:adjudicate": {"token": lambda f: f["sample"].items.first().token},
    "downloads:hold": {"pk": lambda f: f["release_hold"].pk, "action": "keep-out"},
    "format_schema": {"kind": "contexts"},
    "care:writer_skip": {"token": lambda f: f["writing"].token},
    "care:writer_break": {"invite_token": lambda f: f["writing_settings"].invite_token},
    "care:writer_support": {"invite_token": lambda f: f["writing_settings"].invite_token},
    "care:writer_stop": {"invite_token": lambda f: f["writing_settings"].invite_token},
    "studio:checks:edit": {"pk": lambda f: f["quality_item"].pk},
    "studio:checks:preview": {"pk": lambda f: f["quality_item"].pk},
    "studio:checks:retire": {"pk": lambda f: f["quality_item"].pk},
}
# Per URL namespace, for keywords whose value depends on the area (writer links, texts).
NAMESPACE_KWARGS = {
    "writing": {
        "invite_token": lambda f: f["writing_settings"].invite_token,
        "token": lambda f: f["writing"].token,
    },
    "writers": {"token": lambda f: f["writing"].token},
    "studio": {"pk": lambda f: f["import_job"].pk},
    "llm": {"run_id": lambda f: f["llm_run"].pk, "unit_id": lambda f: f["llm_unit"].pk},
    "api": {"run_id": lambda f: f["llm_run"].pk},
    "labelling": {"pk": lambda f: f["sample"].pk, "token": lambda f: f["sample"].token},
}
ROLES = ("anonymous", "rater", "writer", "labeller", "user", "staff", "study_admin")
# Who may use a page of each declared role (besides everyone for "public").
ALLOWED = {
    "public": set(ROLES),
    "rater": {"rater"},
    "writer": {"writer"},
    "labeller": {"labeller"},
    "study_admin": {"study_admin"},
    "monitoring": set(),  # the Prometheus scraper: a token or an allowed address, no account
}
# Our own pages under admin/ (the rest of admin/ is Django's, with its own permissions).
OWN_ADMIN_PAGES: set[str] = set()


@dataclass(frozen=True)
class Route:
    path: str  # with <kw> placeholders as in the pattern
    name: str
    view: object
    keywords: tuple[str, ...]

    @property
    def role(self) -> str | None:
        for candidate in (self.view, getattr(self.view, "cls", None)):
            candidate = candidate or getattr(self.view, "view_class", None)
            if candidate is not None and getattr(candidate, "heart_role", None):
                return candidate.heart_role
        return getattr(getattr(self.view, "view_class", None), "heart_role", None)


def _walk(patterns, prefix: str = "", namespace: str = "", keywords: tuple = ()) -> Iterator[Route]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            if str(entry.pattern) == "admin/" and ns == "admin:":
                continue  # Django's admin
            inherited = keywords + tuple(getattr(entry.pattern, "converters", {}))
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern), ns, inherited)
        elif isinstance(entry, URLPattern):
            yield Route(
                path=prefix + str(entry.pattern),
                name=f"{namespace}{entry.name}" if entry.name else "",
                view=entry.callback,
                keywords=keywords + tuple(entry.pattern.converters),
            )


def routes() -> list[Route]:
    found = list(_walk(get_resolver().url_patterns))
    return [r for r in found if not r.path.startswith("admin/") or r.name in OWN_ADMIN_PAGES]


def _fill(route: Route, fixture: dict) -> str:
    import re

    values = dict(URL_KWARGS.get(route.name, {}))
    by_area = NAMESPACE_KWARGS.get(route.name.partition(":")[0], {})
    for keyword in route.keywords:
        if keyword in values:
            continue
        if keyword in by_area:
            values[keyword] = by_area[keyword](fixture)
            continue
        if keyword not in KWARGS:
            pytest.fail(
                f"URL {route.name or route.path!r}: no value for the keyword {keyword!r}; "
                "add it to KWARGS or URL_KWARGS in tests/heart_site/test_url_roles.py"
            )
        values[keyword] = KWARGS[keyword](fixture)
    values = {k: v(fixture) if callable(v) else v for k, v in values.items()}

    def value(match: re.Match) -> str:
        return str(values[match.group(1)])

    path = re.sub(r"<(?:[a-z_]+:)?([A-Za-z_][A-Za-z0-9_]*)>", value, route.path)
    if path.startswith("^") or "(?P<" in path:
        pytest.fail(f"URL {route.name!r}: regex patterns are not supported by this walk")
    return "/" + path


@pytest.fixture
def fixture() -> dict:
    cache.clear()
    study = build_study(quality_check_rate=0)
    rater = rater_join(study=study)
    assignment = assignment_next(rater=rater)
    ws = writing_settings(study)
    ws.enabled = True
    ws.save(update_fields=["enabled"])
    writing_contexts_open(study=study)
    writer_user = get_user_model().objects.create_user("walk-writer", password="pw")
    writer_user.groups.add(Group.objects.get_or_create(name=WRITERS)[0])
    writer = writer_consent(writer=writer_enter(study=study, user=writer_user))
    llm_run = RunFactory(study=study, kind="judge")
    endpoint = EndpointFactory(name="walk", provider="openai", model="m", family="f")
    llm_unit = UnitFactory(
        run=llm_run, key="walk", endpoint=endpoint, status="invalid", raw_reply="not JSON"
    )
    return {
        "study": study,
        "rater": rater,
        "assignment": assignment,
        "writing_settings": ws,
        "writer_user": writer_user,
        "writing": writing_next(writer=writer),
        "import_job": ImportJobFactory(study=study, kind="contexts", filename="c.jsonl"),
        "llm_run": llm_run,
        "llm_unit": llm_unit,
        "quality_item": QualityCheckItemFactory(study=study),
        "sample": sample_create(study=study, size=2),
        "release_hold": ReleaseHoldFactory(
            study=study,
            kind="writer_text",
            completion=Completion.objects.filter(context__study=study).first(),
            found="e-mail address",
        ),
    }


def _client(role: str, fixture: dict) -> Client:
    client = Client()
    if role == "anonymous":
        return client
    if role == "rater":
        client.cookies[RATER_COOKIE] = rater_cookie_value([fixture["rater"].token])
        return client
    User = get_user_model()
    if role == "writer":
        client.force_login(fixture["writer_user"])
        return client
    if role == "labeller":
        user = User.objects.create_user("walk-labeller", password="pw")
        user.groups.add(Group.objects.get_or_create(name=LABELLERS)[0])
        client.force_login(user)
        return client
    if role == "study_admin":
        user = User.objects.create_superuser("walk-admin", "a@example.org", "pw")
    else:
        user = User.objects.create_user(f"walk-{role}", password="pw", is_staff=role == "staff")
    client.force_login(user)
    return client


def _request(client: Client, url: str):
    """GET, or POST when the view takes only POST (an empty form: it must refuse politely)."""
    response = client.get(url)
    if response.status_code == 405:
        response = client.post(url, {}, HTTP_HX_REQUEST="true")
    return response


def test_every_view_declares_its_role():
    missing = [r.name or r.path for r in routes() if r.role not in ALLOWED]
    assert not missing, f"views without a (known) heart_role: {missing}"


def test_the_walk_sees_the_pages_of_every_area():
    names = {r.name for r in routes()}
    assert {"healthz", "annotation:submit", "studio:raters", "ranking:leaderboard"} <= names


@pytest.mark.parametrize("role", ROLES)
def test_every_url_answers_each_role_as_expected(role, fixture):
    Group.objects.get_or_create(name=STUDY_ADMINS)
    client = _client(role, fixture)
    wrong = []
    for route in routes():
        url = _fill(route, fixture)
        response = _request(client, url)
        status = response.status_code
        if status >= 500:
            wrong.append((url, status, "server error"))
        elif role in ALLOWED.get(route.role, set()):
            # Allowed: never refused. A POST with an empty form may say 400 (bad input).
            if status in (401, 403, 404, 405, 429):
                wrong.append((url, status, f"{role} refused on a {route.role} page"))
        elif route.role in ("rater", "writer"):
            # The door (entry, consent) is open to all (crowd raters and writers come by link);
            # everything else sends a stranger to the consent page or answers 404 for an item
            # or text token not theirs.
            if status not in (200, 302, 403, 404):
                wrong.append((url, status, f"unexpected for a non-{route.role}"))
            if status == 200 and route.name.partition(":")[2] not in ("entry", "consent"):
                wrong.append((url, status, f"a {route.role} page served to a stranger"))
        else:
            denied = status in (401, 403) or (
                status == 302 and "/login/" in response.get("Location", "")
            )
            if not denied:
                wrong.append((url, status, f"{role} let into a {route.role} page"))
    assert not wrong, wrong


def test_the_walk_flags_a_view_without_a_role_and_an_unknown_keyword():
    from django.http import HttpResponse
    from django.urls import path

    def undeclared(request, mystery):
        return HttpResponse()

    found = list(_walk([path("x/<str:mystery>/", undeclared, name="x")]))
    assert [r.role for r in found] == [None]
    with pytest.raises(pytest.fail.Exception, match="no value for the keyword 'mystery'"):
        _fill(found[0], {})

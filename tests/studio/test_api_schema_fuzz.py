"""Schemathesis against the OpenAPI schema: generated requests to every /api/ operation, in
process through the WSGI app, never get a 500. Examples are bounded so the run takes about a
minute; the schema itself must be valid OpenAPI 3.1."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core import signals
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error

from annotation.judgment_io import judgments_import
from tests.factories import RunFactory, StudyFactory

SAMPLES = Path(__file__).parents[1] / "annotation" / "samples"
SLUG = "fuzzed"
EXAMPLES = 25


@pytest.fixture
def api_schema(db, tmp_path, settings_override):
    study = StudyFactory(slug=SLUG)
    judgments_import(study=study, path=SAMPLES / "arena_battles.json", fmt="arena")
    run = RunFactory(study=study, kind="judge")
    user = User.objects.create_superuser("fuzzer", password="pw")
    token = Token.objects.create(user=user)
    # As Django's test client does: requests must not close the test's connection.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        headers = {"Authorization": f"Token {token.key}"}
        loaded = schemathesis.openapi.from_wsgi(
            "/api/schema/?format=json", WSGIHandler(), headers=headers
        )
        yield loaded.include(path_regex="^/api/"), headers, run.pk
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def settings_override(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"user": "100000/minute", "anon": "100000/minute"},
    }
    from rest_framework.throttling import SimpleRateThrottle

    original = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    cache.clear()
    yield
    SimpleRateThrottle.THROTTLE_RATES = original
    cache.clear()


@pytest.mark.django_db
def test_no_generated_request_gets_a_server_error(api_schema):
    api_schema, headers, run_id = api_schema
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 10
    statuses: Counter[tuple[str, int]] = Counter()
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def no_server_error(case):
            if case.path_parameters and "slug" in case.path_parameters:
                # Half the requests go to the real study (and run), so the handlers run, not
                # only a 404.
                key = json.dumps([case.query, case.path_parameters], sort_keys=True, default=str)
                if len(key) % 2:
                    case.path_parameters["slug"] = SLUG
                    if "run_id" in case.path_parameters:
                        case.path_parameters["run_id"] = run_id
            response = case.call(headers=headers)
            statuses[(case.operation.label, response.status_code)] += 1
            case.validate_response(response, checks=[not_a_server_error], headers=headers)

        no_server_error()
    # The fuzzing reached the handlers (past auth and the study lookup) on every operation:
    # 2xx, a 400 naming what was wrong with the generated input, or a 409 (a run's state).
    reached = {label for label, code in statuses if code < 300 or code in (400, 409)}
    assert reached == {operation.label for operation in operations}, statuses

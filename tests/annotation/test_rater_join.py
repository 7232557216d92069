"""Joins during a launch burst: the study lock that keeps the Prolific places exact excludes
other joins only, never the answers in flight (which reference the study row).

Real concurrency on PostgreSQL: a second connection holds an uncommitted insert that names the
study, as every open submit does (its foreign-key check takes FOR KEY SHARE on the study row).
"""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.db import connection, connections

from annotation.models import Rater
from annotation.services import StudyFull, rater_join
from tests.factories import StudyFactory


def _other_connection() -> psycopg.Connection:
    params = connection.get_connection_params()
    return psycopg.connect(
        dbname=connection.settings_dict["NAME"],
        **{k: v for k, v in params.items() if k in ("host", "port", "user", "password")},
    )


def test_a_join_does_not_wait_for_an_open_transaction_that_references_the_study(
    postgres, transactional_db
):
    study = StudyFactory(max_active_raters=10)
    other = _other_connection()
    try:
        # What the foreign-key check of an open insert naming the study holds until commit.
        other.execute("SELECT 1 FROM completions_study WHERE id = %s FOR KEY SHARE", [study.pk])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")  # the old FOR UPDATE waited here
        rater = rater_join(study=study)
    finally:
        other.rollback()
        other.close()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
    assert rater.consented_at is not None
    assert list(Rater.objects.filter(study=study).values_list("pk", flat=True)) == [rater.pk]


def test_concurrent_joins_still_respect_the_places_exactly(postgres, transactional_db):
    study = StudyFactory(max_active_raters=3)
    joined: list[int] = []
    full: list[int] = []
    errors: list[BaseException] = []

    def join(index: int) -> None:
        try:
            prolific = {"pid": f"P{index}", "study_id": "S", "session_id": f"X{index}"}
            joined.append(rater_join(study=study, prolific=prolific).pk)
        except StudyFull:
            full.append(index)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=join, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors
    assert len(joined) == 3 and len(full) == 5
    assert Rater.objects.filter(study=study).count() == 3


@pytest.fixture(autouse=True)
def _close_connections():
    yield
    connections.close_all()

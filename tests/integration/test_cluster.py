"""Two web nodes and two worker nodes behind HAProxy, one of each SIGKILLed mid-burst, at a
size CI can run (benchmarks/bench_cluster.py; docs/deployment.md lays the nodes out).

Each node is a process of its own on a port of its own: HAProxy, two gunicorns, PgBouncer in
session mode, a Redis of the run's own, the fake LLM server, two Celery workers and beat. The
script's own checks must hold, and this test counts the kept database with SQL of its own:
every acknowledged answer stored once, every LLM unit done with one verdict per pair, judge and
order, and a leaderboard snapshot over every judgment stored after the kill.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest

from heart_site.settings_test import CHECKOUT_ID
from tests.conftest import _missing
from tests.integration.burst import (
    base_database_url,
    database_counts,
    free_ports,
    kept_database,
    run_script,
)

pytestmark = pytest.mark.integration
RATERS = 80


def _installed(name: str) -> bool:
    return bool(shutil.which(name)) or Path(f"/usr/sbin/{name}").exists()


def test_a_killed_web_node_and_worker_node_lose_and_double_nothing():
    base_database_url()
    for program in ("haproxy", "pgbouncer", "redis-server"):
        if not _installed(program):
            _missing(f"needs {program} (apt-get install haproxy pgbouncer redis-server)")
    name = f"heart_cluster_{CHECKOUT_ID}"
    with kept_database(name) as url:
        result = run_script(
            "bench_cluster.py",
            name,
            *("--raters", str(RATERS), "--arrival", "8", "--read", "0.5"),
            *("--kill-at", "8", "--llm-ttft", "300", "--base-port", str(free_ports(6))),
        )
        with psycopg.connect(url) as conn:
            study = conn.execute("SELECT id FROM completions_study").fetchone()[0]
            counts = database_counts(conn, study)
            units = dict(conn.execute("SELECT status, count(*) FROM llm_unit GROUP BY status"))
            verdicts = conn.execute(
                "SELECT count(*), count(DISTINCT (pair_id, judge, shown_left)) FROM"
                " annotation_judgment WHERE study_id = %s AND judge_kind = 'llm'",
                [study],
            ).fetchone()
            board = conn.execute(
                "SELECT max_judgment_id, (SELECT max(j.id) FROM annotation_judgment j"
                " LEFT JOIN annotation_rater r ON r.id = j.rater_id"
                " WHERE j.study_id = %s AND j.pair_id IS NOT NULL AND (r.id IS NULL OR"
                " (r.exclusion_override IS NOT TRUE AND NOT (r.flagged"
                " AND r.exclusion_override IS DISTINCT FROM false))))"
                " FROM ranking_leaderboardsnapshot WHERE judges = 'all'"
                " ORDER BY created_at DESC LIMIT 1",
                [study],
            ).fetchone()
    assert all(result["checks"].values()), result["checks"]
    assert counts["raters"] == RATERS and counts["prolific ids twice"] == 0
    assert counts["human answers"] == result["pages"]["submit (answer + next)"]["count"]
    assert counts["assignments answered twice"] == 0 and counts["pairs over quota"] == 0
    assert counts["places a rater left short could take"] == 0
    assert counts["pair counters off"] == 0
    # The run went on past the kill and ended with every unit done, each stored once.
    assert set(units) == {"done"} and units["done"] == result["counts"]["LLM units"]
    assert verdicts[0] == verdicts[1] == units["done"]
    assert result["counts"]["units in flight at the kill"] > 0  # the kill hit work under way
    # The refit a surviving worker ran counted every judgment the boards count (not quality
    # checks, not excluded raters'), the last one included.
    assert board is not None and board[0] == board[1]

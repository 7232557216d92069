"""Running the launch-burst and cluster scripts from the tests, and reading their database.

The scripts (benchmarks/bench_launch_burst.py, benchmarks/bench_cluster.py) build their study in
a database of their own next to DATABASE_URL; the tests keep it (--keep), count its rows with
their own queries, and drop it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg

from tests.conftest import ROOT, _missing

PORTS = range(8200, 8300)  # the ports this machine's engineers may use


def base_database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        _missing("needs PostgreSQL (set DATABASE_URL)")
    return url


def free_ports(count: int) -> int:
    """The first of `count` consecutive free ports in 8200-8299."""

    def free(port: int) -> bool:
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                return False
        return True

    for first in range(PORTS.start, PORTS.stop - count, count):
        if all(free(p) for p in range(first, first + count)):
            return first
    raise RuntimeError("no free block of ports in 8200-8299")


def run_script(script: str, database: str, *args: str, timeout: float = 900) -> dict:
    """Run a benchmark script with --json --keep; its JSON line (the run must exit 0)."""
    env = {**os.environ, "BENCH_DB_NAME": database}
    done = subprocess.run(
        [sys.executable, f"benchmarks/{script}", *args, "--json", "--keep"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert lines, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(lines[-1])


@contextmanager
def kept_database(name: str) -> Iterator[str]:
    """The address of the database a script will keep (--keep); dropped afterwards."""
    parts = urlsplit(base_database_url())
    admin = urlunsplit(parts._replace(scheme="postgresql", path="/postgres"))
    try:
        yield urlunsplit(parts._replace(scheme="postgresql", path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def database_counts(conn: psycopg.Connection, study: int) -> dict[str, int]:
    """What the tests check, counted with SQL of their own (not the scripts' checks)."""

    def one(sql: str) -> int:
        row = conn.execute(sql, {"study": study}).fetchone()
        assert row is not None
        return int(row[0])

    return {
        "raters": one("SELECT count(*) FROM annotation_rater WHERE study_id = %(study)s"),
        "prolific ids twice": one(
            "SELECT count(*) FROM (SELECT external_id FROM annotation_rater"
            " WHERE study_id = %(study)s GROUP BY external_id HAVING count(*) > 1) t"
        ),
        "human answers": one(
            "SELECT count(*) FROM annotation_judgment WHERE study_id = %(study)s"
            " AND judge_kind = 'human'"
        ),
        "assignments answered twice": one(
            "SELECT count(*) FROM (SELECT assignment_id FROM annotation_judgment"
            " WHERE study_id = %(study)s AND assignment_id IS NOT NULL"
            " GROUP BY assignment_id HAVING count(*) > 1) t"
        ),
        "pair counters off": one(
            "SELECT count(*) FROM annotation_pair p WHERE p.study_id = %(study)s AND"
            " p.n_judgments <> (SELECT count(*) FROM annotation_judgment j"
            " WHERE j.pair_id = p.id AND j.judge_kind = 'human')"
        ),
        "pairs over quota": one(
            "SELECT count(*) FROM annotation_pair p WHERE p.study_id = %(study)s AND"
            " p.n_judgments > p.quota"
        ),
        "pairs not at quota": one(
            "SELECT count(*) FROM annotation_pair p WHERE p.study_id = %(study)s AND"
            " p.n_judgments < p.quota"
        ),
        # A place left empty while a rater who could take it was sent away short: one who
        # passed, ended with fewer real items than the study gives, never had that pair and
        # had fewer than the study's limit of items from its context (the limit rises to
        # fill a queue from few contexts, as annotation.selectors.per_context_limit says).
        "places a rater left short could take": one(
            "SELECT count(*) FROM annotation_pair p"
            " JOIN completions_study s ON s.id = p.study_id"
            " WHERE p.study_id = %(study)s AND p.n_judgments < p.quota AND EXISTS ("
            "  SELECT 1 FROM annotation_rater r JOIN care_ratercare c ON c.rater_id = r.id"
            "  WHERE r.study_id = p.study_id AND c.qualification = 'passed'"
            "  AND (SELECT count(*) FROM annotation_judgment j WHERE j.rater_id = r.id"
            "       AND j.pair_id IS NOT NULL) < s.items_per_rater"
            "  AND NOT EXISTS (SELECT 1 FROM annotation_assignment a"
            "       WHERE a.rater_id = r.id AND a.pair_id = p.id)"
            "  AND (SELECT count(*) FROM annotation_assignment a JOIN annotation_pair q"
            "       ON q.id = a.pair_id WHERE a.rater_id = r.id AND q.context_id = p.context_id)"
            "   < GREATEST(s.max_items_per_context, 1, CEIL(s.items_per_rater::numeric / ("
            "       SELECT count(DISTINCT context_id) FROM annotation_pair"
            "       WHERE study_id = p.study_id))))"
        ),
        "leases left": one(
            "SELECT count(*) FROM annotation_assignment a JOIN annotation_rater r"
            " ON r.id = a.rater_id WHERE r.study_id = %(study)s AND a.status = 'leased'"
        ),
    }

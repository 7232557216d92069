"""A Prolific launch burst, at a size CI can run: raters arriving together go through the
Prolific link, consent, instructions, qualification and their items against gunicorn (DEBUG=0)
on PostgreSQL, from benchmarks/bench_launch_burst.py's load generator (asyncio + aiohttp).

The script's own checks must hold, and this test counts the kept database with SQL of its own:
no error on any page, every acknowledged answer stored once, no pair over its quota and no place
left empty that a rater sent away short could have taken, one rater per Prolific participant.
The full size (1,000 raters within 60 s) and its figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import psycopg
import pytest

from heart_site.settings_test import CHECKOUT_ID
from tests.integration.burst import (
    base_database_url,
    database_counts,
    free_ports,
    kept_database,
    run_script,
)

pytestmark = pytest.mark.integration
RATERS = 80


@pytest.mark.parametrize("read", ["0.5", "0"], ids=["reading", "stress"])
def test_a_launch_burst_loses_nothing_doubles_nothing_and_shows_no_error(read):
    base_database_url()
    name = f"heart_burst_{CHECKOUT_ID}"
    port = free_ports(1)
    with kept_database(name) as url:
        result = run_script(
            "bench_launch_burst.py",
            name,
            *("--raters", str(RATERS), "--arrival", "6", "--read", read, "--port", str(port)),
        )
        with psycopg.connect(url) as conn:
            counts = database_counts(conn, result["plan"]["study"])
    pages = result["pages"]
    assert all(result["checks"].values()), result["checks"]
    assert {page: r["errors"] for page, r in pages.items() if r["errors"]} == {}
    assert result["server_errors"] == []
    # Every participant arrived, consented once and finished one way or the other.
    assert counts["raters"] == RATERS and counts["prolific ids twice"] == 0
    assert sum(result["outcomes"].values()) == RATERS and "error" not in result["outcomes"]
    assert pages["qualify POST"]["count"] == 5 * RATERS  # 2 training + 3 qualification each
    # Every acknowledged answer is one stored row; the double clicks stored nothing more.
    assert counts["human answers"] == pages["submit (answer + next)"]["count"]
    assert pages["submit (posted twice)"]["count"] > 0
    assert counts["assignments answered twice"] == 0
    # The last places were raced for: no pair over its quota, every counter equal to its
    # judgments, and a place left empty only where no rater who left short could take it
    # (each had judged that pair, or a pair of its context: one per context per rater).
    assert counts["pairs over quota"] == 0 and counts["pair counters off"] == 0
    assert counts["places a rater left short could take"] == 0 and counts["leases left"] == 0
    assert result["counts"]["places filled"] >= 0.98 * result["plan"]["places"]

#!/usr/bin/env bash
# The whole test suite (arguments go to pytest: `scripts/test.sh -m "not browser"`). Uses
# PostgreSQL and Redis on 127.0.0.1 when they answer (CI requires them: REQUIRE_SERVICES=1 turns
# a missing service into a failure instead of a skip). The tests that restart PostgreSQL or
# stop Redis start throw-away servers of their own (tests/servers.py).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh

answers() { .venv/bin/python - "$1" "$2" <<'PY'
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1).close()
except OSError:
    sys.exit(1)
PY
}
if [ -z "${DATABASE_URL:-}" ] && answers 127.0.0.1 5432; then
  export DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres
fi
# This checkout's own test database (test_heart_<id>) and Redis db (1-15), both from a short hash
# of its path (heart_site/settings_test.py): checkouts testing side by side on one server share
# neither. TEST_DB_NAME and REDIS_URL choose others.
read -r checkout_id redis_db < <(.venv/bin/python -c \
  'from heart_site.settings_test import CHECKOUT_ID, TEST_REDIS_DB; print(CHECKOUT_ID, TEST_REDIS_DB)')
if [ -z "${REDIS_URL:-}" ] && answers 127.0.0.1 6379; then
  export REDIS_URL="redis://127.0.0.1:6379/${redis_db}"
fi
if [ -n "${DATABASE_URL:-}" ]; then
  echo "database: ${DATABASE_URL} (tests in ${TEST_DB_NAME:-test_heart_${checkout_id}})"
else
  echo "database: SQLite (embedded)"
fi
echo "broker: ${REDIS_URL:-none (Celery runs tasks in-process)}"

.venv/bin/ruff check .
# The apps' layers and no import cycles ([tool.importlinter] in pyproject.toml).
.venv/bin/lint-imports
.venv/bin/mypy  # types: [tool.mypy] in pyproject.toml (docs/tests.md)
# COVERAGE=1 (CI) measures which lines of the product the tests run ([tool.coverage] in
# pyproject.toml); the total is the last line of the report.
if [ "${COVERAGE:-}" = 1 ]; then
  .venv/bin/python -m pytest --cov --cov-report=term "$@"
else
  .venv/bin/python -m pytest "$@"
fi

#!/usr/bin/env bash
# The whole test suite. Uses PostgreSQL and Redis on 127.0.0.1 when they answer (CI requires
# them: REQUIRE_SERVICES=1 turns a missing service into a failure instead of a skip).
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
if [ -z "${REDIS_URL:-}" ] && answers 127.0.0.1 6379; then
  export REDIS_URL=redis://127.0.0.1:6379/15
fi
echo "database: ${DATABASE_URL:-sqlite (embedded)}  broker: ${REDIS_URL:-none (eager)}"

.venv/bin/ruff check .
.venv/bin/python -m pytest "$@"

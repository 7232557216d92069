#!/usr/bin/env bash
# The embedded default: SQLite, eager Celery, the demo study, the dev server on :8000.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBUG="${DEBUG:-1}"
unset DATABASE_URL REDIS_URL
PORT="${PORT:-8000}"
.venv/bin/python manage.py migrate --noinput -v0
.venv/bin/python manage.py load_demo --base-url "http://127.0.0.1:${PORT}"
exec .venv/bin/python manage.py runserver "127.0.0.1:${PORT}"

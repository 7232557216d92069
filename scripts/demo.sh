#!/usr/bin/env bash
# The embedded default: SQLite, eager Celery, the demo study, the dev server on :8000, and the
# bundled fake LLM server (OpenAI/Anthropic-compatible, no API key) on :8765 for LLM runs.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBUG="${DEBUG:-1}"
unset DATABASE_URL REDIS_URL
PORT="${PORT:-8000}"
FAKE_LLM_PORT="${FAKE_LLM_PORT:-8765}"
export HEART_DEMO_LLM_URL="http://127.0.0.1:${FAKE_LLM_PORT}"
# The fake server is a local address: the demo allows it (production allows only the hosts the
# operator lists, private networks off; docs/security.md, "Providers and endpoints").
export LLM_ALLOWED_HOSTS="${LLM_ALLOWED_HOSTS:-api.openai.com,api.anthropic.com,127.0.0.1}"
export LLM_ALLOW_PRIVATE_NETWORKS="${LLM_ALLOW_PRIVATE_NETWORKS:-1}"
.venv/bin/python -m completions.llm.fake_server --port "${FAKE_LLM_PORT}" >/dev/null 2>&1 &
FAKE_LLM_PID=$!
trap 'kill "${FAKE_LLM_PID}" 2>/dev/null || true' EXIT
.venv/bin/python manage.py migrate --noinput -v0
.venv/bin/python manage.py load_demo --base-url "http://127.0.0.1:${PORT}"
echo "  Fake LLM server:  ${HEART_DEMO_LLM_URL} (demo endpoints demo-fake-*)"
.venv/bin/python manage.py runserver "127.0.0.1:${PORT}"

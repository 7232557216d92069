#!/usr/bin/env bash
# The embedded default: SQLite, eager Celery, the demo study, Django's development server (with
# its autoreloader) on :8000, and the bundled fake LLM server (OpenAI/Anthropic-compatible, no
# API key) on :8765 for LLM runs, and the fake Prolific (any token) on :8767 for the Prolific
# page. The links are printed once the server answers /healthz.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBUG="${DEBUG:-1}"
unset DATABASE_URL REDIS_URL
PORT="${PORT:-8000}"
FAKE_LLM_PORT="${FAKE_LLM_PORT:-8765}"
FAKE_PROLIFIC_PORT="${FAKE_PROLIFIC_PORT:-8767}"
HEALTH_WAIT="${HEALTH_WAIT:-180}"  # seconds the server may take to answer /healthz
BASE="http://127.0.0.1:${PORT}"
export HEART_DEMO_LLM_URL="http://127.0.0.1:${FAKE_LLM_PORT}"
# The fake server is a local address: the demo allows it (production allows only the hosts the
# operator lists, private networks off; docs/security.md, "Providers and endpoints").
export LLM_ALLOWED_HOSTS="${LLM_ALLOWED_HOSTS:-api.openai.com,api.anthropic.com,127.0.0.1}"
export LLM_ALLOW_PRIVATE_NETWORKS="${LLM_ALLOW_PRIVATE_NETWORKS:-1}"
# The Prolific page talks to the fake Prolific, never to api.prolific.com. Its token is stored
# encrypted as in production; without an operator's key the demo makes one for this run (a
# token saved in an earlier run is then asked for again).
export PROLIFIC_API_URL="http://127.0.0.1:${FAKE_PROLIFIC_PORT}"
if [ -z "${LLM_KEY_ENCRYPTION_KEY:-}" ]; then
  LLM_KEY_ENCRYPTION_KEY="$(.venv/bin/python -c \
    'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())')"
  export LLM_KEY_ENCRYPTION_KEY
fi

banner="$(mktemp)"
FAKE_LLM_PID=""
FAKE_PROLIFIC_PID=""
cleanup() {
  # (Ctrl-C has usually stopped it already: a failed kill must not become the exit status.)
  if [ -n "${FAKE_LLM_PID}" ]; then kill "${FAKE_LLM_PID}" 2>/dev/null || true; fi
  if [ -n "${FAKE_PROLIFIC_PID}" ]; then kill "${FAKE_PROLIFIC_PID}" 2>/dev/null || true; fi
  rm -f "${banner}" "${banner}.all"
}
trap cleanup EXIT
# Ctrl-C is how the demo ends: the server stops, the fake server with it, and the script exits 0
# (make then reports no error).
interrupted=""
trap 'interrupted=1' INT

echo "==> Preparing the demo database (db.sqlite3)..."
.venv/bin/python manage.py migrate --noinput -v0
echo "==> Loading the demo study..."
.venv/bin/python manage.py load_demo --base-url "${BASE}" > "${banner}.all"
sed '/HEART studio demo is ready/,$d' "${banner}.all"  # the import report, now
sed -n '/HEART studio demo is ready/,$p' "${banner}.all" > "${banner}"  # the links, later
echo "  Fake LLM server:  ${HEART_DEMO_LLM_URL} (demo endpoints demo-fake-*)" >> "${banner}"
.venv/bin/python -m fakes.llm --port "${FAKE_LLM_PORT}" >/dev/null 2>&1 &
FAKE_LLM_PID=$!
echo "  Fake Prolific:    ${PROLIFIC_API_URL} (demo only: any token; the study's Prolific page)" \
  >> "${banner}"
.venv/bin/python -m fakes.prolific --port "${FAKE_PROLIFIC_PORT}" >/dev/null 2>&1 &
FAKE_PROLIFIC_PID=$!

# The links only once the server answers: a banner above a server that never came up would
# send a newcomer to a closed port.
(
  if .venv/bin/python - "${BASE}/healthz" "${HEALTH_WAIT}" <<'PY'
import sys
import time
import urllib.request

url, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
try:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    sys.exit(0)
        except OSError:
            pass
        time.sleep(0.5)
except KeyboardInterrupt:  # Ctrl-C before the server answered: the demo is stopping, say nothing
    sys.exit(2)
sys.exit(1)
PY
  then
    echo
    cat "${banner}"
    echo "Stop the demo with Ctrl-C."
  elif [ $? -eq 1 ]; then
    echo "The demo server did not answer ${BASE}/healthz within ${HEALTH_WAIT} s: the messages" \
      "above say why. Stop it with Ctrl-C." >&2
  fi
) &

echo "==> Starting the server on ${BASE} (the links follow once it answers)..."
status=0
.venv/bin/python manage.py runserver "127.0.0.1:${PORT}" || status=$?
if [ -n "${interrupted}" ]; then
  echo "==> Demo stopped."
  exit 0
fi
exit "${status}"

#!/usr/bin/env bash
# Set up a fresh clone: a Python >= 3.12 virtualenv with every pinned dependency, and
# Debian's chromium for the browser tests and haproxy/pgbouncer for the cluster check (when we
# are root and they are missing).
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  for candidate in "${PYTHON:-}" python3.13 python3.12 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      echo "$candidate"; return
    fi
  done
  for candidate in /root/.pyenv/versions/3.1[2-9]*/bin/python3 /usr/bin/python3.1[2-9]; do
    [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
  echo "HEART studio needs Python 3.12 or newer (Django 6); set PYTHON=/path/to/python3.12" >&2
  exit 1
}

if [ ! -x .venv/bin/python ]; then
  "$(find_python)" -m venv .venv
fi
# EXTRAS=dev (default) adds the test and benchmark tools and the fake providers; EXTRAS=demo only
# the fake providers (`make demo`); EXTRAS= installs what the platform runs on.
extras="${EXTRAS-dev}"
hash=$(sha1sum pyproject.toml | cut -c1-12)
if [ ! -f ".venv/.installed-$hash-${extras:-runtime}" ] && [ ! -f ".venv/.installed-$hash-dev" ]; then
  # The pinned requirements straight from pyproject.toml: nothing of the project is built.
  .venv/bin/python - "$extras" > .venv/requirements.txt <<'PY'
import sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
optional = project["optional-dependencies"]


def expand(extra):  # "heart-studio[demo]" in an extra names another extra of this project
    for dep in optional[extra]:
        if dep.startswith(project["name"] + "["):
            yield from (d for e in dep[dep.index("[") + 1 : -1].split(",") for d in expand(e))
        else:
            yield dep


extras = [e for e in sys.argv[1].split(",") if e]
print("\n".join(dict.fromkeys(project["dependencies"] + [d for e in extras for d in expand(e)])))
PY
  count=$(grep -c . .venv/requirements.txt)
  echo "==> Installing ${count} pinned Python packages into .venv (the first time takes a few" \
    "minutes; each package is listed as pip fetches it)..."
  .venv/bin/python -m pip install -q --upgrade pip
  if ! .venv/bin/python -m pip install --progress-bar off -r .venv/requirements.txt \
      > >(tee .venv/pip-install.log | grep --line-buffered -E '^(Collecting|Successfully)') 2>&1
  then
    sleep 1  # let the listing above finish before the error
    echo "The install failed; pip's last messages (all of them in .venv/pip-install.log):" >&2
    tail -n 20 .venv/pip-install.log >&2
    exit 1
  fi
  sleep 1
  rm -f .venv/.installed-*
  touch ".venv/.installed-$hash-${extras:-runtime}"
fi

# HAProxy and PgBouncer for the cluster check (tests/integration/test_cluster.py,
# benchmarks/bench_cluster.py), from Debian, as chromium below.
if [ "${WITH_BROWSER:-1}" = 1 ] && { [ ! -x /usr/sbin/haproxy ] || [ ! -x /usr/sbin/pgbouncer ]; }; then
  if [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's haproxy and pgbouncer for the cluster check..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy pgbouncer) >/dev/null
  else
    echo "note: haproxy or pgbouncer is missing; run 'sudo apt-get install haproxy pgbouncer' for the cluster check" >&2
  fi
fi

if [ "${WITH_BROWSER:-1}" = 1 ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's chromium for the browser tests..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null
  else
    echo "note: /usr/bin/chromium is missing; run 'sudo apt-get install chromium' for browser tests" >&2
  fi
fi

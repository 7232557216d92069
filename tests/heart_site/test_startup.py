"""The development server's start-up cannot deadlock on imports.

`runserver` with its autoreloader imports the URLconf in its main thread while the system checks
import every template tag library (Django REST framework's pulls in psycopg) in another. When
both threads import the same package for the first time, Python's per-module import locks can
deadlock (psycopg did: `_DeadlockError ... psycopg.types.json`, and the demo never served). So
the URL path must not be the first to import the database driver: Django's start-up (the apps'
`ready()`, in one thread, before the server's threads exist) does it. tests/integration/
test_make_demo.py starts the real demo five times; this is the same rule checked exactly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ("psycopg", "psycopg_binary", "psycopg_c", "psycopg_pool")
SCRIPT = f"""
import json, sys, django
django.setup()
before = set(sys.modules)
import heart_site.urls
new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in {DRIVER!r})
print(json.dumps({{"at_setup": "psycopg.types.json" in before, "on_url_path": new}}))
"""


def test_the_url_path_is_never_the_first_to_import_the_database_driver():
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(DJANGO_SETTINGS_MODULE="heart_site.settings", DEBUG="1")  # as `make demo`
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["on_url_path"] == []
    assert seen["at_setup"]  # JSON dumps configured once, while Django starts

"""A web worker imports what a request needs: the WSGI application and every URL's view load
without the maths and the provider SDKs, which load in the workers (or with the first request
that draws a figure or fits). A gunicorn worker stays small (docs/benchmarks.md, web memory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "numpy", "pandas", "scipy", "matplotlib", "statsmodels", "pyarrow", "sklearn",
    "krippendorff", "openai", "anthropic", "aiohttp", "fakes",
)  # fmt: skip
SCRIPT = f"""
import json, sys
from heart_site.wsgi import application
from django.urls import get_resolver
get_resolver().url_patterns  # every app's urls and views, as the first request loads them
import annotation.views, writing.views, care.views, studio.api.urls
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))
print(json.dumps({{"heavy": loaded, "modules": len(sys.modules)}}))
"""


def test_the_wsgi_application_and_its_urls_load_no_heavy_library():
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(DJANGO_SETTINGS_MODULE="heart_site.settings", SECRET_KEY="x" * 50)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["heavy"] == [], result

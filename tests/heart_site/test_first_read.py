"""The leaderboard's first read in a new web process is as light as the next one: it loads no
numpy, pandas or SciPy (the study grade is served by the pure-Python `ranking.study_targets`),
builds no URL table and compiles no template (`core.warmup.warm_process`, run as the WSGI
application loads). The process is a real one, started for the test, reading the test database
the way a web worker would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User

from completions.access import STUDY_ADMINS
from ranking import services
from tests.factories.ranking import add_known_verdicts, build_study

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "statsmodels", "pyarrow", "sklearn")

# In the new process: the WSGI application (as gunicorn and runserver load it), then spies on
# the two pieces of first-use work, then a study admin's first read of the leaderboard.
SCRIPT = """
import json, sys
from heart_site.wsgi import application
from django.template import base
from django.urls import resolvers
from ranking import board

for preset in board.PRESETS.values():  # as the test process fitted the study
    preset.update(min_comparisons=1, min_source_judgments=1)
work = {"url tables built": 0, "templates compiled": 0}
populate, compile_nodelist = resolvers.URLResolver._populate, base.Template.compile_nodelist

def counted_populate(self):
    work["url tables built"] += 1
    return populate(self)

def counted_compile(self):
    work["templates compiled"] += 1
    return compile_nodelist(self)

resolvers.URLResolver._populate = counted_populate
base.Template.compile_nodelist = counted_compile

from django.contrib.auth.models import User
from django.test import Client

client = Client()
client.force_login(User.objects.get(username="lead"))
before = {m.split(".")[0] for m in sys.modules}
response = client.get(f"/studio/{SLUG}/leaderboard/", HTTP_HOST="localhost")
loaded = {m.split(".")[0] for m in sys.modules} - before
print(json.dumps({
    "status": response.status_code,
    "grade": b"Separability" in response.content,
    "heavy": sorted(loaded & set(HEAVY)),
    "work": work,
}))
"""


@pytest.mark.django_db(transaction=True)
def test_the_leaderboards_first_read_in_a_new_process_loads_no_maths_and_builds_nothing(
    postgres, few_judgments_shown
):
    built = build_study(slug="first-read")
    add_known_verdicts(built)
    services.snapshot_refit_study(study_id=built.study.pk, trigger="nightly")
    user = User.objects.create_user("lead", password="pw", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=STUDY_ADMINS)[0])

    db = settings.DATABASES["default"]
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}  # eager: a fit would show
    env.update(
        DATABASE_URL=(
            f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        ),
        DJANGO_SETTINGS_MODULE="heart_site.settings_test",
    )
    script = f"SLUG = {built.study.slug!r}\nHEAVY = {HEAVY!r}\n" + SCRIPT
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["status"] == 200 and result["grade"], result
    assert result["heavy"] == [], result
    assert result["work"] == {"url tables built": 0, "templates compiled": 0}, result

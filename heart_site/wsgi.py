from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heart_site.settings")
application = get_wsgi_application()

from core.warmup import warm_process  # noqa: E402 (after the application sets Django up)

warm_process()  # the first request waits no longer than the next (core/warmup.py)

"""A web process made ready before its first request.

Django does two pieces of work the first time a process needs them, in whichever request comes
first: it builds the URL resolver's reverse table (the first `reverse()` or `{% url %}`: about
90 ms for this site's 1,700 patterns) and it compiles each template (the cached loader keeps it
afterwards: the leaderboard's 13 templates take about 50 ms). `warm_process()` does both as the
process starts (heart_site/wsgi.py: each gunicorn worker, and `runserver`, call it once), so the
first reader of a page waits no longer than the next one. It imports nothing heavy: templates
and their tag libraries are light (tests/heart_site/test_wsgi.py).

Only this project's templates are compiled (not Django's admin ones, which few requests need).
A template that fails to compile is logged and left for its request to report.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.template import TemplateSyntaxError, engines
from django.urls import URLResolver, get_resolver
from django.urls.resolvers import get_ns_resolver

logger = logging.getLogger(__name__)

SUFFIXES = {"django": ".html", "jinja2": ".jinja"}


def project_templates(engine_name: str) -> list[str]:
    """The names of this project's templates for one template engine (its folders that lie in
    the project: DIRS and the project's apps, not installed packages)."""
    engine = engines[engine_name]
    root = Path(settings.BASE_DIR).resolve()
    suffix = SUFFIXES.get(engine_name, ".html")
    names: set[str] = set()
    for name in engine.template_dirs:
        folder = Path(name).resolve()
        if not folder.is_relative_to(root) or ".venv" in folder.parts:
            continue
        names.update(p.relative_to(folder).as_posix() for p in folder.rglob(f"*{suffix}"))
    return sorted(names)


def _reverse_tables(
    resolver: URLResolver, prefix: str = "", converters: tuple[tuple[str, Any], ...] = ()
) -> None:
    """Build every reverse table `reverse()` reads: the resolver's own, and for each namespace
    (``ranking:``, ``api:``...) the one `reverse()` builds for it, keyed by the namespace's URL
    prefix (``get_ns_resolver``, cached for the process)."""
    resolver.reverse_dict  # noqa: B018 (building it is the point)
    for extra, sub in resolver.namespace_dict.values():
        sub_converters = dict(converters) | sub.pattern.converters
        path = prefix + extra
        get_ns_resolver(path, sub, tuple(sub_converters.items())).reverse_dict  # noqa: B018
        _reverse_tables(sub, path, tuple(sub_converters.items()))


def warm_process() -> dict[str, float]:
    """Build the URL reverse table and compile the project's templates; returns what each took
    (milliseconds) and how many templates were compiled."""
    start = time.perf_counter()
    _reverse_tables(get_resolver())
    urls = time.perf_counter()
    compiled = 0
    for name in SUFFIXES:
        if name not in engines.templates:
            continue
        for template in project_templates(name):
            try:
                engines[name].get_template(template)
                compiled += 1
            except TemplateSyntaxError:
                logger.exception("template %s does not compile", template)
    done = time.perf_counter()
    return {
        "urls_ms": (urls - start) * 1000,
        "templates_ms": (done - urls) * 1000,
        "templates": compiled,
    }

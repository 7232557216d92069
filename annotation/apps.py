from __future__ import annotations

from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import llm_judge  # noqa: F401  registers the "judge" LLM run kind

        _psycopg_json_configure()


def _psycopg_json_configure() -> None:
    """psycopg serialises JSON with pydantic-core's encoder (the judgment import's COPY).

    Done here, once, while Django starts, and never by a module-level import on the URL path:
    the development server's autoreloader imports the URLconf in one thread while the system
    checks import psycopg in another, and Python's import locks then deadlock on the psycopg
    package and its `psycopg.types.json` module (the server kept "watching for file changes"
    with its port closed). Django's own JSONField passes its encoder explicitly, so only values
    adapted without one (the COPY rows' JSON columns) use this.
    """
    try:
        from psycopg.types.json import set_json_dumps
    except ImportError:  # psycopg is a dependency, but SQLite alone needs none of this
        return
    from pydantic_core import to_json

    set_json_dumps(to_json)

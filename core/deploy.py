"""Deploy defaults that fail safe: the secret key at startup, the pseudonym key at deploy check.

- `secret_key()`: with DEBUG off the well-known demo key is refused (a startup error naming the
  fix). The embedded default (SQLite, no DATABASE_URL) without a key gets a random one made
  once for this checkout and kept in `.secret_key` beside manage.py, so sessions and rater
  links survive restarts and no two checkouts share a key.
- `pseudonym_key_check` (`manage.py check --deploy`): a deployment must set its own
  PSEUDONYM_KEY, different from SECRET_KEY: export pseudonyms are keyed with it, and a key
  that signs cookies too would undo them if it ever leaked.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from django.core.checks import Error, register
from django.core.exceptions import ImproperlyConfigured

INSECURE_DEFAULT = "django-insecure-heart-studio-embedded-default"
KEY_FILE = ".secret_key"
MAKE_KEY = "python -c 'import secrets; print(secrets.token_urlsafe(50))'"


def secret_key(value: str, *, debug: bool, embedded: bool, folder: Path) -> str:
    """The SECRET_KEY to use, or a startup error when DEBUG is off and the key is not secret."""
    if value and not (value.startswith("django-insecure") and not debug):
        return value
    if debug:
        return value or INSECURE_DEFAULT
    if value:
        raise ImproperlyConfigured(
            "SECRET_KEY is the insecure demo key and DEBUG is off: set SECRET_KEY to a long "
            f"random value of your own ({MAKE_KEY})."
        )
    if not embedded:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set and DEBUG is off: set SECRET_KEY to a long random value "
            f"({MAKE_KEY})."
        )
    return _checkout_key(folder / KEY_FILE)


def _checkout_key(path: Path) -> str:
    """A random key for this checkout's embedded default, made on first use."""
    try:
        return path.read_text().strip() or _new_key(path)
    except FileNotFoundError:
        return _new_key(path)


def _new_key(path: Path) -> str:
    key = secrets.token_urlsafe(50)
    try:
        path.write_text(key + "\n")
        path.chmod(0o600)
    except OSError:  # a read-only checkout: this process's own key (sessions end with it)
        pass
    return key


@register(deploy=True)
def pseudonym_key_check(app_configs: object = None, **kwargs: object) -> list[Error]:
    from django.conf import settings

    if not getattr(settings, "PSEUDONYM_KEY_SET", False):
        return [
            Error(
                "PSEUDONYM_KEY is not set: exports would key rater pseudonyms with SECRET_KEY.",
                hint="Set PSEUDONYM_KEY to a long random value of its own, and keep it: "
                "changing it changes every pseudonym in later exports.",
                id="heart_site.E001",
            )
        ]
    if settings.PSEUDONYM_KEY == settings.SECRET_KEY:
        return [
            Error(
                "PSEUDONYM_KEY is the same as SECRET_KEY.",
                hint="Give PSEUDONYM_KEY a value of its own.",
                id="heart_site.E002",
            )
        ]
    return []

"""Endpoint API keys: entered once and stored encrypted, or named from the operator's allow-list.

- A key typed into the endpoint form is encrypted with Fernet (the `cryptography` package) under
  `LLM_KEY_ENCRYPTION_KEY` and stored in `Endpoint.api_key_encrypted`. It is never sent back to
  a browser or through the API (pages show only a hint such as "ends in …f3a9"), never logged,
  never exported; the workers decrypt it when they build the endpoint's client.
- A key *variable* (`Endpoint.api_key_env`) is read from the workers' environment at call time,
  but only when the operator lists it in `LLM_KEY_ENV_ALLOWLIST`, and never one of the server's
  own secrets (`NEVER_KEY_VARS`), whatever the list says. Only superusers and the command line
  set key variables; a study admin enters a key instead.

`LLM_KEY_ENCRYPTION_KEY` holds one or more Fernet keys separated by commas: the first encrypts,
all decrypt (rotation: put the new key first, re-save the endpoints, drop the old one).
"""

from __future__ import annotations

import re

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# The server's own secrets: never an endpoint's key, even if an operator lists them by mistake.
NEVER_KEY_VARS = frozenset(
    {
        "SECRET_KEY",
        "DJANGO_SECRET_KEY",
        "PSEUDONYM_KEY",
        "LLM_KEY_ENCRYPTION_KEY",
        "DATABASE_URL",
        "REDIS_URL",
        "CELERY_BROKER_URL",
        "PGPASSWORD",
        "POSTGRES_PASSWORD",
        "EMAIL_HOST_PASSWORD",
        "EMAIL_URL",
        "SENTRY_DSN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
    }
)
_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
# What an API key looks like on the wire: printable ASCII, no spaces (it goes into a header).
_KEY = re.compile(r"[\x21-\x7e]{8,500}")
KEY_GENERATE_HINT = (
    'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
)


class KeyUnavailable(Exception):
    """The endpoint's key cannot be had here: the message says why and what to do."""


def key_env_problem(name: str) -> str | None:
    """Why this key variable may not be used, or None."""
    if not _VAR_NAME.fullmatch(name):
        return "give the name of an environment variable (letters, digits, _), not a key"
    if name.upper() in NEVER_KEY_VARS:
        return f"{name} is one of the server's own secrets and is never sent to a provider"
    if name not in settings.LLM_KEY_ENV_ALLOWLIST:
        allowed = ", ".join(settings.LLM_KEY_ENV_ALLOWLIST) or "none"
        return (
            f"{name} is not on the operator's list of key variables (LLM_KEY_ENV_ALLOWLIST: "
            f"{allowed})"
        )
    return None


def key_problem(key: str) -> str | None:
    """Why a typed key cannot be an API key, or None."""
    if not _KEY.fullmatch(key):
        return "an API key is 8 to 500 printable characters without spaces"
    return None


def _fernet() -> MultiFernet:
    raw = settings.LLM_KEY_ENCRYPTION_KEY
    keys = [k.strip() for k in (raw if isinstance(raw, list | tuple) else raw.split(","))]
    keys = [k for k in keys if k]
    if not keys:
        raise KeyUnavailable(
            "this server cannot store API keys: the operator has not set LLM_KEY_ENCRYPTION_KEY"
        )
    try:
        return MultiFernet([Fernet(k) for k in keys])
    except ValueError as exc:
        raise ImproperlyConfigured(
            f"LLM_KEY_ENCRYPTION_KEY must be Fernet keys separated by commas ({exc}); make one "
            f"with {KEY_GENERATE_HINT}"
        ) from None


def can_store_keys() -> bool:
    try:
        _fernet()
    except KeyUnavailable:
        return False
    return True


def key_encrypt(key: str) -> str:
    return _fernet().encrypt(key.encode()).decode()


def key_decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise KeyUnavailable(
            "the stored API key cannot be decrypted with LLM_KEY_ENCRYPTION_KEY (was the "
            "setting changed?): enter the key again"
        ) from None


def key_hint(key: str) -> str:
    """What pages show of a stored key: its last four characters when it is long enough for
    that to give nothing useful away."""
    return f"…{key[-4:]}" if len(key) >= 20 else ""

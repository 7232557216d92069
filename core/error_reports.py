"""Optional error reports to Sentry (on only when SENTRY_DSN is set), without rater identities.

What leaves the server, and what never does:
- no personal data (what `send_default_pii=False` means, in sentry-sdk's `data_collection`
  terms and stricter: no user, no client address, no cookies, no query strings), no request
  bodies (a rationale is the rater's own words), no SQL parameters and no local variables of
  stack frames (they hold tokens, requests and rater rows);
- every string of the event (URL, transaction, messages, breadcrumbs, exception values) is
  scrubbed: the tokens in rater, writer, labeller and review URLs, the Prolific ids of an entry
  link (PROLIFIC_PID, STUDY_ID, SESSION_ID), the signed rater cookie and rater pseudonyms
  become "[Filtered]";
- keys that name an identity (tokens, pseudonyms, external ids, Prolific ids) are filtered
  wherever they appear, on top of Sentry's own list (passwords, keys, cookies, sessions): here,
  because sentry-sdk switches its own event scrubber off once `data_collection` is given.
"""

from __future__ import annotations

import re
from typing import Any

FILTERED = "[Filtered]"

# /r/a/<token>/, /r/<invite>/, /w/t/<token>/, /w/<invite>/, /labelling/<token>/,
# /studio/<slug>/writers/t/<token>/, /studio/<slug>/raters/<pseudonym>/.
_URL_IDENTITIES = re.compile(
    r"(/(?:r/a|r(?!/a/)|w/t|w(?!/t/)|labelling|writers/t|raters)/)"
    r"(?!\{)(?!\[Filtered\])[^/?#\s'\"]+"
)
_PROLIFIC_PARAMS = re.compile(r"((?:PROLIFIC_PID|STUDY_ID|SESSION_ID)=)[^&#\s'\"]*", re.I)
_RATER_COOKIE = re.compile(r"(heart_rater=)[^;\s'\"]+")
_PSEUDONYM = re.compile(r"\br-[0-9a-f]{16}\b")  # annotation/services/raters.py

IDENTITY_KEYS = [
    "token",
    "invite_token",
    "rater_token",
    "pseudonym",
    "external_id",
    "prolific_pid",
    "study_id",
    "session_id",
    "heart_rater",
    "rationale",
]


DATA_COLLECTION = {
    "user_info": False,
    "cookies": {"mode": "off"},
    "http_headers": {"request": {"mode": "denylist", "terms": ["forwarded", "-ip", "-user"]}},
    "http_bodies": [],
    "url_query_params": {"mode": "off"},
    "gen_ai": {"inputs": False, "outputs": False},
    "database_query_data": False,
    "queues": False,
    "stack_frame_variables": False,
}


def _denylist() -> frozenset[str]:
    from sentry_sdk.scrubber import DEFAULT_DENYLIST

    return frozenset(key.lower() for key in [*DEFAULT_DENYLIST, *IDENTITY_KEYS])


_DENYLIST = _denylist()


def scrub_text(text: str) -> str:
    """A string with every rater, writer and Prolific identity it carries replaced."""
    text = _URL_IDENTITIES.sub(rf"\g<1>{FILTERED}", text)
    text = _PROLIFIC_PARAMS.sub(rf"\g<1>{FILTERED}", text)
    text = _RATER_COOKIE.sub(rf"\g<1>{FILTERED}", text)
    return _PSEUDONYM.sub(FILTERED, text)


def scrub(value: Any) -> Any:
    """The same structure with every string scrubbed (dicts, lists and tuples walked) and the
    value of every key that names a secret or an identity replaced."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {
            key: FILTERED if str(key).lower() in _DENYLIST else scrub(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub(item) for item in value]
    return value


def before_send(event: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
    request = event.get("request")
    if isinstance(request, dict):
        request.pop("query_string", None)  # entry links carry Prolific ids
        request.pop("cookies", None)
        request.pop("data", None)
    scrubbed: dict[str, Any] = scrub(event)
    return scrubbed


def before_breadcrumb(crumb: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
    scrubbed: dict[str, Any] = scrub(crumb)
    return scrubbed


def sentry_init(
    *, dsn: str, environment: str, traces_sample_rate: float = 0.0, **options: Any
) -> None:
    """Start reporting to Sentry: Django (views, middleware) and Celery (tasks) errors."""
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        integrations=[DjangoIntegration(transaction_style="url"), CeleryIntegration()],
        # send_default_pii=False, spelled as sentry-sdk 2.75 wants it (the flag is deprecated)
        # and stricter: that flag alone still sends cookies, query strings and bodies.
        # Plain dicts here; the SDK's stubs type these as its TypedDicts of the same keys.
        data_collection=DATA_COLLECTION,  # type: ignore[arg-type]
        before_send=before_send,  # type: ignore[arg-type]
        before_send_transaction=before_send,  # type: ignore[arg-type]
        before_breadcrumb=before_breadcrumb,
        traces_sample_rate=traces_sample_rate,
        **options,
    )

"""The OpenAPI schema and its docs page: study admins only, no CDN, no inline script or style."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpResponseBase
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.authentication import SessionAuthentication, TokenAuthentication

from completions.access import IsStudyAdmin
from core.throttling import AnonRateLimit, UserRateLimit

# What drf-spectacular hands a preprocessing hook: (path, path_regex, method, view callback).
type Endpoint = tuple[str, str, str, Callable[..., HttpResponseBase]]


class SchemaView(SpectacularAPIView):
    """OpenAPI 3 schema of /api/ (YAML, or JSON with ?format=json)."""

    heart_role = "study_admin"
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsStudyAdmin]
    throttle_classes = [UserRateLimit, AnonRateLimit]


class DocsView(SpectacularSwaggerSplitView):
    """Swagger UI from drf-spectacular-sidecar's static files; its init script is a separate
    request (the split view) and the page's CSS a static file, so a strict CSP holds."""

    heart_role = "study_admin"
    authentication_classes = [SessionAuthentication, TokenAuthentication]
    permission_classes = [IsStudyAdmin]
    throttle_classes = [UserRateLimit, AnonRateLimit]
    template_name = "api/docs.html"
    url_name = "api:schema"


def only_api_paths(endpoints: list[Endpoint], **kwargs: Any) -> list[Endpoint]:
    """drf-spectacular preprocessing hook: the schema documents /api/ only (the older
    /studio/api/ leaderboard alias stays out of it)."""
    return [endpoint for endpoint in endpoints if endpoint[0].startswith("/api/")]

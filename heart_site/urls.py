from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from completions.access import role


@role("public")
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers and docker health checks: the database answers."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("", include("annotation.urls")),
    path("studio/<slug:slug>/downloads/", include("heart_site.downloads.urls")),
    path("studio/", include("ranking.urls")),
    path("studio/", include("completions.llm.urls")),
    path("api/", include("heart_site.api.urls")),
]

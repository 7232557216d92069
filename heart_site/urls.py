from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from completions.access import role
from heart_site.studio import views as studio_views


@role("public")
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers and docker health checks: the database answers."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


# The Django admin's "View site" leads to the studio's list of studies.
admin.site.site_url = "/"
admin.site.site_header = "HEART studio administration"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("", studio_views.home, name="home"),
    path("", include("annotation.urls")),
    path("studio/", include("heart_site.studio.urls")),
    path("studio/", include("ranking.urls")),
]

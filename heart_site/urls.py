from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from core.health import favicon, healthz
from core.metrics import metrics
from studio import views as studio_views

# Friendly pages in the raters' neutral style (core/errors.py); a 405 gets its page from
# core.middleware, which also keeps Django's debug pages away from raters in the demo.
handler400 = "core.errors.bad_request"
handler403 = "core.errors.permission_denied"
handler404 = "core.errors.page_not_found"
handler500 = "core.errors.server_error"

# The Django admin's "View site" leads to the studio's list of studies.
admin.site.site_url = "/"
admin.site.site_header = "HEART studio administration"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("favicon.ico", favicon, name="favicon"),
    path("formats/<str:kind>.schema.json", studio_views.format_schema, name="format_schema"),
    path("metrics", metrics, name="metrics"),
    path("", studio_views.home, name="home"),
    path("", include("care.urls")),
    path("", include("annotation.urls")),
    path("", include("writing.urls")),
    path("", include("studio.writers_urls")),
    path("studio/", include("studio.urls")),
    path("studio/", include("ranking.urls")),
    path("studio/", include("llm.urls")),
    path("studio/", include("recruitment.urls")),
    path("", include("labelling.urls")),
    path("studio/<slug:slug>/downloads/", include("studio.downloads.urls")),
    path("api/", include("studio.api.urls")),
]

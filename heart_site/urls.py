from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from .health import favicon, healthz
from .metrics import metrics
from .studio import views as studio_views

# Friendly pages in the raters' neutral style (heart_site/errors.py); a 405 gets its page from
# heart_site.middleware, which also keeps Django's debug pages away from raters in the demo.
handler400 = "heart_site.errors.bad_request"
handler403 = "heart_site.errors.permission_denied"
handler404 = "heart_site.errors.page_not_found"
handler500 = "heart_site.errors.server_error"

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
    path("", include("completions.writing.urls")),
    path("", include("heart_site.writers_urls")),
    path("studio/", include("heart_site.studio.urls")),
    path("studio/", include("ranking.urls")),
    path("studio/", include("completions.llm.urls")),
    path("", include("labelling.urls")),
    path("studio/<slug:slug>/downloads/", include("heart_site.downloads.urls")),
    path("api/", include("heart_site.api.urls")),
]

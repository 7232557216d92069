from __future__ import annotations

from django.urls import path

from . import views

app_name = "downloads"
urlpatterns = [
    path("", views.downloads_page, name="page"),
    path("release.zip", views.download_release, name="release"),
    path("<str:name>", views.download_file, name="file"),
]

from __future__ import annotations

from django.urls import path

from . import views

app_name = "downloads"
urlpatterns = [
    path("", views.downloads_page, name="page"),
    path("release.zip", views.download_release, name="release"),
    path("release/screen/", views.release_screen_run, name="screen"),
    path("release/held/<int:pk>/<str:action>/", views.release_hold, name="hold"),
    path("<str:name>", views.download_file, name="file"),
]

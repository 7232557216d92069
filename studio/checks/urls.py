from __future__ import annotations

from django.urls import path

from . import views

app_name = "checks"
urlpatterns = [
    path("", views.checks_page, name="page"),
    path("new/", views.check_edit, name="new"),
    path("make/", views.checks_make, name="make"),
    path("<int:pk>/", views.check_edit, name="edit"),
    path("<int:pk>/preview/", views.check_preview, name="preview"),
    path("<int:pk>/retire/", views.check_retire, name="retire"),
]

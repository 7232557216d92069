from __future__ import annotations

from django.urls import include, path

from . import views

app_name = "studio"
urlpatterns = [
    path("", views.home, name="home"),
    path("new/", views.study_new, name="new"),
    path("<slug:slug>/", views.overview, name="overview"),
    path("<slug:slug>/settings/", views.study_edit, name="edit"),
    path("<slug:slug>/status/", views.study_status, name="status"),
    path("<slug:slug>/material/", views.material, name="material"),
    path("<slug:slug>/material/imports/<int:pk>/", views.import_job, name="import_job"),
    path("<slug:slug>/pairs/", views.pairs, name="pairs"),
    path("<slug:slug>/checks/", include("studio.checks.urls")),
    path("<slug:slug>/raters/", views.raters, name="raters"),
    path("<slug:slug>/raters/prolific.csv", views.raters_csv, name="raters_csv"),
    path("<slug:slug>/raters/reflag/", views.raters_reflag, name="raters_reflag"),
    path(
        "<slug:slug>/raters/<str:pseudonym>/exclusion/",
        views.rater_exclusion,
        name="rater_exclusion",
    ),
]

from __future__ import annotations

from django.urls import path

from . import views

app_name = "labelling"
urlpatterns = [
    path("labelling/", views.labeller_home, name="home"),
    path("labelling/login/", views.labeller_login, name="login"),
    path("labelling/<str:token>/", views.label_next, name="next"),
    path("studio/<slug:slug>/strategies/samples/new/", views.sample_new, name="sample-new"),
    path("studio/<slug:slug>/strategies/samples/<int:pk>/", views.sample_page, name="sample"),
    path(
        "studio/<slug:slug>/strategies/samples/<int:pk>/report.json",
        views.sample_report_json,
        name="sample-report",
    ),
    path(
        "studio/<slug:slug>/strategies/samples/<int:pk>/adjudicate/<str:token>/",
        views.adjudicate,
        name="adjudicate",
    ),
]

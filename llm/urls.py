from __future__ import annotations

from django.urls import path

from . import views

app_name = "llm"
urlpatterns = [
    path("<slug:slug>/llm/", views.llm_hub, name="hub"),
    path("<slug:slug>/llm/endpoints/", views.endpoint_add, name="endpoint-add"),
    path("<slug:slug>/llm/plan/", views.run_plan, name="plan"),
    path("<slug:slug>/llm/prompt/", views.supporter_prompt, name="prompt"),
    path("<slug:slug>/llm/runs/<int:run_id>/", views.run_page, name="run"),
    path(
        "<slug:slug>/llm/runs/<int:run_id>/units/<int:unit_id>/raw/",
        views.unit_raw_reply,
        name="unit-raw",
    ),
    path(
        "<slug:slug>/llm/runs/<int:run_id>/<str:action>/",
        views.run_action,
        name="run-action",
    ),
]

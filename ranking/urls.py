from __future__ import annotations

from django.urls import path
from django.views.generic import RedirectView

from core.roles import role

from . import views
from .views import cohorts as cohort_views
from .views import record as record_views
from .views import strategies as strategy_views

app_name = "ranking"
urlpatterns = [
    # The leaderboard API's first address: /api/ serves it now (throttled, token or session,
    # in the schema). A permanent redirect keeps old scripts working; the API checks the role.
    path(
        "api/studies/<slug:slug>/leaderboard/",
        role("public")(
            RedirectView.as_view(pattern_name="api:leaderboard", permanent=True, query_string=True)
        ),
        name="api-leaderboard",
    ),
    path(
        "api/studies/<slug:slug>/leaderboard/cohorts/",
        role("public")(
            RedirectView.as_view(pattern_name="api:cohorts", permanent=True, query_string=True)
        ),
        name="api-leaderboard-cohorts",
    ),
    path("<slug:slug>/leaderboard/", views.leaderboard_page, name="leaderboard"),
    path("<slug:slug>/leaderboard/cohorts/", cohort_views.cohorts_page, name="cohorts"),
    path("<slug:slug>/leaderboard/plot/<str:name>.<str:fmt>", views.leaderboard_plot, name="plot"),
    path("<slug:slug>/leaderboard/table/<str:name>.csv", views.leaderboard_table, name="table"),
    path("<slug:slug>/leaderboard/refit/", views.leaderboard_refit, name="refit"),
    path("<slug:slug>/leaderboard/history/", views.leaderboard_history, name="history"),
    path(
        "<slug:slug>/leaderboard/history/take-off/",
        record_views.system_take_off,
        name="system-take-off",
    ),
    path(
        "<slug:slug>/leaderboard/history/put-back/",
        record_views.system_put_back,
        name="system-put-back",
    ),
    path("<slug:slug>/strategies/", strategy_views.strategies_page, name="strategies"),
    path(
        "<slug:slug>/strategies/analysis.json",
        strategy_views.strategies_json,
        name="strategies-json",
    ),
    path(
        "<slug:slug>/strategies/heatmap.<str:fmt>",
        strategy_views.strategies_heatmap,
        name="strategies-heatmap",
    ),
]

from __future__ import annotations

from django.urls import path

from . import apis, cohort_views, strategy_views, views

app_name = "ranking"
urlpatterns = [
    path(
        "api/studies/<slug:slug>/leaderboard/",
        apis.LeaderboardApi.as_view(),
        name="api-leaderboard",
    ),
    path(
        "api/studies/<slug:slug>/leaderboard/cohorts/",
        apis.LeaderboardCohortsApi.as_view(),
        name="api-leaderboard-cohorts",
    ),
    path("<slug:slug>/leaderboard/", views.leaderboard_page, name="leaderboard"),
    path("<slug:slug>/leaderboard/cohorts/", cohort_views.cohorts_page, name="cohorts"),
    path("<slug:slug>/leaderboard/plot/<str:name>.<str:fmt>", views.leaderboard_plot, name="plot"),
    path("<slug:slug>/leaderboard/table/<str:name>.csv", views.leaderboard_table, name="table"),
    path("<slug:slug>/leaderboard/refit/", views.leaderboard_refit, name="refit"),
    path("<slug:slug>/leaderboard/history/", views.leaderboard_history, name="history"),
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

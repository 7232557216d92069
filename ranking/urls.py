from __future__ import annotations

from django.urls import path

from . import apis, views

app_name = "ranking"
urlpatterns = [
    path(
        "api/studies/<slug:slug>/leaderboard/",
        apis.LeaderboardApi.as_view(),
        name="api-leaderboard",
    ),
    path("<slug:slug>/leaderboard/", views.leaderboard_page, name="leaderboard"),
    path("<slug:slug>/leaderboard/plot/<str:name>.<str:fmt>", views.leaderboard_plot, name="plot"),
    path("<slug:slug>/leaderboard/table/<str:name>.csv", views.leaderboard_table, name="table"),
    path("<slug:slug>/leaderboard/refit/", views.leaderboard_refit, name="refit"),
    path("<slug:slug>/leaderboard/history/", views.leaderboard_history, name="history"),
]

from __future__ import annotations

from django.urls import path

from . import views

app_name = "recruitment"
urlpatterns = [
    path("<slug:slug>/prolific/", views.prolific_page, name="prolific"),
    path("<slug:slug>/prolific/settings/", views.prolific_settings_save, name="settings"),
    path("<slug:slug>/prolific/token/", views.prolific_token_save, name="token"),
    path("<slug:slug>/prolific/run/", views.prolific_run, name="run"),
]

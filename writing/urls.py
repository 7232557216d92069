from __future__ import annotations

from django.urls import path

from . import views

app_name = "writing"
urlpatterns = [
    # Writer pages: only opaque tokens in the path, never an id.
    path("w/t/<str:token>/save/", views.save, name="save"),
    path("w/t/<str:token>/submit/", views.submit, name="submit"),
    path("w/<str:invite_token>/", views.entry, name="entry"),
    path("w/<str:invite_token>/consent/", views.consent, name="consent"),
    path("w/<str:invite_token>/instructions/", views.instructions, name="instructions"),
    path("w/<str:invite_token>/home/", views.home, name="home"),
    path("w/<str:invite_token>/write/", views.write, name="write"),
    path("w/<str:invite_token>/done/", views.done, name="done"),
]

from __future__ import annotations

from django.urls import path

from . import views

app_name = "annotation"
urlpatterns = [
    # Rater pages: only opaque tokens in the path, never an id.
    path("r/a/<str:token>/submit/", views.submit, name="submit"),
    path("r/a/<str:token>/heartbeat/", views.heartbeat, name="heartbeat"),
    path("r/<str:invite_token>/", views.entry, name="entry"),
    path("r/<str:invite_token>/consent/", views.consent, name="consent"),
    path("r/<str:invite_token>/instructions/", views.instructions, name="instructions"),
    path("r/<str:invite_token>/item/", views.item, name="item"),
    path("r/<str:invite_token>/done/", views.done, name="done"),
]

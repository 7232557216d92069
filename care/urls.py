from __future__ import annotations

from django.urls import path

from . import views
from .views import studio

app_name = "care"
urlpatterns = [
    # Rater pages: only opaque tokens in the path, never an id.
    path("r/a/<str:token>/skip/", views.rater_skip, name="rater_skip"),
    path("r/<str:invite_token>/qualify/", views.qualify, name="qualify"),
    path("r/<str:invite_token>/qualify/feedback/", views.qualify_feedback, name="qualify_feedback"),
    path("r/<str:invite_token>/qualify/result/", views.qualify_result, name="qualify_result"),
    path("r/<str:invite_token>/break/", views.rater_break, name="rater_break"),
    path("r/<str:invite_token>/support/", views.rater_support, name="rater_support"),
    path("r/<str:invite_token>/stop/", views.rater_stop_view, name="rater_stop"),
    # Writer pages.
    path("w/t/<str:token>/skip/", views.writer_skip, name="writer_skip"),
    path("w/<str:invite_token>/break/", views.writer_break, name="writer_break"),
    path("w/<str:invite_token>/support/", views.writer_support, name="writer_support"),
    path("w/<str:invite_token>/stop/", views.writer_stop_view, name="writer_stop"),
    # The studio's care page.
    path("studio/<slug:slug>/care/", studio.care_page, name="studio"),
    path("studio/<slug:slug>/care/notes/", studio.note_set, name="studio_note"),
    path("studio/<slug:slug>/care/items/", studio.item_add, name="studio_item"),
    path("studio/<slug:slug>/care/seed/", studio.items_seed, name="studio_seed"),
]

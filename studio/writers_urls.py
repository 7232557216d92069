from __future__ import annotations

from django.urls import path

from . import writers_review

app_name = "writers"
urlpatterns = [
    path("studio/<slug:slug>/writers/", writers_review.writers, name="review"),
    path("studio/<slug:slug>/writers/open/", writers_review.open_contexts, name="open"),
    path("studio/<slug:slug>/writers/t/<str:token>/accept/", writers_review.accept, name="accept"),
    path("studio/<slug:slug>/writers/t/<str:token>/reject/", writers_review.reject, name="reject"),
]

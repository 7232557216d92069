from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from .models import LeaderboardSnapshot

# ModelAdmin is generic in django-stubs only (subscripting it at run time fails).
if TYPE_CHECKING:
    SnapshotAdminBase = admin.ModelAdmin[LeaderboardSnapshot]
else:
    SnapshotAdminBase = admin.ModelAdmin


@admin.register(LeaderboardSnapshot)
class LeaderboardSnapshotAdmin(SnapshotAdminBase):
    """Snapshots are written by refits only: the admin reads them and links to the page."""

    list_display = (
        "created_at",
        "study",
        "judges",
        "subset",
        "trigger",
        "n_judgments",
        "n_comparisons",
        "n_excluded_raters",
        "n_systems",
        "duration_ms",
        "leaderboard_link",
    )
    list_filter = ("study", "judges", "subset", "trigger")
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in LeaderboardSnapshot._meta.fields]
    list_select_related = ("study",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: LeaderboardSnapshot | None = None
    ) -> bool:
        return False

    @admin.display(description="Leaderboard")
    def leaderboard_link(self, obj: LeaderboardSnapshot) -> str:
        url = reverse("ranking:leaderboard", args=[obj.study.slug])
        return format_html(
            '<a href="{}?judges={}&amp;subset={}">open</a>', url, obj.judges, obj.subset
        )

from __future__ import annotations

from django.urls import path

from . import docs, imports, judgments, llm, material, raters, results

app_name = "api"
study = "studies/<slug:slug>/"
urlpatterns = [
    path("schema/", docs.SchemaView.as_view(), name="schema"),
    path("docs/", docs.DocsView.as_view(), name="docs"),
    path("studies/", material.StudyList.as_view(), name="studies"),
    path(study, material.StudyDetail.as_view(), name="study"),
    path(study + "contexts/", material.ContextList.as_view(), name="contexts"),
    path(study + "systems/", material.SystemList.as_view(), name="systems"),
    path(study + "completions/", material.CompletionList.as_view(), name="completions"),
    path(study + "raters/", raters.RaterList.as_view(), name="raters"),
    path(study + "judgments/", judgments.JudgmentList.as_view(), name="judgments"),
    path(study + "leaderboard/", results.LeaderboardLive.as_view(), name="leaderboard"),
    path(study + "leaderboard/snapshots/", results.SnapshotList.as_view(), name="snapshots"),
    path(study + "leaderboard/cohorts/", results.LeaderboardCohorts.as_view(), name="cohorts"),
    path(study + "agreement/", results.Agreement.as_view(), name="agreement"),
    path(study + "imports/", imports.ImportCreate.as_view(), name="imports"),
    path(study + "llm-runs/", llm.RunList.as_view(), name="llm-runs"),
    path(study + "llm-runs/<int:run_id>/", llm.RunDetail.as_view(), name="llm-run"),
    path(study + "llm-runs/<int:run_id>/launch/", llm.RunLaunch.as_view(), name="llm-launch"),
    path(study + "llm-runs/<int:run_id>/cancel/", llm.RunCancel.as_view(), name="llm-cancel"),
]

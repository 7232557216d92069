from __future__ import annotations

app_name = "annotation"
urlpatterns: list = []

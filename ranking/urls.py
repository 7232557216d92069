from __future__ import annotations

app_name = "ranking"
urlpatterns: list = []

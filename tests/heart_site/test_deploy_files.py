"""The production stack's files: what docker compose would run (no Docker engine here)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_runs_postgres_redis_web_worker_and_beat_from_one_image():
    services = _compose()["services"]
    assert {"postgres", "redis", "web", "worker", "beat"} <= set(services)
    assert services["web"]["command"][:3] == ["gunicorn", "-c", "gunicorn.conf.py"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "heart_site", "worker"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "heart_site", "beat"]
    images = {services[name]["image"] for name in ("web", "worker", "beat", "migrate")}
    assert images == {"heart-studio:latest"}


def test_every_long_running_service_has_a_health_check_and_waits_for_healthy_backends():
    services = _compose()["services"]
    for name in ("postgres", "redis", "web", "worker"):
        assert services[name]["healthcheck"]["test"], name
    migrate = services["migrate"]
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert migrate["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "healthz" in " ".join(services["web"]["healthcheck"]["test"])


def test_the_app_services_get_their_settings_from_the_environment():
    env = _compose()["services"]["web"]["environment"]
    assert env["DATABASE_URL"].startswith("postgres://")
    assert env["REDIS_URL"].startswith("redis://")
    assert "SECRET_KEY" in env


def test_the_image_installs_the_pinned_dependencies_and_collects_static_files():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install ." in dockerfile
    assert "collectstatic --noinput" in dockerfile
    assert "USER heart" in dockerfile

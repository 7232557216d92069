"""The production stack's files: what docker compose would run (no Docker engine here)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _workers(services: dict) -> dict[str, dict]:
    return {
        name: service
        for name, service in services.items()
        if service.get("command", [])[:4] == ["celery", "-A", "heart_site", "worker"]
    }


def _option(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


def test_compose_runs_postgres_redis_web_workers_and_beat_from_one_image():
    services = _compose()["services"]
    assert {"postgres", "redis", "web", "beat", "flower"} <= set(services)
    assert services["web"]["command"][:3] == ["gunicorn", "-c", "gunicorn.conf.py"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "heart_site", "beat"]
    app = ["web", "beat", "migrate", "flower", *_workers(services)]
    assert {services[name]["image"] for name in app} == {"heart-studio:latest"}


def test_there_is_one_worker_service_for_each_queue_a_task_is_routed_to():
    from heart_site.metrics import celery_queues

    workers = _workers(_compose()["services"])
    consumed = {name: _option(w["command"], "-Q").split(",") for name, w in workers.items()}
    assert all(len(queues) == 1 for queues in consumed.values()), consumed
    assert sorted(q for queues in consumed.values() for q in queues) == celery_queues()
    assert celery_queues() == ["default", "llm", "refit"]
    for name, worker in workers.items():
        node = _option(worker["command"], "--hostname").replace("%h", "$$HOSTNAME")
        assert f"-d {node} " in worker["healthcheck"]["test"][1], name  # pings its own node
        assert worker["environment"]["CELERY_METRICS_PORT"] == "9808", name
        assert "ports" not in worker, f"{name}: the metrics port stays inside the network"
    assert _option(workers["worker-refit"]["command"], "--concurrency") == "1"


def test_flower_is_started_only_on_request_only_with_a_password_and_only_on_localhost():
    flower = _compose()["services"]["flower"]
    assert flower["profiles"] == ["monitoring"]
    assert flower["environment"]["FLOWER_BASIC_AUTH"] == "${FLOWER_BASIC_AUTH:-}"
    assert flower["ports"] == ["127.0.0.1:5555:5555"]
    script = flower["command"][-1]
    assert script.startswith('test -n "$${FLOWER_BASIC_AUTH}" ||')
    assert script.endswith("exec celery -A heart_site flower")


def test_every_long_running_service_has_a_health_check_and_waits_for_healthy_backends():
    services = _compose()["services"]
    for name in ("postgres", "redis", "web", "flower", *_workers(services)):
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

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
    from core.metrics import celery_queues

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


def test_web_and_worker_share_the_llm_provider_settings_with_safe_defaults():
    services = _compose()["services"]
    workers = [name for name in services if name.startswith("worker-")]
    assert workers == ["worker-default", "worker-llm", "worker-refit"]
    for name in ("web", *workers):
        env = services[name]["environment"]
        assert env["LLM_ALLOWED_HOSTS"].endswith(":-api.openai.com,api.anthropic.com}")
        assert env["LLM_ALLOW_PRIVATE_NETWORKS"].endswith(":-0}")
        assert "LLM_KEY_ENCRYPTION_KEY" in env and "LLM_KEY_ENV_ALLOWLIST" in env


def test_the_image_installs_the_pinned_dependencies_and_collects_static_files():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install ." in dockerfile
    assert "collectstatic --noinput" in dockerfile
    assert "USER heart" in dockerfile


def _serve_once(port: int, status: int):
    """A one-address HTTP server on this machine answering `status` to any GET."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the standard library's name)
            self.send_response(status)
            if status in (301, 302):
                self.send_header("Location", "https://localhost/healthz")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_the_web_health_check_counts_only_a_200_as_healthy():
    """The compose command itself, run by a shell against servers answering 200, 301 and 503."""
    import shutil
    import subprocess

    if shutil.which("curl") is None:
        import pytest

        pytest.skip("curl is not installed")
    command = _compose()["services"]["web"]["healthcheck"]["test"]
    assert command[0] == "CMD-SHELL"
    script = command[1].replace("$$", "$")  # compose's escape for a literal $
    results = {}
    for port, status in ((8157, 200), (8158, 301), (8159, 503)):
        server = _serve_once(port, status)
        try:
            run = subprocess.run(
                ["sh", "-c", script.replace("127.0.0.1:8000", f"127.0.0.1:{port}")],
                capture_output=True,
                timeout=20,
            )
        finally:
            server.shutdown()
        results[status] = run.returncode
    assert results[200] == 0
    assert results[301] != 0 and results[503] != 0


def test_the_image_leaves_out_the_local_environment_history_and_data():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".venv", ".git", "db.sqlite3", "test-artifacts", "build", ".secret_key"} <= ignored


def test_compose_requires_a_pseudonym_key_of_its_own():
    env = _compose()["services"]["web"]["environment"]
    assert env["PSEUDONYM_KEY"].startswith("${PSEUDONYM_KEY:?")


def test_the_production_install_has_no_fake_provider_and_the_demo_extra_brings_it():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {dep.split("==")[0].lower() for dep in project["dependencies"]}
    assert "aiohttp" not in names  # only the fake providers (fakes/) use it
    assert [d.split("==")[0] for d in project["optional-dependencies"]["demo"]] == ["aiohttp"]
    assert "heart-studio[demo]" in project["optional-dependencies"]["dev"]
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "fakes" in ignored  # the image never carries them
    makefile = (ROOT / "Makefile").read_text()
    assert "EXTRAS=demo scripts/bootstrap.sh" in makefile  # `make demo` installs them

""".env.example lists every environment variable the deployment reads, so it cannot drift.

The names are read from the code itself (the calls `env.str("NAME", ...)`, `os.environ.get("NAME")`
... in heart_site/settings.py, gunicorn.conf.py and the Celery worker's modules) and from
docker-compose.yml's `${NAME}` references."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READERS = ["heart_site/settings.py", "gunicorn.conf.py", "heart_site/celery.py",
           "core/worker_metrics.py", "heart_site/__init__.py"]  # fmt: skip
NOT_SETTINGS = {"DJANGO_SETTINGS_MODULE", "REMOTE_ADDR", "HTTP_AUTHORIZATION", "OMP_NUM_THREADS",
                "MKL_NUM_THREADS"}  # fmt: skip
ENV_CALLS = re.compile(r"^(env(\.\w+)?|os\.environ\.get|os\.getenv|environ\.get)$")


def variables_read(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and ENV_CALLS.match(ast.unparse(node.func)):
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.add(first.value)
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            if isinstance(node.slice, ast.Constant):
                names.add(node.slice.value)
        elif isinstance(node, ast.For) and ast.unparse(node.iter).startswith("("):
            # heart_site/__init__.py: `for _var in ("OPENBLAS_NUM_THREADS", ...)`.
            names |= {
                e.value for e in getattr(node.iter, "elts", []) if isinstance(e, ast.Constant)
            }
    return names - NOT_SETTINGS


def example_names() -> dict[str, str]:
    """{NAME: value} of every `NAME=value` line, set or shown commented out (`# NAME=value`)."""
    names = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        match = re.match(r"^(?:# )?([A-Z][A-Z0-9_]*)=(.*)$", line)
        if match:
            names[match.group(1)] = match.group(2)
        else:
            assert line == "" or line.startswith("# "), f"not a setting or a comment: {line!r}"
    return names


def test_every_variable_the_code_reads_is_in_env_example():
    read = set().union(*(variables_read(ROOT / path) for path in READERS))
    # The scan finds what it must (it cannot pass by finding nothing).
    assert {"DATABASE_URL", "SECRET_KEY", "METRICS_TOKEN", "GUNICORN_WORKERS",
            "CELERY_METRICS_PORT", "OPENBLAS_NUM_THREADS", "SENTRY_DSN"} <= read  # fmt: skip
    missing = sorted(read - set(example_names()))
    assert not missing, f"add these to .env.example, each with a comment: {missing}"


def test_every_variable_docker_compose_uses_is_in_env_example():
    used = set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)", (ROOT / "docker-compose.yml").read_text()))
    assert {"SECRET_KEY", "FLOWER_BASIC_AUTH", "METRICS_TOKEN"} <= used
    assert not sorted(used - set(example_names()))


def test_env_example_sets_no_secret_and_explains_each_setting():
    names = example_names()
    assert names["SECRET_KEY"] == ""  # compose refuses to start until one is set
    for secret in ("PSEUDONYM_KEY", "METRICS_TOKEN", "SENTRY_DSN", "FLOWER_BASIC_AUTH",
                   "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):  # fmt: skip
        assert names[secret] == "", secret
    lines = (ROOT / ".env.example").read_text().splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^(# )?[A-Z][A-Z0-9_]*=", line):
            block = lines[:i]
            while block and re.match(r"^(# )?[A-Z][A-Z0-9_]*=", block[-1]):
                block.pop()  # settings grouped under one comment share it
            assert block and block[-1].startswith("# ") and "=" not in block[-1].split()[1], (
                f"{line!r} has no comment above it"
            )

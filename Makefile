.PHONY: demo test test-fast setup lint bench docs

# One command from a fresh clone to a running platform (SQLite, eager Celery, demo study).
demo:
	WITH_BROWSER=0 EXTRAS=demo scripts/bootstrap.sh
	scripts/demo.sh

# One command for the whole test suite (PostgreSQL + Redis on 127.0.0.1 when they answer).
test:
	scripts/test.sh

# The quick loop: everything but the browser and integration tests (no servers started).
test-fast:
	scripts/test.sh -m "not browser and not integration"

setup:
	scripts/bootstrap.sh

lint:
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/lint-imports && .venv/bin/mypy

bench:
	.venv/bin/python benchmarks/bench_bradley_terry.py

# The documentation site (MkDocs, Material theme): every internal link and anchor checked.
docs:
	scripts/bootstrap.sh
	.venv/bin/mkdocs build --strict

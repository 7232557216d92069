"""Every package the product imports is installed by the production install (`EXTRAS=` in
scripts/bootstrap.sh: `[project].dependencies` and what they require), not only by the `dev`
extras the tests run with: `make demo` once stopped at an `import httpx` that only the test
tools had brought."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = [
    "annotation", "care", "completions", "core", "heart_site", "labelling", "llm", "ranking",
    "recruitment", "studio", "writing",
]  # fmt: skip
OURS = {*PRODUCT, "fakes", "tests", "benchmarks"}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[=<>!~;(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _installed_by_runtime() -> set[str]:
    """The distributions the runtime requirements install, transitively."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo = [_name(r) for r in project["dependencies"]]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [_name(r) for r in requires if "extra ==" not in r]
    return seen


def _imported_top_level() -> dict[str, str]:
    """Each third-party top-level module the product imports, with one file that does."""
    found: dict[str, str] = {}
    for app in PRODUCT:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    top = name.split(".")[0]
                    if top not in OURS and top not in sys.stdlib_module_names:
                        found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def test_every_package_the_product_imports_comes_with_the_runtime_install():
    runtime = _installed_by_runtime()
    providers = metadata.packages_distributions()
    missing = {
        module: where
        for module, where in _imported_top_level().items()
        if not {d.lower().replace("_", "-") for d in providers.get(module, [])} & runtime
    }
    assert not missing, f"imported by the product but not a runtime dependency: {missing}"

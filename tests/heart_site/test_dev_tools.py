"""The pre-commit hooks run the tools CI runs, at the same versions, and hold on today's tree."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _dev_pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [p.split("==") for p in project["optional-dependencies"]["dev"] if "==" in p]
    return {name.lower(): version for name, version in pins}


def _hooks() -> dict[str, dict]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    return {hook["id"]: hook for repo in config["repos"] for hook in repo["hooks"]}


def test_the_hooks_pin_the_same_tool_versions_as_the_dev_dependencies():
    pins = _dev_pins()
    hooks = _hooks()
    assert {"ruff-check", "ruff-format", "djlint"} <= set(hooks)
    for hook in hooks.values():
        for requirement in hook.get("additional_dependencies", []):
            name, version = requirement.split("==")
            assert pins[name.lower()] == version, (hook["id"], requirement, pins.get(name))
    for tool in ("pre-commit", "pytest-randomly", "djlint", "ruff"):
        assert re.fullmatch(r"\d+(\.\d+)+", pins[tool]), tool


def test_the_type_checker_and_the_layers_run_from_the_projects_own_environment():
    hooks = _hooks()
    for hook_id, tool in (("mypy", "mypy"), ("lint-imports", "lint-imports")):
        hook = hooks[hook_id]
        assert hook["language"] == "system" and hook["entry"] == f".venv/bin/{tool}"
        assert hook["pass_filenames"] is False  # the whole tree, as CI checks it


def test_every_template_passes_the_template_hook():
    hook = _hooks()["djlint"]
    templates = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "templates").rglob("*.html"))
    assert len(templates) > 40 and all(re.search(hook["files"], t) for t in templates)
    djlint = Path(sys.executable).parent / "djlint"
    result = subprocess.run(
        [str(djlint), *hook["entry"].split()[1:], "templates"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"Linted {len(templates)} files, found 0 errors" in result.stdout


def test_care_and_recruitment_are_type_checked_strictly():
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    strict = next(o for o in mypy["overrides"] if o.get("disallow_untyped_defs"))
    assert {"care.*", "recruitment.*"} <= set(strict["module"])
    assert strict["disallow_any_generics"] and strict["warn_return_any"]
    for app in ("care", "recruitment"):
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" not in path.parts:
                text = path.read_text()
                # An ignore names its error code and says why, on the same line.
                for line in text.splitlines():
                    if "type: ignore" in line:
                        assert re.search(r"type: ignore\[[\w-]+\].*#", line), (path, line)

#!/usr/bin/env python3
"""Move the apps to the sibling layout and rewrite every reference to the moved modules.

Run from the repository root: `python3 scripts/relayout.py`. Standard library only; safe to run
again (a move whose source is gone is skipped, and a tree already laid out is left unchanged).

What it does, in order:

1. Plans the moves (MOVES: a file or a whole folder; every tracked file under a folder moves,
   so files added to a folder after this script was written move with it).
2. Rewrites, in every tracked text file (.py .html .jinja .js .css .toml .cfg .yml .yaml .md
   .sh .ini, Makefile, Dockerfile, .env.example, .ci/run):
   - dotted module paths (imports, Celery task names, INSTALLED_APPS, settings paths, URL
     includes, mock.patch targets, docs), by the longest moved module that prefixes them;
   - file paths (`completions/llm/executor.py` in docs and comments), the same way;
   - in Python, relative imports that a move would break become absolute imports.
3. `git mv`s the files, adds the new packages' `__init__.py`, removes emptied folders.
4. Sorts imports and formats the Python files it changed with the project's ruff, when present.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

# old path -> new path (a folder ends with "/"). The order does not matter: the longest wins.
MOVES: dict[str, str] = {
    # The LLM engine and the writers: sibling apps (labels "llm", "llm_batch", "writing" kept).
    "completions/llm/": "llm/",
    "completions/writing/": "writing/",
    # Completions' LLM run kinds sit with the engine they drive (completions never imports llm).
    "completions/generation.py": "llm/generation.py",
    "completions/adversarial_run.py": "llm/adversarial_run.py",
    # Structured replies are plain JSON-schema helpers that completions' prompts use too.
    "llm/structured.py": "core/structured.py",
    "completions/llm/structured.py": "core/structured.py",
    # One name for the services layer: a package per app.
    "completions/services.py": "completions/services/__init__.py",
    "completions/services_adversarial.py": "completions/services/adversarial.py",
    "annotation/services_pairs.py": "annotation/services/pairs.py",
    # The studio: pages, REST API, downloads and release, writers' review, demo, formats.
    "heart_site/studio/": "studio/",
    "heart_site/api/": "studio/api/",
    "heart_site/downloads/": "studio/downloads/",
    "heart_site/writers_review.py": "studio/writers_review.py",
    "heart_site/writers_urls.py": "studio/writers_urls.py",
    "heart_site/demo.py": "studio/demo.py",
    "heart_site/material_formats.py": "studio/material_formats.py",
    "heart_site/formats.py": "studio/formats.py",
    "heart_site/models.py": "studio/models.py",
    "heart_site/admin.py": "studio/admin.py",
    "heart_site/tasks.py": "studio/tasks.py",
    "heart_site/management/": "studio/management/",
    # The base app every app may use.
    "heart_site/apps.py": "core/apps.py",
    "heart_site/enqueue.py": "core/enqueue.py",
    "heart_site/jobs.py": "core/jobs.py",
    "heart_site/health.py": "core/health.py",
    "heart_site/middleware.py": "core/middleware.py",
    "heart_site/errors.py": "core/errors.py",
    "heart_site/text_guard.py": "core/text_guard.py",
    "heart_site/login_throttle.py": "core/login_throttle.py",
    "heart_site/deploy.py": "core/deploy.py",
    "heart_site/pgbackend/": "core/pgbackend/",
    "heart_site/metrics.py": "core/metrics.py",
    "heart_site/error_reports.py": "core/error_reports.py",
    "heart_site/worker_metrics.py": "core/worker_metrics.py",
    # Tests named after what they test.
    "tests/completions/test_writing_rules.py": "tests/writing/test_text_rules.py",
    "tests/completions/test_writing_services.py": "tests/writing/test_services.py",
    "tests/completions/test_writing_views.py": "tests/writing/test_views.py",
    **{
        f"tests/heart_site/test_{name}.py": f"tests/core/test_{name}.py"
        for name in [
            "debug_pages",
            "error_reports",
            "faults",
            "favicon",
            "logins",
            "metrics",
            "outbox",
            "pgbackend",
            "security",
            "text_guard",
        ]
    },
    **{
        f"tests/heart_site/test_{name}.py": f"tests/studio/test_{name}.py"
        for name in [
            "api",
            "api_llm",
            "api_schema_fuzz",
            "demo",
            "downloads_release",
            "formats",
            "release_screen",
        ]
    },
    # One test-data strategy: the builders live beside the factories, by domain.
    "tests/factories.py": "tests/factories/__init__.py",
    "tests/annotation/rater_data.py": "tests/factories/annotation.py",
    "tests/completions/writing_data.py": "tests/factories/writing.py",
    "tests/labelling/helpers.py": "tests/factories/labelling.py",
    "tests/llm/builders.py": "tests/factories/llm.py",
    "tests/ranking/study_builder.py": "tests/factories/ranking.py",
}

# Dotted names that do not follow their module (the tasks split from heart_site/tasks.py; the
# refits' half of jobs_resume_stalled is ranking.tasks.refit_jobs_resume_stalled).
NAMES: dict[str, str] = {
    "heart_site.tasks.deferred_tasks_send": "core.tasks.deferred_tasks_send",
    "heart_site.tasks.jobs_resume_stalled": "studio.tasks.import_jobs_resume_stalled",
}

# Packages that must exist after the moves (an __init__.py is written when missing).
PACKAGES = ["core", "studio", "llm", "writing", "tests/core", "tests/writing", "tests/studio"]

TEXT_SUFFIXES = {".py", ".html", ".jinja", ".js", ".css", ".toml", ".cfg", ".yml", ".yaml", ".md"}
TEXT_SUFFIXES |= {".sh", ".ini"}
TEXT_NAMES = {"Makefile", "Dockerfile", ".env.example", "run"}
SELF = "scripts/relayout.py"

# Text edits beyond renamed paths: file (as after the moves) -> [(old, new, done), ...], each
# made unless the file holds `done` already (None: `old` itself is gone once done).
EDITS: dict[str, list[tuple[str, str, str | None]]] = {
    # The completions run kinds moved to the engine's app: it registers them.
    "completions/apps.py": [
        (
            "\n    def ready(self) -> None:\n"
            "        from llm import adversarial_run, generation  # noqa: F401  register the LLM"
            " run kinds\n",
            "",
            None,
        ),
    ],
    "llm/apps.py": [
        (
            '    default_auto_field = "django.db.models.BigAutoField"\n',
            '    default_auto_field = "django.db.models.BigAutoField"\n\n'
            "    def ready(self) -> None:\n"
            "        from . import adversarial_run, generation  # noqa: F401  the run kinds\n",
            "    def ready(self) -> None:",
        ),
    ],
    "core/apps.py": [
        ("class HeartSiteConfig(AppConfig):", "class CoreConfig(AppConfig):", None),
        ('    name = "heart_site"\n', '    name = "core"\n', None),
    ],
    # The app list: the base app under the apps, the studio app where the project package was.
    "heart_site/settings.py": [
        (
            '    "heart_site",  # wires the apps together: the demo loader\n',
            '    "studio",  # the study admins\' pages, the REST API, downloads, the demo loader\n',
            None,
        ),
        (
            '    "completions",\n',
            '    "core",  # the outbox, job leases, health, middleware, metrics: every app may use'
            ' it\n    "completions",\n',
            '    "core",',
        ),
    ],
}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def tracked() -> list[str]:
    return [p for p in git("ls-files", "-z").split("\0") if p]


def plan(files: list[str]) -> dict[str, str]:
    """Every tracked file that moves: old path -> new path."""
    moves: dict[str, str] = {}
    for path in files:
        for old in sorted(MOVES, key=len, reverse=True):
            new = MOVES[old]
            if old.endswith("/") and path.startswith(old):
                moves[path] = new + path[len(old) :]
                break
            if path == old:
                moves[path] = new
                break
    # A file moved by a folder move and again by a file move (completions/llm/structured.py).
    for path, new in list(moves.items()):
        if new in MOVES and not new.endswith("/"):
            moves[path] = MOVES[new]
    return {old: new for old, new in moves.items() if old != new}


def module_of(path: str) -> str | None:
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def name_map(moves: dict[str, str]) -> dict[str, str]:
    moved = {module_of(old) for old in moves}
    # A name's own entry counts only while its module is still to move (run twice: no change).
    names = {old: new for old, new in NAMES.items() if old.rpartition(".")[0] in moved}
    for old, new in moves.items():
        old_module, new_module = module_of(old), module_of(new)
        if old_module and new_module and old_module != new_module:
            names[old_module] = new_module
    return names


def path_map(moves: dict[str, str]) -> dict[str, str]:
    paths = dict(moves)
    for old, new in MOVES.items():
        if old.endswith("/"):
            paths[old.rstrip("/")] = new.rstrip("/")
    return paths


def renamed(value: str, table: dict[str, str], sep: str) -> str:
    """`value` with its longest prefix in `table` (whole components) replaced."""
    parts = value.split(sep)
    for cut in range(len(parts), 0, -1):
        head = sep.join(parts[:cut])
        if head in table:
            return sep.join([table[head], *parts[cut:]])
    return value


DOTTED = re.compile(r"(?<![\w./-])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
SLASHED = re.compile(r"(?<![\w./-])[A-Za-z_][\w.-]*(?:/[\w.-]+)+/?")


def rewrite_text(text: str, names: dict[str, str], paths: dict[str, str]) -> str:
    text = DOTTED.sub(lambda m: renamed(m.group(0), names, "."), text)

    def path(m: re.Match[str]) -> str:
        value = m.group(0)
        slash = value.endswith("/")
        value = value.rstrip("/")
        return renamed(value, paths, "/") + ("/" if slash else "")

    return SLASHED.sub(path, text)


def absolute(package: str, level: int, module: str | None) -> str:
    base = package.split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def rewrite_relative(source: str, old_path: str, new_path: str, names: dict[str, str]) -> str:
    """Relative imports whose target or whose file moves become absolute imports."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    old_module = module_of(old_path) or ""
    old_package = old_module if old_path.endswith("__init__.py") else old_module.rpartition(".")[0]
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = absolute(old_package, node.level, node.module)
            moved_file = old_path != new_path
        else:  # `from pkg import module` where the module left its package
            base, moved_file = node.module or "", False
        targets = {a.name: renamed(f"{base}.{a.name}", names, ".") for a in node.names}
        new_base = renamed(base, names, ".")
        plain = all(t == f"{new_base}.{n}" for n, t in targets.items())
        if not moved_file and plain and (node.level == 0 or new_base == base):
            continue  # nothing moved, or a plain rename of an absolute import: done below
        groups: dict[str, list[str]] = {}
        for alias in node.names:
            full = targets[alias.name]
            if full == f"{new_base}.{alias.name}":
                home, name = new_base, alias.name
            else:
                home, _, name = full.rpartition(".")
            text = name + (f" as {alias.asname}" if alias.asname else "")
            groups.setdefault(home, []).append(text)
        indent = lines[node.lineno - 1][
            : len(lines[node.lineno - 1]) - len(lines[node.lineno - 1].lstrip())
        ]
        end = node.end_lineno if node.end_lineno is not None else node.lineno
        comment = ""
        last = lines[end - 1].rstrip("\n")
        if "#" in last:  # a noqa or a why: it stays with the import
            comment = "  #" + last.partition("#")[2]
        statement = "".join(
            f"{indent}from {_spelled(home, new_path, node.level)} import {', '.join(items)}"
            f"{comment}\n"
            for home, items in groups.items()
        )
        edits.append((node.lineno - 1, end, statement))
    for start, end, statement in sorted(edits, reverse=True):
        lines[start:end] = [statement]
    return "".join(lines)


def _spelled(home: str, new_path: str, level: int) -> str:
    """`home` as the file at `new_path` imports it: relative at the same level, or absolute."""
    if level:
        package = (module_of(new_path) or "").split(".")
        if not new_path.endswith("__init__.py"):
            package = package[:-1]
        ancestor = package[: len(package) - (level - 1)] if level > 1 else package
        prefix = ".".join(ancestor)
        if ancestor and (home == prefix or home.startswith(prefix + ".")):
            return "." * level + home[len(prefix) + 1 :]
    return home


def is_text(path: str) -> bool:
    p = Path(path)
    return p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES


def main() -> int:
    if not Path(".git").exists() and not Path("manage.py").exists():
        print("run from the repository root", file=sys.stderr)
        return 2
    files = tracked()
    moves = plan(files)
    names = name_map(moves)
    paths = path_map(moves)
    changed: list[str] = []
    for path in files:
        if path == SELF or not is_text(path) or not Path(path).is_file():
            continue
        original = Path(path).read_text(encoding="utf-8")
        text = original
        if path.endswith(".py"):
            text = rewrite_relative(text, path, moves.get(path, path), names)
        text = rewrite_text(text, names, paths)
        if text != original:
            Path(path).write_text(text, encoding="utf-8")
            changed.append(path)
    for old, new in sorted(moves.items()):
        Path(new).parent.mkdir(parents=True, exist_ok=True)
        git("mv", old, new)
    for path, edits in EDITS.items():
        if Path(path).is_file():
            original = Path(path).read_text(encoding="utf-8")
            text = original
            for old, new, done in edits:
                if done is None or done not in text:  # run twice: no change
                    text = text.replace(old, new)
            if text != original:
                Path(path).write_text(text, encoding="utf-8")
                changed.append(path)
    for package in PACKAGES:
        init = Path(package) / "__init__.py"
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text("")
            git("add", str(init))
    for old in moves:  # folders a move emptied (byte-code caches aside)
        folder = Path(old).parent
        while folder != Path(".") and folder.exists():
            rest = [p for p in folder.iterdir() if p.name != "__pycache__"]
            if rest:
                break
            shutil.rmtree(folder)
            folder = folder.parent
    python = sorted({moves.get(p, p) for p in changed + list(moves) if p.endswith(".py")} - {SELF})
    python = [p for p in python if "/migrations/" not in p]  # as written by makemigrations
    ruff = Path(".venv/bin/ruff")
    if python and ruff.exists():
        subprocess.run([str(ruff), "check", "--select", "I", "--fix", "-q", *python], check=False)
        subprocess.run([str(ruff), "format", "-q", *python], check=False)
    print(f"moved {len(moves)} files, rewrote {len(changed)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())

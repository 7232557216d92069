"""`make demo` serves, every time: the demo started exactly as a newcomer starts it.

A copy of this checkout (its own SQLite database, the same virtualenv) runs `make demo` five
times in a row, each time from a fresh database, on ports of its own: the development server
with its autoreloader, the fake LLM server, the links printed by the script. Each run must
answer 200 on /healthz, must not print its links before it answers, and must leave no process
behind once its process group is stopped (as Ctrl-C in a terminal stops them all).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import _missing

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
RUNS = 5
START_TIMEOUT = 240  # seconds: migrate and load the demo on a fresh database, then serve
BANNER = "HEART studio demo is ready."
RATER_LINK = re.compile(r"Rater link:\s+(\S+)")
NEWCOMER_ENV = {"PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "SHELL", "TERM"}
SKIP = shutil.ignore_patterns(
    ".venv", ".git", "db.sqlite3*", "build", "test-artifacts", "__pycache__", ".pytest_cache"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(url: str) -> int | None:
    try:
        return httpx.get(url, timeout=5, follow_redirects=True).status_code
    except httpx.HTTPError:
        return None


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """This checkout's files in a folder of their own, sharing the installed virtualenv."""
    if shutil.which("make") is None:
        _missing("needs make")
    if not (ROOT / ".venv" / "bin" / "python").exists():
        _missing("needs the project's .venv (scripts/bootstrap.sh)")
    copy = tmp_path_factory.mktemp("demo") / "heart"
    shutil.copytree(ROOT, copy, ignore=SKIP, symlinks=True)
    (copy / ".venv").symlink_to(ROOT / ".venv")
    return copy


def _start(
    checkout: Path, log: Path, command: tuple[str, ...] = ("make", "demo")
) -> tuple[subprocess.Popen, int, int]:
    (checkout / "db.sqlite3").unlink(missing_ok=True)
    port, fake_port = _free_port(), _free_port()
    # A newcomer's shell: none of the test run's settings (DEBUG=0, DATABASE_URL, ...).
    env = {k: v for k, v in os.environ.items() if k in NEWCOMER_ENV}
    # Every run imports the project as a fresh clone's first run does: nothing compiled yet.
    # The slower imports widen the window in which the autoreloader's two threads import at
    # once (where psycopg's import locks deadlocked: 4 runs of 4 with that bug, 0 without).
    env.update(
        PORT=str(port),
        FAKE_LLM_PORT=str(fake_port),
        FAKE_PROLIFIC_PORT=str(_free_port()),
        PYTHONDONTWRITEBYTECODE="1",
    )
    process = subprocess.Popen(
        list(command),
        cwd=checkout,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, as a terminal's job
        preexec_fn=_as_a_terminals_job,
    )
    return process, port, fake_port


def _as_a_terminals_job() -> None:
    """Ctrl-C reaches a terminal's job: a test run started in the background (`cmd &` in a
    script) ignores SIGINT and passes that on to every child, where no trap can undo it (the
    demo then never sees the Ctrl-C this file sends)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def _wait_until_served(process: subprocess.Popen, port: int, log: Path) -> str:
    """Poll /healthz; whenever the links are on screen, the server must already answer."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        assert "Traceback" not in text, f"the demo failed while starting:\n{text[-4000:]}"
        banner_shown = BANNER in text
        status = _answers(f"http://127.0.0.1:{port}/healthz")
        if banner_shown:
            assert status == 200, "the links were printed before the server answered"
        if status == 200:
            return _wait_for_banner(log)
        assert process.poll() is None, f"make demo exited:\n{log.read_text()[-3000:]}"
        time.sleep(0.5)
    pytest.fail(f"no 200 from /healthz within {START_TIMEOUT} s:\n{log.read_text()[-3000:]}")


def _wait_for_banner(log: Path) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if BANNER in text and "Stop the demo with Ctrl-C." in text:
            return text
        time.sleep(0.2)
    pytest.fail(f"the server answers but the links were not printed:\n{text[-3000:]}")


def _stop(process: subprocess.Popen) -> list[str]:
    """Stop the whole process group; return what is still alive after 20 s (then killed)."""
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        left = _group_members(process.pid)
        if not left:
            return []
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    return left


def _group_members(pgid: int) -> list[str]:
    """Live (not zombie) processes of a process group, as `pid command` lines."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, group = fields[0], int(fields[2])
        if group == pgid and state != "Z":
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            members.append(f"{stat.parent.name} {command}")
    return members


def test_make_demo_serves_five_times_in_a_row_and_stops_cleanly(checkout, tmp_path):
    for run in range(1, RUNS + 1):
        log = tmp_path / f"demo-{run}.log"
        process, port, fake_port = _start(checkout, log)
        try:
            output = _wait_until_served(process, port, log)
            rater_link = RATER_LINK.search(output).group(1)
            assert rater_link.startswith(f"http://127.0.0.1:{port}/r/")
            assert _answers(rater_link) == 200  # the first link a newcomer follows
            assert _answers(f"http://127.0.0.1:{fake_port}/healthz") == 200
            assert "Traceback" not in output, output[-3000:]
        finally:
            left = _stop(process)
        assert not left, f"run {run} left processes behind: {left}"
        assert _answers(f"http://127.0.0.1:{port}/healthz") is None
        assert _answers(f"http://127.0.0.1:{fake_port}/healthz") is None


def test_ctrl_c_ends_the_demo_cleanly_with_no_make_error(checkout, tmp_path):
    """Ctrl-C (SIGINT to the terminal's process group) is how a newcomer stops the demo: the
    script exits 0, so make reports no error, and nothing is left running. The demo script runs
    under make as `make demo` runs it, without the install step before it."""
    (checkout / "demo-only.mk").write_text(".PHONY: demo\ndemo:\n\tscripts/demo.sh\n")
    log = tmp_path / "demo-ctrl-c.log"
    process, port, fake_port = _start(checkout, log, ("make", "-f", "demo-only.mk", "demo"))
    try:
        _wait_until_served(process, port, log)
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            still = _group_members(process.pid)  # which one did not stop, for the report
            pytest.fail(f"60 s after Ctrl-C still running: {still}\n{log.read_text()[-3000:]}")
        deadline = time.monotonic() + 20
        while _group_members(process.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _group_members(process.pid)
    finally:
        if process.poll() is None or _group_members(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
    output = log.read_text(errors="replace")
    assert "make: ***" not in output, output[-2000:]
    assert "Demo stopped." in output and not left, (left, output[-2000:])
    assert _answers(f"http://127.0.0.1:{port}/healthz") is None
    assert _answers(f"http://127.0.0.1:{fake_port}/healthz") is None

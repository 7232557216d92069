"""Throw-away PostgreSQL and Redis servers for the tests that restart or stop one.

A test that restarts PostgreSQL or stops Redis must never touch a server it did not start: on a
shared machine (or a developer's laptop) the one on 127.0.0.1:5432 / :6379 belongs to others.
These start their own, on a free port, with their data in a temporary folder that is removed
afterwards. PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres`
system user (`runuser`), in a folder that user owns.

A missing binary skips the test, or fails it with REQUIRE_SERVICES=1 (CI runs them all).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import _missing

POSTGRES_USER = "postgres"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(0.2)
    return False


def postgres_bindir() -> Path | None:
    """The newest PostgreSQL server programs: Debian's /usr/lib/postgresql/N/bin, else PATH."""
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@dataclass
class PostgresCluster:
    """A running throw-away cluster: trust authentication, user `postgres`, 127.0.0.1:port."""

    bindir: Path
    folder: Path
    port: int
    run_as: list[str] = field(default_factory=list)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgres://{POSTGRES_USER}@127.0.0.1:{self.port}/{database}"

    def pg_ctl(self, *args: str) -> None:
        command = [
            *self.run_as,
            str(self.bindir / "pg_ctl"),
            "-D", str(self.data),
            "-l", str(self.folder / "server.log"),
            *args,
        ]  # fmt: skip
        subprocess.run(command, check=True, timeout=120, capture_output=True)

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c full_page_writes=off -c synchronous_commit=off"
        )
        self.pg_ctl("-o", options, "-w", "start")

    def restart(self) -> None:
        self.pg_ctl("-m", "fast", "-w", "restart")

    def stop(self) -> None:
        self.pg_ctl("-m", "immediate", "-w", "stop")

    def create_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')


@contextmanager
def throwaway_postgres() -> Iterator[PostgresCluster]:
    """initdb into a temporary folder, start on a free port, yield, then stop and remove it."""
    bindir = postgres_bindir()
    if bindir is None:
        _missing("needs PostgreSQL's server programs (initdb, pg_ctl: apt-get install postgresql)")
    run_as: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="heart-pg-"))
    if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to the postgres user
        runuser = shutil.which("runuser")
        try:
            account = pwd.getpwnam(POSTGRES_USER)
        except KeyError:
            account = None
        if runuser is None or account is None:
            shutil.rmtree(folder, ignore_errors=True)
            _missing("running as root needs runuser and a 'postgres' user for initdb")
        os.chown(folder, account.pw_uid, account.pw_gid)
        run_as = [runuser, "-u", POSTGRES_USER, "--"]
    cluster = PostgresCluster(bindir=bindir, folder=folder, port=free_port(), run_as=run_as)
    try:
        initdb = [str(bindir / "initdb"), "-D", str(cluster.data), "-U", POSTGRES_USER]
        options = ["--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]
        subprocess.run(
            [*run_as, *initdb, *options],
            check=True,
            timeout=120,
            capture_output=True,
        )
        cluster.start()
        yield cluster
    finally:
        if (cluster.data / "postmaster.pid").exists():
            cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class RedisServer:
    """A throw-away redis-server on 127.0.0.1:port (no persistence) that can be stopped and
    started again on the same port."""

    binary: str
    folder: Path
    port: int
    process: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        where = ["--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)]
        self.process = subprocess.Popen(
            [self.binary, *where, "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if not wait_for(self.answers, 20):
            self.stop()
            raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def answers(self) -> bool:
        import redis

        client = redis.Redis.from_url(self.url(), socket_connect_timeout=0.5, socket_timeout=0.5)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()


@contextmanager
def throwaway_redis() -> Iterator[RedisServer]:
    binary = shutil.which("redis-server")
    if binary is None:
        _missing("needs redis-server (apt-get install redis-server)")
    folder = Path(tempfile.mkdtemp(prefix="heart-redis-"))
    server = RedisServer(binary=binary, folder=folder, port=free_port())
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)

"""The benchmarks measure what they say: the export's own memory, the server the run started."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A parent that holds 300 MB, then starts a child that only reads its own peak, the way
# bench_export.py starts each export.
PARENT = """
import resource, subprocess, sys
held = bytearray(300 * 2**20)
held[:: 4096] = b"x" * len(held[:: 4096])
child = (
    "import sys; sys.path.insert(0, 'benchmarks'); import bench_export as b; "
    "import resource; "
    "print(b.peak_rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
)
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout)
"""


def test_the_export_benchmark_reads_the_child_s_own_peak_not_its_parent_s():
    out = subprocess.run(
        [sys.executable, "-c", PARENT], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    own_peak, inherited = float(out[0]), float(out[1])
    assert inherited > 300  # getrusage in the child reports the parent's 300 MB...
    assert own_peak < 150  # ...while the child itself never held more than its imports


def test_the_rater_benchmark_refuses_a_port_another_server_holds():
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "benchmarks/bench_rater_throughput.py", "--port", str(port)],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none"},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode != 0
    assert f"port {port} is already in use by another process" in result.stderr
    assert "setup:" not in result.stdout  # refused before building anything

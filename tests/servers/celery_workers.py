"""Real ``barb worker`` processes for the queue tests, and a way to kill one outright.

``barb_worker`` starts the real command. ``misbehaving_worker`` starts the same worker code
(``serve_worker``) with ``pool/pool_work.misbehaving`` as the job, so a test can ask a query
to hang past the soft limit the way a query stuck in C code would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

MISBEHAVING = Path(__file__).parent.parent / "pool" / "misbehaving_worker.py"
BARB = Path(sys.executable).parent / "barb"
READY_S = 60.0


class WorkerProcess:
    def __init__(
        self, command: list[str], env: dict[str, str], log: Path, *, own_session: bool = True
    ) -> None:
        self.log = log
        self._log_file = log.open("ab")
        # A session of its own: kill() takes the main process and its children together,
        # as a machine or container that is lost would. (Linux gives each session its own
        # share of a busy CPU, so a benchmark keeps its workers in its own session.)
        self.own_session = own_session
        self.process = subprocess.Popen(
            command,
            env={**os.environ, **env},
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=own_session,
        )

    def wait_ready(self) -> WorkerProcess:
        deadline = time.monotonic() + READY_S
        while " ready." not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"worker did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)
        return self

    def kill(self) -> None:
        """SIGKILL to the worker and its children: nothing of it reports anything."""
        assert self.own_session, "only a worker in its own session can be killed whole"
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            if self.own_session:
                os.killpg(self.process.pid, signal.SIGTERM)
            else:  # Celery's warm shutdown ends its children
                self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log_file.close()


def worker_env(redis_url: str, data_dir: Path, timeout_s: float) -> dict[str, str]:
    return {
        "BARB_QUEUE_URL": redis_url,
        "BARB_DATA_DIR": str(data_dir),
        "BARB_QUERY_TIMEOUT_S": str(timeout_s),
        "PYTHONUNBUFFERED": "1",
    }


def barb_worker(
    env: dict[str, str],
    log: Path,
    instruments: str,
    concurrency: int = 1,
    *,
    own_session: bool = True,
) -> WorkerProcess:
    command = [
        str(BARB),
        "worker",
        f"--instruments={instruments}",
        f"--concurrency={concurrency}",
    ]
    return WorkerProcess(command, env, log, own_session=own_session).wait_ready()


def misbehaving_worker(
    env: dict[str, str], log: Path, instruments: str, concurrency: int = 1
) -> WorkerProcess:
    command = [sys.executable, str(MISBEHAVING), instruments, str(concurrency)]
    return WorkerProcess(command, env, log).wait_ready()

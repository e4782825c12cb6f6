"""`reqgate serve` on SQLite in role `all`: the reviews run in a child process, the webhooks in this one.

A review's work (DBOS's bookkeeping, the trackers' clients, Markdown conversion) is Python that holds the
interpreter lock; in the web process it stalled acknowledgements by ~100 ms whenever workflows started
during a burst. The child is `reqgate serve --worker-child` with the role `worker`: it runs the queue workers
and the inbox pump on the same files. It dies with its parent (the kernel kills it), reports when it is up
through a pipe, and is restarted after a pause if it exits on its own.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence

from reqgate.bot.logging import get_logger

log = get_logger("reqgate.worker_process")

READY_FD_ENV = "REQGATE_WORKER_READY_FD"
PARENT_ENV = "REQGATE_WORKER_PARENT"
RESTART_PAUSES_S = (1.0, 2.0, 5.0, 10.0, 30.0)
WORKER_NICENESS = 10
_PR_SET_PDEATHSIG = 1


class WorkerProcess:
    def __init__(self, argv: Sequence[str] | None = None) -> None:
        self.argv = list(argv or [sys.executable, "-m", "reqgate.bot.cli", "serve", "--worker-child"])
        self._process: subprocess.Popen[bytes] | None = None
        self._ready = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="reqgate-worker-process", daemon=True)
        self.restarts = 0

    def start(self) -> None:
        self._thread.start()

    def ready(self) -> str | None:
        if self._ready.is_set() and self._process is not None and self._process.poll() is None:
            return None
        return "the worker process is not running"

    def stop(self, timeout: float = 20.0) -> None:
        self._stopping.set()
        process = self._process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        self._thread.join(timeout=5)

    def _supervise(self) -> None:
        failures = 0
        while not self._stopping.is_set():
            code = self._run_once()
            if self._stopping.is_set():
                return
            pause = RESTART_PAUSES_S[min(failures, len(RESTART_PAUSES_S) - 1)]
            failures += 1
            self.restarts += 1
            log.error("worker_process_exited", exit_code=code, restart_in_s=pause)
            self._stopping.wait(pause)

    def _run_once(self) -> int:
        read_fd, write_fd = os.pipe()
        env = {**os.environ, "REQGATE_ROLE": "worker", READY_FD_ENV: str(write_fd), PARENT_ENV: str(os.getpid())}
        self._ready.clear()
        try:
            self._process = subprocess.Popen(self.argv, env=env, pass_fds=(write_fd,))
        finally:
            os.close(write_fd)
        with os.fdopen(read_fd, "rb") as ready_pipe:
            if ready_pipe.read(1):
                self._ready.set()
                log.info("worker_process_ready", pid=self._process.pid)
        return self._process.wait()


def become_child() -> int | None:
    """In the child, before anything else: die with the parent. Returns the ready pipe's fd, None when this
    process is not a supervised child."""
    parent = os.environ.get(PARENT_ENV)
    ready_fd = os.environ.get(READY_FD_ENV)
    if parent is None or ready_fd is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != int(parent):  # the parent died before the request took effect
        os._exit(1)
    # An acknowledgement is waited for by a sender with a timeout; a review by nobody in particular. When
    # both want the CPU, the web process goes first.
    os.nice(WORKER_NICENESS)
    return int(ready_fd)


def report_ready(ready_fd: int) -> None:
    os.write(ready_fd, b"1")
    os.close(ready_fd)

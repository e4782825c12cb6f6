"""Every line the server writes is JSON, library lines included, and says the truth about the socket: `serving`
only once the port is bound, a port in use as one clear JSON error."""

from __future__ import annotations

import io
import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reqgate.bot.logging import route_library_logs
from tests.e2e_support import REPO_ROOT, free_port


@pytest.fixture
def routed() -> io.StringIO:
    stream = io.StringIO()
    saved = {name: (logging.getLogger(name).handlers[:], logging.getLogger(name).propagate, logging.getLogger(name).level)
             for name in ("", "dbos", "uvicorn.error")}
    route_library_logs("INFO", stream=stream)
    yield stream
    for name, (handlers, propagate, level) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers, logger.propagate = handlers, propagate
        logger.setLevel(level)


def test_library_lines_are_json_and_scrubbed(routed: io.StringIO) -> None:
    logging.getLogger("uvicorn.error").error("boom with Bearer abcdefghijklmnopqrstuvwxyz0123")
    logging.getLogger("dbos").warning("recovering %d workflows", 3)
    try:
        raise ValueError("inner")
    except ValueError:
        logging.getLogger("urllib3.connectionpool").exception("retrying")
    records = [json.loads(line) for line in routed.getvalue().splitlines()]
    assert [(r["logger"], r["level"]) for r in records] == [
        ("uvicorn.error", "error"), ("dbos", "warning"), ("urllib3.connectionpool", "error")]
    assert records[1]["event"] == "recovering 3 workflows" and "timestamp" in records[1]
    assert "abcdefghijklmnop" not in records[0]["event"]
    assert "ValueError: inner" in records[2]["exception"]


def test_dbos_keeps_our_handler(routed: io.StringIO) -> None:
    from dbos._logger import init_logger

    init_logger()  # what DBOS() does: it adds its plain-text handler only to a logger without one
    # pytest's own capture handlers aside (it attaches them to loggers that do not propagate).
    (handler,) = [h for h in logging.getLogger("dbos").handlers if not type(h).__module__.startswith("_pytest")]
    assert isinstance(handler.formatter, __import__("structlog").stdlib.ProcessorFormatter)


def _serve(port: int, tmp_path: Path) -> subprocess.Popen[bytes]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("REQGATE_", "ANTHROPIC_"))},
           "REQGATE_DATA_DIR": str(tmp_path / "data"), "REQGATE_GITHUB_WEBHOOK_SECRET": "s",
           "REQGATE_GITHUB_TOKEN": "t", "REQGATE_GITHUB_API_URL": "http://127.0.0.1:9"}
    return subprocess.Popen([sys.executable, "-m", "reqgate.bot.cli", "serve", "--port", str(port)],
                            cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.mark.server
def test_a_port_in_use_is_one_json_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = _serve(taken.getsockname()[1], tmp_path)
        out, _ = server.communicate(timeout=120)
    assert server.returncode == 1
    (line,) = out.decode().splitlines()
    record = json.loads(line)
    assert record["event"] == "cannot_listen" and record["level"] == "error"
    assert record["reason"].startswith("address already in use")


@pytest.mark.server
def test_serving_is_said_once_the_port_accepts(tmp_path: Path) -> None:
    port = free_port()
    server = _serve(port, tmp_path)
    try:
        assert server.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = server.stdout.readline()
            assert line, "the server exited before saying it serves"
            if json.loads(line).get("event") == "serving":
                break
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # accepted at once: the socket listened before the line was written
    finally:
        server.terminate()
        server.wait(30)

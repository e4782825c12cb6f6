"""`reqgate serve` as a real subprocess on 127.0.0.1, pointed at the fake GitHub and the fake Anthropic, and
the octokit example payloads signed as GitHub signs them. Shared by the end-to-end, crash and bench code."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from dbos import DBOSClient

REPO_ROOT = Path(__file__).resolve().parent.parent
PAYLOADS = REPO_ROOT.parent / "shared" / "data" / "github-payloads"
SECRET = "It's a Secret to Everybody"
REPO = "Codertocat/Hello-World"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def payload(name: str) -> dict[str, Any]:
    return json.loads((PAYLOADS / f"{name}.json").read_text(encoding="utf-8"))


def issue_event(action: str = "opened", number: int = 1, **issue: Any) -> dict[str, Any]:
    data = payload("issues.edited" if action == "edited" else "issues.opened")
    data["action"] = action
    data["issue"]["number"] = number
    data["issue"].update(issue)
    if action == "edited":
        data["changes"] = {"body": {"from": "the old text"}}
    return data


def comment_event(body: str, number: int = 1, login: str = "Codertocat", association: str = "OWNER",
                  user_type: str = "User", **issue: Any) -> dict[str, Any]:
    data = payload("issue_comment.created")
    data["issue"]["number"] = number
    data["issue"].update(issue)
    data["comment"]["body"] = body
    data["comment"]["user"] = {**data["comment"]["user"], "login": login, "type": user_type}
    data["comment"]["author_association"] = association
    data["sender"] = {**data["sender"], "login": login, "type": user_type}
    return data


class BotServer:
    """One `reqgate serve` process. `kill()` is SIGKILL: no shutdown hook runs, as in a crash."""

    def __init__(self, data_dir: Path, env: dict[str, str], log_path: Path | None = None) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path or data_dir / "server.log"
        self.name = "reqgate serve"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("REQGATE_", "ANTHROPIC_"))},
            "REQGATE_DATA_DIR": str(data_dir),
            "REQGATE_GITHUB_WEBHOOK_SECRET": SECRET,
            "REQGATE_QUEUE_POLL_S": "0.1",
            "REQGATE_WRITE_SPACING_S": "0",
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.client = httpx.Client(base_url=self.url, timeout=10)
        self._dbos: DBOSClient | None = None

    def launch(self) -> BotServer:
        """Start without waiting (several at once); `wait_ready` afterwards."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.client = httpx.Client(base_url=self.url, timeout=10)
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "reqgate.bot.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=self.env.get("REQGATE_TEST_CWD", str(REPO_ROOT)), env=self.env, stdout=log,
            stderr=subprocess.STDOUT,
        )
        return self

    def wait_ready(self, timeout: float = 60.0) -> BotServer:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{self.logs()[-3000:]}")
            try:
                ready = self.client.get("/readyz")
                if ready.status_code == 200 and all(ready.json().get("identities", {}).values()):
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        # A server that never became ready is no test's to stop: kill it here, or it outlives the run.
        self.kill()
        raise RuntimeError(f"{self.name} did not become ready:\n{self.logs()[-3000:]}")

    def start(self, timeout: float = 60.0) -> BotServer:
        return self.launch().wait_ready(timeout)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.client.close()
        if self._dbos is not None:
            self._dbos.destroy()
            self._dbos = None

    def logs(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def deliver(self, event: str, data: dict[str, Any] | bytes, delivery: str | None = None,
                secret: str | None = SECRET, **headers: str) -> httpx.Response:
        body = data if isinstance(data, bytes) else json.dumps(data).encode()
        sent = {"Content-Type": "application/json", "X-GitHub-Event": event,
                "X-GitHub-Delivery": delivery or str(uuid.uuid4()), **headers}
        if secret is not None:
            sent["X-Hub-Signature-256"] = sign(body, secret)
        return self.client.post("/webhooks/github", content=body, headers=sent)

    # ---- the workflow database, read with DBOS's own client as an operator would -------------------

    def dbos(self) -> DBOSClient:
        if self._dbos is None:
            self._dbos = DBOSClient(system_database_url=f"sqlite:///{self.data_dir / 'reqgate.sqlite'}")
        return self._dbos

    def workflows(self) -> dict[str, str]:
        listed = self.dbos().list_workflows(workflow_id_prefix=["gh:", "jira:"], load_input=False,
                                            load_output=False)
        return {status.workflow_id: status.status for status in listed}

    def wait_done(self, workflow_id: str, timeout: float = 60.0) -> dict[str, Any]:
        """The workflow's outcome once it succeeded; fails on ERROR or timeout."""
        deadline = time.monotonic() + timeout
        status = None
        while time.monotonic() < deadline:
            status = self.workflows().get(workflow_id)
            if status == "SUCCESS":
                return self.dbos().retrieve_workflow(workflow_id).get_result()
            if status == "ERROR":
                raise AssertionError(f"{workflow_id} ended in ERROR:\n{self.logs()[-3000:]}")
            time.sleep(0.1)
        raise AssertionError(f"{workflow_id} not done after {timeout}s (status {status}):\n{self.logs()[-3000:]}")

    def steps(self, workflow_id: str) -> list[str]:
        return [step["function_name"] for step in self.dbos().list_workflow_steps(workflow_id)]



"""`reqgate serve` processes on one PostgreSQL database: web replicas, workers, role `all`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from dbos import DBOSClient

from tests.e2e_support import BotServer

# Start-up imports DBOS, PyGithub and the pipeline: slow on a busy CI machine, slower a dozen at once.
START_TIMEOUT_S = 300.0


def database_url(server_url: str, name: str) -> str:
    return sa.make_url(server_url).set(database=name).render_as_string(hide_password=False)


class PgServer(BotServer):
    def __init__(self, url: str, data_dir: Path, env: dict[str, str], name: str) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        super().__init__(data_dir, {"REQGATE_DATABASE_URL": url, **env}, log_path=data_dir / f"{name}.log")
        self.database_url = url
        self.name = name

    def dbos(self) -> DBOSClient:
        if self._dbos is None:
            self._dbos = DBOSClient(system_database_url=self.database_url)
        return self._dbos

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> PgServer:
        super().wait_ready(timeout)
        return self

    def start(self, timeout: float = START_TIMEOUT_S) -> PgServer:
        self.launch()
        return self.wait_ready(timeout)


class PgCluster:
    """Processes on one database, each with its own log; all stopped at the end of the test."""

    def __init__(self, url: str, tmp_path: Path, env: dict[str, str]) -> None:
        self.url = url
        self.tmp_path = tmp_path
        self.env = env
        self.servers: list[PgServer] = []
        self._dbos: DBOSClient | None = None

    def server(self, name: str, role: str = "all", executor_id: str | None = None, **env: str) -> PgServer:
        settings = {"REQGATE_ROLE": role, "REQGATE_EXECUTOR_ID": executor_id or name, **self.env, **env}
        server = PgServer(self.url, self.tmp_path / name, settings, name)
        self.servers.append(server)
        return server

    def dbos(self) -> DBOSClient:
        if self._dbos is None:
            self._dbos = DBOSClient(system_database_url=self.url)
        return self._dbos

    def workflows(self) -> dict[str, Any]:
        listed = self.dbos().list_workflows(workflow_id_prefix=["gh:"], load_input=False, load_output=False)
        return {status.workflow_id: status for status in listed}

    def wait_all_done(self, ids: list[str], timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            found = self.workflows()
            states = {wid: found[wid].status if wid in found else None for wid in ids}
            if all(state in ("SUCCESS", "ERROR") for state in states.values()):
                return found
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {s.name}\n{s.logs()[-2000:]}" for s in self.servers)
                raise AssertionError(f"not done after {timeout}s: {states}\n{logs}")
            time.sleep(0.2)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        if self._dbos is not None:
            self._dbos.destroy()

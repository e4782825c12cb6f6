"""Process settings from the environment (`REQGATE_*`). Secrets are `SecretStr`: they never show in a repr or a log.

`ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` are not here: the LLM layer reads them itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

Role = Literal["all", "web", "worker"]


_SUPPORTED_DRIVERS = ("postgresql", "postgresql+psycopg", "sqlite")
# Reviews in flight per LLM call allowed at once, unless REQGATE_WORKER_IN_FLIGHT says otherwise. A review
# spends about as long outside its LLM calls (fetch, ~1 s of write pacing, the writes) as in them, so twice
# would just keep the LLM busy; four leaves room for a slow tracker or a busy installation.
IN_FLIGHT_PER_LLM_CALL = 4


def _psycopg3(url: str) -> str:
    """psycopg 3 is what DBOS ships with (and uses for a driverless URL); a URL written for psycopg2 is
    mapped to it rather than failing on a driver that is not installed."""
    for prefix in ("postgresql+psycopg2://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix):]
    return url


class SettingsError(ValueError):
    """The settings cannot run a server; the message names the variables to set."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="REQGATE_", env_ignore_empty=True, extra="ignore")

    # GitHub: an App (id + private key, installation from each delivery) or a plain token.
    github_webhook_secret: SecretStr | None = None
    github_app_id: int | None = None
    github_private_key: SecretStr | None = None
    github_private_key_path: Path | None = None
    github_token: SecretStr | None = None
    github_api_url: str = "https://api.github.com"

    # Jira Cloud (email + API token) or Data Center (personal access token).
    jira_url: str | None = None
    jira_email: str | None = None
    jira_api_token: SecretStr | None = None
    jira_pat: SecretStr | None = None
    jira_webhook_secret: SecretStr | None = None
    jira_automation_token: SecretStr | None = None
    jira_config_dir: Path | None = None

    data_dir: Path = Path("data")
    # Overrides the embedded SQLite file, e.g. postgresql://user:pass@host/reqgate; it may hold a password.
    database_url: SecretStr | None = None

    # SQLite fsync policy (WAL mode): NORMAL survives a killed process, FULL also an OS crash or power cut.
    sqlite_synchronous: Literal["NORMAL", "FULL"] = "NORMAL"

    # Accept unsigned webhooks. Only for a laptop: anyone who can reach the port can then trigger reviews.
    dev_insecure: bool = False
    max_body_bytes: int = Field(default=1024 * 1024, gt=0)
    # GitHub asks integrators to leave at least a second between content-creating requests. Enforced per
    # installation (per token in token mode) across every worker together (bot/pacing.py).
    write_spacing_s: float = Field(default=1.0, ge=0)
    # Jira documents no spacing; when set, a site's writes are spaced likewise across all workers.
    jira_write_spacing_s: float = Field(default=0.0, ge=0)

    # all: one process serves webhooks and runs reviews; web: only enqueues; worker: only runs reviews.
    role: Role = "all"
    # Stable per worker (the StatefulSet pod name) so that a restarted worker recovers its own workflows.
    # Unset: the host name, which is unique per container and per pod (bot/executors.py refuses a second
    # live process with the same id).
    executor_id: str | None = None
    # A process that has not written its heartbeat for this long is taken for dead: live workers resume its
    # unfinished reviews (bot/executors.py). Long enough that a slow database moment is not a death.
    executor_timeout_s: float = Field(default=60.0, gt=0)
    # LLM requests a worker process sends at once (bot/llm_slots.py): what costs money and meets the
    # provider's rate limits. It used to bound whole reviews, so one waiting for its write slot idled the LLM.
    worker_concurrency: int = Field(default=8, gt=0)
    # Reviews a worker process has taken from the queue and not finished: in an LLM request or waiting for
    # one, waiting for a write slot (GitHub's pacing) or for the tracker, or sleeping before an outage retry.
    # Unset: `IN_FLIGHT_PER_LLM_CALL` times `worker_concurrency`.
    worker_in_flight: int | None = Field(default=None, gt=0)
    # How often each worker asks the database for queued reviews. A review waits half of it on average
    # before it starts; with more reviews in flight than LLM slots that no longer idles the LLM under load,
    # so it is a matter of latency on a quiet system. One small indexed query per worker four times a second
    # is nothing to PostgreSQL or SQLite.
    queue_poll_s: float = Field(default=0.25, gt=0)
    # A review that fails because the tracker is unreachable, answers 5xx or rate-limits past the in-step
    # retries is tried again by the workflow after a durable sleep, the pause doubling from the first to the
    # longest, until the horizon has passed; only then does it end in the error label.
    outage_retry_first_s: float = Field(default=30.0, gt=0)
    outage_retry_max_s: float = Field(default=600.0, gt=0)
    outage_horizon_s: float = Field(default=3600.0, ge=0)
    # GitHub App mode: how often the recent deliveries are checked for failed ones (0: never), and how far
    # back. GitHub never redelivers on its own.
    redeliver_interval_s: float = Field(default=600.0, ge=0)
    redeliver_lookback_s: float = Field(default=3 * 3600.0, gt=0)
    log_level: str = "INFO"

    def system_database_url(self) -> str:
        if self.database_url is not None:
            return _psycopg3(self.database_url.get_secret_value())
        return f"sqlite:///{(self.data_dir / 'reqgate.sqlite').resolve()}"

    def inbox_path(self) -> Path | None:
        """The SQLite file of accepted deliveries (bot/inbox.py), beside the database; None with a server
        database, whose web replicas have no disk of their own to keep deliveries on."""
        # SQLAlchemy is imported here, not at the top: `reqgate review` reads no database and starts faster.
        from sqlalchemy.engine import url as sa_url

        url = sa_url.make_url(self.system_database_url())
        if url.get_backend_name() != "sqlite" or not url.database:
            return None
        database = Path(url.database)
        return database.with_name(f"{database.stem}-inbox.sqlite")

    @property
    def reviews_in_flight(self) -> int:
        return self.worker_in_flight or IN_FLIGHT_PER_LLM_CALL * self.worker_concurrency

    @property
    def workers_in_child(self) -> bool:
        """Role `all` on a SQLite file: this process answers webhooks, a child it starts runs the reviews
        (bot/worker_process.py)."""
        return self.role == "all" and self.inbox_path() is not None

    @property
    def uses_sqlite(self) -> bool:
        return self.system_database_url().startswith("sqlite")

    @property
    def github_app_configured(self) -> bool:
        return self.github_app_id is not None and (
            self.github_private_key is not None or self.github_private_key_path is not None
        )

    @property
    def github_enabled(self) -> bool:
        return bool(self.github_webhook_secret or self.github_token or self.github_app_id is not None)

    @property
    def jira_enabled(self) -> bool:
        return bool(self.jira_url)

    def github_private_key_pem(self) -> str | None:
        if self.github_private_key is not None:
            return self.github_private_key.get_secret_value()
        if self.github_private_key_path is not None:
            try:
                return self.github_private_key_path.read_text(encoding="utf-8")
            except OSError as exc:
                raise SettingsError(
                    f"REQGATE_GITHUB_PRIVATE_KEY_PATH: cannot read {self.github_private_key_path}: "
                    f"{exc.strerror or exc}"
                ) from None
        return None

    def problems(self) -> list[str]:
        """Everything that stops `reqgate serve` from starting, each with the variable to set."""
        from sqlalchemy.engine import url as sa_url

        found: list[str] = []
        if self.database_url is not None:
            try:
                driver = sa_url.make_url(self.system_database_url()).drivername
            except ValueError:
                driver = None
            if driver not in _SUPPORTED_DRIVERS:
                found.append(
                    "REQGATE_DATABASE_URL: use postgresql://user:password@host:5432/database (the psycopg 3 "
                    "driver; postgresql+psycopg2:// is accepted and mapped) or sqlite:///path"
                )
        if not (self.github_enabled or self.jira_enabled):
            found.append(
                "no tracker is configured: set REQGATE_GITHUB_APP_ID with REQGATE_GITHUB_PRIVATE_KEY "
                "(or REQGATE_GITHUB_PRIVATE_KEY_PATH), or REQGATE_GITHUB_TOKEN; for Jira set REQGATE_JIRA_URL"
            )
        if self.github_enabled:
            if self.github_app_id is not None and not self.github_app_configured:
                found.append(
                    "REQGATE_GITHUB_APP_ID is set but the App's private key is not: set "
                    "REQGATE_GITHUB_PRIVATE_KEY or REQGATE_GITHUB_PRIVATE_KEY_PATH"
                )
            elif not (self.github_app_configured or self.github_token):
                found.append(
                    "GitHub has neither App credentials nor a token: set REQGATE_GITHUB_APP_ID with "
                    "REQGATE_GITHUB_PRIVATE_KEY (or REQGATE_GITHUB_PRIVATE_KEY_PATH), or REQGATE_GITHUB_TOKEN"
                )
            if self.github_webhook_secret is None and not self.dev_insecure and self.role != "worker":
                found.append(
                    "REQGATE_GITHUB_WEBHOOK_SECRET is not set: the server refuses unsigned webhooks "
                    "(REQGATE_DEV_INSECURE=1 allows them on a development machine)"
                )
        if self.jira_enabled:
            if not ((self.jira_email and self.jira_api_token) or self.jira_pat):
                found.append(
                    "Jira has no credentials: set REQGATE_JIRA_EMAIL with REQGATE_JIRA_API_TOKEN (Cloud) "
                    "or REQGATE_JIRA_PAT (Data Center)"
                )
            authenticated = self.jira_webhook_secret or self.jira_automation_token or self.dev_insecure
            if not authenticated and self.role != "worker":
                found.append(
                    "Jira webhooks cannot be authenticated: set REQGATE_JIRA_WEBHOOK_SECRET or "
                    "REQGATE_JIRA_AUTOMATION_TOKEN (REQGATE_DEV_INSECURE=1 allows neither on a development machine)"
                )
        return found

    def check_serveable(self) -> None:
        found = self.problems()
        if found:
            raise SettingsError("cannot start:\n" + "\n".join(f"  - {p}" for p in found))

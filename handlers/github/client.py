"""PyGithub clients for the bot: authentication (token or App), retries that respect GitHub's rate limits,
spaced writes, one client per App installation, and the bot's own identity."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal

from github import Auth, Github, GithubIntegration, GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait
from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from urllib3 import Retry
from urllib3.connectionpool import ConnectionPool
from urllib3.exceptions import MaxRetryError, ResponseError
from urllib3.response import BaseHTTPResponse, HTTPResponse

from reqgate.handlers.base import TicketRef
from reqgate.handlers.github.webhook import BotIdentity

DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = "reqgate/0.1"

RateLimitHook = Callable[[float], None]

# Creating an issue comment is the one write that is not idempotent: a retried POST whose first attempt
# was processed posts the comment twice. The tracker searches before it creates again instead.
_COMMENT_CREATE = re.compile(r"/issues/\d+/comments/?(?:\?.*)?$")
_RATE_LIMIT_STATUSES = frozenset({403, 429})


class _ParsedKey:
    """The App's private key, parsed once. Given the PEM, PyJWT parses it for every JWT (one per installation
    token): ~50 ms of CPU for the RSA key's checks, against ~1 ms for the signature. Parsed at the first JWT,
    so that a bad key fails where a JWT was asked for, as before."""

    def __init__(self, pem: str) -> None:
        self._pem = pem
        self._key: Any = None

    def __call__(self) -> Any:
        if self._key is None:
            from cryptography.hazmat.primitives.serialization import load_pem_private_key

            self._key = load_pem_private_key(self._pem.encode(), password=None)
        return self._key


def app_auth(app_id: int | str, private_key_pem: str) -> Auth.AppAuth:
    # PyGithub hands what the callable returns to PyJWT, which takes a parsed key as well as a PEM.
    return Auth.AppAuth(app_id, private_key=_ParsedKey(private_key_pem))


class GitHubAuth(BaseModel):
    """A personal / installation-less token, or a GitHub App (id + private key PEM)."""

    model_config = ConfigDict(frozen=True)

    token: SecretStr | None = None
    app_id: int | None = None
    private_key: SecretStr | None = None

    @model_validator(mode="after")
    def _one_mode(self) -> GitHubAuth:
        app = self.app_id is not None or self.private_key is not None
        if self.token is not None and app:
            raise ValueError("give either a token or an App id and private key, not both")
        if self.token is None and (self.app_id is None or self.private_key is None):
            raise ValueError("give a token, or both an App id and a private key")
        return self

    @property
    def mode(self) -> Literal["token", "app"]:
        return "token" if self.token is not None else "app"


class ClientOptions(BaseModel):
    """Politeness and resilience knobs. Tests set the spacing and backoff to 0."""

    model_config = ConfigDict(frozen=True)

    # GitHub asks for at least one second between content-creating requests.
    seconds_between_writes: float = Field(default=1.0, ge=0)
    seconds_between_requests: float = Field(default=0.0, ge=0)
    max_retries: int = Field(default=4, ge=0)
    backoff_factor: float = Field(default=0.5, ge=0)
    backoff_max: float = Field(default=30.0, ge=0)
    # A rate-limit wait longer than this fails the call (the durable workflow retries later) instead of
    # blocking a worker for up to an hour.
    max_rate_limit_wait: float = Field(default=120.0, ge=0)
    # Wait when GitHub signals a rate limit without saying how long (its docs say: at least a minute).
    secondary_rate_wait: float = Field(default=60.0, ge=0)
    timeout: int = Field(default=15, gt=0)
    per_page: int = Field(default=100, ge=1, le=100)


def rate_limit_wait(headers: Any, now: float | None = None) -> float | None:
    """Seconds GitHub asks to wait, from `retry-after` or an exhausted `x-ratelimit-remaining` + reset."""
    retry_after = headers.get("retry-after")
    if retry_after is not None:
        try:
            return max(float(retry_after), 0.0)
        except ValueError:
            return None
    if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset"):
        try:
            reset = float(headers["x-ratelimit-reset"])
        except ValueError:
            return None
        # One second past the reset: the reset time has a one-second resolution.
        return max(reset - (time.time() if now is None else now) + 1.0, 0.0)
    return None


class PoliteRetry(GithubRetry):
    """`GithubRetry` with bounded, observable rate-limit waits, 429 handled like 403, and no blind retry of
    a comment creation that may already have happened.

    Rate-limited requests were not processed, so every method is retried after the wait GitHub asks for;
    waits above `max_rate_limit_wait` raise `RateLimitExceededExceedsMaxWait` at once. 5xx and connection
    errors are retried with exponential backoff.
    """

    def __init__(self, *, on_wait: RateLimitHook | None = None, **kwargs: Any) -> None:
        self.on_wait = on_wait
        self.pending_wait: float | None = None
        kwargs.setdefault("allowed_methods", Retry.DEFAULT_ALLOWED_METHODS | {"GET", "POST", "PATCH"})
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> PoliteRetry:
        kw["on_wait"] = self.on_wait
        return super().new(**kw)

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if status_code in _RATE_LIMIT_STATUSES:
            return True  # `increment` decides: a plain 403 (no rate limit) raises there
        return super().is_retry(method, status_code, has_retry_after)

    def increment(  # type: ignore[override]
        self,
        method: str | None = None,
        url: str | None = None,
        response: HTTPResponse | None = None,  # type: ignore[override]
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Retry:
        status = response.status if response is not None else None
        if status in _RATE_LIMIT_STATUSES:
            assert response is not None
            wait = rate_limit_wait(response.headers)
            if wait is None and status == 429:
                wait = self.secondary_rate_wait
            if wait is None:
                # A 403 without rate-limit headers: GithubRetry reads the message (secondary limit or refusal).
                retry = super().increment(method, url, response, error, _pool, _stacktrace)
                return _waiting(retry, retry.get_backoff_time())
            if self.max_rate_limit_wait is not None and wait > self.max_rate_limit_wait:
                raise RateLimitExceededExceedsMaxWait(
                    status, {"message": f"rate limited for {wait:.0f}s"}, dict(response.headers), wait=wait
                )
            return _waiting(Retry.increment(self, method, url, response, error, _pool, _stacktrace), wait)
        if method == "POST" and url and _COMMENT_CREATE.search(url) and not self._not_sent(error):
            raise MaxRetryError(_pool, url, error or ResponseError(f"{status} on a comment creation"))  # type: ignore[arg-type]
        return super().increment(method, url, response, error, _pool, _stacktrace)

    def _not_sent(self, error: Exception | None) -> bool:
        """A connection that failed before the request went out is safe to retry, even for a POST."""
        return error is not None and self._is_connection_error(error)

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        if self.pending_wait is None:
            super().sleep(response)
            return
        if self.on_wait is not None:
            self.on_wait(self.pending_wait)
        if self.pending_wait > 0:
            time.sleep(self.pending_wait)


def _waiting(retry: Retry, wait: float) -> Retry:
    """Tell the next `sleep` that this retry waits for a rate limit (and so reports it)."""
    assert isinstance(retry, PoliteRetry)
    retry.pending_wait = wait
    return retry


def make_retry(options: ClientOptions, on_wait: RateLimitHook | None) -> PoliteRetry:
    return PoliteRetry(
        on_wait=on_wait,
        total=options.max_retries,
        backoff_factor=options.backoff_factor,
        backoff_max=options.backoff_max,
        secondary_rate_wait=options.secondary_rate_wait,
        max_rate_limit_wait=options.max_rate_limit_wait,
        # Our own `sleep` honours Retry-After for rate limits; a 503's Retry-After must not block unbounded.
        respect_retry_after_header=False,
        # After the last retry PyGithub raises GithubException with the real status, not a RetryError.
        raise_on_status=False,
    )


class GitHubClients:
    """One lazily built PyGithub client per App installation (or one for a token), shared across threads."""

    def __init__(
        self,
        auth: GitHubAuth,
        api_url: str = DEFAULT_API_URL,
        options: ClientOptions | None = None,
        on_rate_limit_wait: RateLimitHook | None = None,
    ) -> None:
        self.auth = auth
        self.api_url = api_url.rstrip("/")
        self.options = options or ClientOptions()
        self._on_wait = on_rate_limit_wait
        self._lock = threading.Lock()
        self._clients: dict[int | None, Github] = {}
        self._installation_of_repo: dict[str, int] = {}
        self._app_auth = (
            app_auth(auth.app_id, auth.private_key.get_secret_value())
            if auth.app_id is not None and auth.private_key is not None
            else None
        )

    def _kwargs(self) -> dict[str, Any]:
        return {
            "base_url": self.api_url,
            "timeout": self.options.timeout,
            "per_page": self.options.per_page,
            "user_agent": USER_AGENT,
            "retry": make_retry(self.options, self._on_wait),
            "seconds_between_requests": self.options.seconds_between_requests or None,
            "seconds_between_writes": self.options.seconds_between_writes or None,
        }

    def _integration(self) -> GithubIntegration:
        """The App itself (JWT auth): `GET /app`, repository installations."""
        if self._app_auth is None:
            raise RuntimeError("not configured as a GitHub App")
        return GithubIntegration(auth=self._app_auth, **self._kwargs())

    def for_ref(self, ref: TicketRef) -> Github:
        if self._app_auth is None:
            return self._client(None)
        installation_id = ref.installation_id or self._installation_for(ref.project)
        return self._client(installation_id)

    def _installation_for(self, project: str) -> int:
        """An event without `installation` (e.g. a CLI call) in App mode: ask GitHub which one covers it."""
        key = project.casefold()
        with self._lock:
            cached = self._installation_of_repo.get(key)
        if cached is None:
            owner, _, name = project.partition("/")
            cached = self._integration().get_repo_installation(owner, name).id
            with self._lock:
                self._installation_of_repo[key] = cached
        return cached

    def _client(self, installation_id: int | None) -> Github:
        with self._lock:
            client = self._clients.get(installation_id)
            if client is None:
                if installation_id is None:
                    assert self.auth.token is not None
                    auth: Auth.Auth = Auth.Token(self.auth.token.get_secret_value())
                else:
                    assert self._app_auth is not None
                    # PyGithub fetches the installation token on first use and refreshes it before expiry.
                    auth = self._app_auth.get_installation_auth(installation_id)
                client = Github(auth=auth, lazy=True, **self._kwargs())
                self._clients[installation_id] = client
            return client

    def resolve_identity(self) -> BotIdentity:
        """The bot's login: the token's user, or the App's `<slug>[bot]`. One request."""
        if self._app_auth is None:
            return BotIdentity(login=self._client(None).get_user().login)
        app = self._integration().get_app()
        return BotIdentity(login=f"{app.slug}[bot]", app_id=self.auth.app_id)

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()

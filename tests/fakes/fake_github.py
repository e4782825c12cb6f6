"""A fake GitHub REST API on 127.0.0.1 that the real PyGithub talks to.

State lives in memory: tests seed it (repositories, issues, comments, labels, files, permissions, tokens,
an App and its installations), drive the code under test over real HTTP, then inspect the state and the
recorded requests. Failures can be injected per request: rate limits, 5xx, and "fail after write" (the write
happens, the client sees a 500), which is what the sticky-comment upsert must survive without duplicating.

    with FakeGitHub() as fake:
        fake.add_repo("acme/widgets")
        fake.add_issue("acme/widgets", title="Export", body="As a user…", author="alice")
        tracker = GitHubTracker(GitHubAuth(token=fake.token), api_url=fake.url)
        …
        assert len(fake.comments("acme/widgets", 1)) == 1

Authentication is checked: `fake.token` (owned by `fake.bot_login`) works out of the box, `add_token` adds
users, and `add_app` + `add_installation` accept App JWTs (verified with the App's public key) and issue
installation tokens whose comments are authored by `<slug>[bot]`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote, unquote, urlencode

import jwt
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

DEFAULT_TOKEN = "ghp_fake_token_for_tests"
DEFAULT_BOT_LOGIN = "reqgate-bot"
_WRITE_ROLES = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}


def generate_app_key() -> tuple[str, str]:
    """A fresh RSA key pair for a fake GitHub App: (private PEM for the client, public PEM for the fake)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Account:
    login: str
    id: int
    type: str = "User"  # "User" or "Bot"


@dataclass
class FakeApp:
    id: int
    slug: str
    public_key: str


@dataclass
class Installation:
    id: int
    app_id: int
    account: str  # the owner whose repositories the installation's tokens may use


@dataclass
class Reaction:
    id: int
    content: str
    user: str


@dataclass
class Comment:
    id: int
    repo: str
    issue: int
    body: str
    author: str
    author_association: str = "NONE"
    app_id: int | None = None  # set when written with an installation token
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class Issue:
    number: int
    title: str
    body: str | None
    author: str
    labels: list[str] = field(default_factory=list)
    state: str = "open"
    author_association: str = "NONE"
    pull_request: bool = False
    issue_type: str | None = None
    comment_ids: list[int] = field(default_factory=list)
    created_at: str = field(default_factory=_now)


@dataclass
class LabelDef:
    id: int
    name: str
    color: str = "ededed"
    description: str | None = None


@dataclass
class Repo:
    full_name: str
    id: int
    default_branch: str = "main"
    private: bool = False
    issues: dict[int, Issue] = field(default_factory=dict)
    labels: dict[str, LabelDef] = field(default_factory=dict)  # keyed by casefolded name
    files: dict[str, dict[str, str]] = field(default_factory=dict)  # branch -> path -> text
    roles: dict[str, str] = field(
        default_factory=dict
    )  # casefolded login -> admin/maintain/write/triage/read

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]


@dataclass
class RecordedRequest:
    method: str
    path: str  # without the API prefix, unquoted, e.g. /repos/acme/widgets/issues/1/labels/reqgate:ready
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    json: Any
    actor: str | None  # login (or "app:<id>" for a JWT) the credentials belong to
    status: int = 0
    at: float = field(default_factory=time.time)  # when it arrived: the write-pacing tests read the gaps


@dataclass
class Failure:
    method: str
    path: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: dict[str, Any]
    times: int
    after_write: bool  # run the handler (state changes), then answer with this failure instead
    drop: bool = False  # hang up in the middle of the response instead of answering


class _HungUp(Exception):
    pass


class _DroppedResponse(Response):
    """Headers that announce a body which never comes: the connection closes mid-response."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"4096")]})
        raise _HungUp


class _Error(Exception):
    def __init__(self, status: int, message: str, **extra: Any):
        self.status = status
        self.body = {"message": message, "documentation_url": "https://docs.github.com/rest", **extra}


@dataclass
class _Ctx:
    request: Request
    path: str
    query: dict[str, str]
    json: Any
    actor: Account | None
    jwt_app: FakeApp | None
    installation: Installation | None


Handler = Callable[..., tuple[int, Any] | tuple[int, Any, dict[str, str]]]


class FakeGitHub:
    """A fake GitHub server: `start()`/`stop()` or a context manager; `reset()` empties it for the next test."""

    DEFAULT_TOKEN_LIFETIME = timedelta(hours=1)

    def __init__(self, prefix: str = ""):
        self.prefix = prefix.rstrip("/")  # e.g. "/api/v3" to look like GitHub Enterprise Server
        self.token = DEFAULT_TOKEN
        self.bot_login = DEFAULT_BOT_LOGIN
        self._lock = threading.RLock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self._register_routes()
        self.reset()

    def reset(self) -> None:
        """Forget every repository, account, App, token, failure and recorded request; keep the server."""
        with self._lock:
            self.token_lifetime = self.DEFAULT_TOKEN_LIFETIME
            self.requests: list[RecordedRequest] = []
            self.repos: dict[str, Repo] = {}  # keyed by casefolded full name
            self.accounts: dict[str, Account] = {}
            self.apps: dict[int, FakeApp] = {}
            self.installations: dict[int, Installation] = {}
            self.comments_by_id: dict[int, Comment] = {}
            self.issued_tokens: list[str] = []
            self._tokens: dict[str, str] = {}  # user token -> login
            self._installation_tokens: dict[str, tuple[int, float]] = {}  # token -> (installation id, expiry)
            self._failures: list[Failure] = []
            # The App's webhook delivery log (GET /app/hook/deliveries) and where a redelivery is sent.
            self.deliveries: list[dict[str, Any]] = []
            self.hook_url: str | None = None
            self.hook_secret: str | None = None
            self.org_members: dict[str, set[str]] = {}  # casefolded org -> casefolded logins
            self._next_id = 1000
            self.add_token(self.token, self.bot_login)

    # ---- lifecycle -------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The API base URL to give the client (includes the prefix)."""
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        # IPPROTO_TCP spelled out: asyncio only sets TCP_NODELAY on sockets whose proto says TCP, and without
        # it every request on a kept-alive connection stalls ~40 ms on delayed ACKs.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        app = Starlette(
            routes=[Route("/{path:path}", self._dispatch, methods=["GET", "POST", "PATCH", "PUT", "DELETE"])]
        )
        # "critical": a dropped response is an exception inside the app, which uvicorn would print each time.
        config = uvicorn.Config(app, log_level="critical", lifespan="off", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[sock])),  # type: ignore[union-attr]
            name="fake-github",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake GitHub server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # ---- seeding ---------------------------------------------------------------------------------------

    def _id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def account(self, login: str, type: str = "User") -> Account:
        with self._lock:
            key = login.casefold()
            if key not in self.accounts:
                self.accounts[key] = Account(login=login, id=self._id(), type=type)
            return self.accounts[key]

    def add_token(self, token: str, login: str) -> None:
        with self._lock:
            self.account(login)
            self._tokens[token] = login

    def add_app(self, app_id: int, slug: str, public_key: str) -> FakeApp:
        with self._lock:
            self.apps[app_id] = FakeApp(id=app_id, slug=slug, public_key=public_key)
            self.account(f"{slug}[bot]", type="Bot")
            return self.apps[app_id]

    def add_installation(self, installation_id: int, app_id: int, account: str) -> Installation:
        with self._lock:
            self.installations[installation_id] = Installation(installation_id, app_id, account)
            return self.installations[installation_id]

    def add_repo(self, full_name: str, default_branch: str = "main", private: bool = False) -> Repo:
        with self._lock:
            repo = Repo(full_name=full_name, id=self._id(), default_branch=default_branch, private=private)
            self.repos[full_name.casefold()] = repo
            self.account(repo.owner)
            return repo

    def repo(self, full_name: str) -> Repo:
        return self.repos[full_name.casefold()]

    def add_issue(
        self,
        repo: str,
        title: str = "An issue",
        body: str | None = "",
        author: str = "octocat",
        number: int | None = None,
        labels: list[str] | None = None,
        author_association: str | None = None,
        pull_request: bool = False,
        issue_type: str | None = None,
    ) -> Issue:
        with self._lock:
            target = self.repo(repo)
            self.account(author)
            number = number or max(target.issues, default=0) + 1
            for name in labels or []:
                self._ensure_repo_label(target, name)
            issue = Issue(
                number=number,
                title=title,
                body=body,
                author=author,
                labels=list(labels or []),
                author_association=author_association or self._association(target, author),
                pull_request=pull_request,
                issue_type=issue_type,
            )
            target.issues[number] = issue
            return issue

    def issue(self, repo: str, number: int) -> Issue:
        return self.repo(repo).issues[number]

    def add_comment(
        self, repo: str, number: int, body: str, author: str = "octocat", app_id: int | None = None
    ) -> Comment:
        with self._lock:
            target = self.repo(repo)
            account = self.account(author, type="Bot" if author.endswith("[bot]") else "User")
            comment = Comment(
                id=self._id(),
                repo=target.full_name,
                issue=number,
                body=body,
                author=account.login,
                author_association=self._association(target, author),
                app_id=app_id,
            )
            self.comments_by_id[comment.id] = comment
            target.issues[number].comment_ids.append(comment.id)
            return comment

    def comments(self, repo: str, number: int) -> list[Comment]:
        with self._lock:
            return [self.comments_by_id[i] for i in self.issue(repo, number).comment_ids]

    def delete_comment(self, comment_id: int) -> None:
        with self._lock:
            comment = self.comments_by_id.pop(comment_id)
            self.issue(comment.repo, comment.issue).comment_ids.remove(comment_id)

    def add_label(self, repo: str, name: str, color: str = "ededed", description: str | None = None) -> None:
        with self._lock:
            self._ensure_repo_label(self.repo(repo), name, color, description)

    def repo_labels(self, repo: str) -> dict[str, str]:
        """Label name -> colour of a repository."""
        with self._lock:
            return {label.name: label.color for label in self.repo(repo).labels.values()}

    def add_file(self, repo: str, path: str, text: str, branch: str | None = None) -> None:
        with self._lock:
            target = self.repo(repo)
            target.files.setdefault(branch or target.default_branch, {})[path.strip("/")] = text

    def add_org_member(self, org: str, login: str) -> None:
        """A member of the organisation, with no role on any repository of its own."""
        with self._lock:
            self.account(login)
            self.org_members.setdefault(org.casefold(), set()).add(login.casefold())

    def set_role(self, repo: str, login: str, role: str) -> None:
        """Collaborator role: admin, maintain, write, triage or read."""
        if role not in _WRITE_ROLES:
            raise ValueError(f"unknown role {role!r}")
        with self._lock:
            self.account(login)
            self.repo(repo).roles[login.casefold()] = role

    # ---- the App's webhook deliveries --------------------------------------------------------------------

    def set_app_hook(self, url: str, secret: str | None) -> None:
        """Where redeliveries go, signed with `secret` as GitHub signs them."""
        with self._lock:
            self.hook_url = url
            self.hook_secret = secret

    def add_delivery(self, guid: str, event: str, payload: dict[str, Any], status_code: int,
                     delivered_at: datetime | None = None, redelivery: bool = False) -> dict[str, Any]:
        """An attempt GitHub made: `status_code` is what the hook answered (0: no answer at all)."""
        with self._lock:
            record = {
                "id": self._id(), "guid": guid, "redelivery": redelivery, "duration": 0.1,
                "delivered_at": (delivered_at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "status": "OK" if 200 <= status_code < 300 else (f"Invalid HTTP Response: {status_code}"
                                                                if status_code else "timed out"),
                "status_code": status_code, "event": event, "action": payload.get("action"),
                "installation_id": (payload.get("installation") or {}).get("id"),
                "repository_id": (payload.get("repository") or {}).get("id"),
                "throttled_at": None, "payload": payload,
            }
            self.deliveries.append(record)
            return record

    def _list_deliveries(self, ctx: _Ctx) -> tuple[int, Any, dict[str, str]]:
        self._require_app(ctx)
        ordered = sorted(self.deliveries, key=lambda d: (d["delivered_at"], d["id"]), reverse=True)
        per_page = min(int(ctx.query.get("per_page", "30")), 100)
        start = int(ctx.query.get("cursor") or 0)
        page = [{k: v for k, v in d.items() if k != "payload"} for d in ordered[start:start + per_page]]
        headers: dict[str, str] = {}
        if start + per_page < len(ordered):
            query = urlencode({"per_page": per_page, "cursor": start + per_page})
            headers["link"] = f'<{self.url}/app/hook/deliveries?{query}>; rel="next"'
        return 200, page, headers

    def _redeliver(self, ctx: _Ctx, delivery_id: str) -> tuple[int, Any]:
        self._require_app(ctx)
        original = next((d for d in self.deliveries if d["id"] == int(delivery_id)), None)
        if original is None:
            raise _Error(404, "Not Found")
        if self.hook_url is None:
            raise _Error(422, "the App has no webhook URL")
        attempt = self.add_delivery(original["guid"], original["event"], original["payload"], 0, redelivery=True)
        threading.Thread(target=self._send, args=(attempt,), daemon=True).start()
        return 202, {}

    def _send(self, attempt: dict[str, Any]) -> None:
        import hmac

        import httpx

        body = json.dumps(attempt["payload"]).encode()
        headers = {"Content-Type": "application/json", "X-GitHub-Event": attempt["event"],
                   "X-GitHub-Delivery": attempt["guid"], "User-Agent": "GitHub-Hookshot/fake"}
        if self.hook_secret:
            digest = hmac.new(self.hook_secret.encode(), body, hashlib.sha256).hexdigest()
            headers["X-Hub-Signature-256"] = f"sha256={digest}"
        try:
            status = httpx.post(str(self.hook_url), content=body, headers=headers, timeout=10).status_code
        except httpx.HTTPError:
            status = 0
        with self._lock:
            attempt["status_code"] = status
            attempt["status"] = "OK" if 200 <= status < 300 else f"Invalid HTTP Response: {status}"

    # ---- failure injection -----------------------------------------------------------------------------

    def fail(
        self,
        method: str,
        path: str,
        status: int,
        *,
        headers: dict[str, str] | None = None,
        message: str = "Server Error",
        times: int = 1,
        after_write: bool = False,
        drop: bool = False,
    ) -> None:
        """Answer the next `times` requests matching `method` and the `path` regex (full match, no prefix)."""
        with self._lock:
            self._failures.append(
                Failure(
                    method=method.upper(),
                    path=re.compile(path),
                    status=status,
                    headers=headers or {},
                    body={"message": message},
                    times=times,
                    after_write=after_write,
                    drop=drop,
                )
            )

    def rate_limit(
        self,
        method: str = "GET",
        path: str = ".*",
        *,
        status: int = 429,
        retry_after: float | None = None,
        reset_in: float | None = None,
        times: int = 1,
    ) -> None:
        """A rate-limit answer: `retry_after` seconds, or `x-ratelimit-remaining: 0` with a reset `reset_in`
        seconds from now (negative: already passed)."""
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["retry-after"] = str(int(retry_after))
            message = (
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
            )
        else:
            headers["x-ratelimit-remaining"] = "0"
            headers["x-ratelimit-limit"] = "5000"
            headers["x-ratelimit-reset"] = str(int(time.time() + (reset_in or 0)))
            message = "API rate limit exceeded for installation."
        self.fail(method, path, status, headers=headers, message=message, times=times)

    def fail_after_write(
        self, method: str, path: str, status: int = 500, times: int = 1, drop: bool = False
    ) -> None:
        """The write happens, then the client gets `status` (or, with `drop`, a connection closed mid-answer)."""
        self.fail(method, path, status, message="Server Error", times=times, after_write=True, drop=drop)

    def clear_failures(self) -> None:
        """End every injected failure still pending (e.g. an outage of unbounded `times`)."""
        with self._lock:
            self._failures.clear()

    def _take_failure(self, method: str, path: str, after_write: bool) -> Failure | None:
        with self._lock:
            for failure in self._failures:
                if (
                    failure.method == method
                    and failure.after_write == after_write
                    and failure.path.fullmatch(path)
                ):
                    failure.times -= 1
                    if failure.times <= 0:
                        self._failures.remove(failure)
                    return failure
            return None

    # ---- inspection ------------------------------------------------------------------------------------

    def requests_to(self, method: str, path: str) -> list[RecordedRequest]:
        """Recorded requests with this method whose path fully matches the regex."""
        pattern = re.compile(path)
        with self._lock:
            return [r for r in self.requests if r.method == method.upper() and pattern.fullmatch(r.path)]

    # ---- HTTP ------------------------------------------------------------------------------------------

    async def _dispatch(self, request: Request) -> Response:
        raw_path = "/" + request.path_params["path"]
        path = raw_path[len(self.prefix) :] if self.prefix and raw_path.startswith(self.prefix) else raw_path
        path = unquote(path)
        raw = await request.body()
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = None
        method = request.method.upper()
        record = RecordedRequest(
            method=method,
            path=path,
            query=dict(request.query_params),
            headers={k.lower(): v for k, v in request.headers.items()},
            json=payload,
            actor=None,
        )
        with self._lock:
            self.requests.append(record)
            response = self._handle(record, request, path, payload)
            record.status = response.status_code
        return response

    def _handle(self, record: RecordedRequest, request: Request, path: str, payload: Any) -> Response:
        failure = self._take_failure(record.method, path, after_write=False)
        if failure is not None:
            return self._failure_response(failure)
        try:
            ctx = self._authenticate(request, path, record.query, payload)
            record.actor = (
                ctx.actor.login if ctx.actor else (f"app:{ctx.jwt_app.id}" if ctx.jwt_app else None)
            )
            for method, pattern, handler in self._routes:
                match = pattern.fullmatch(path)
                if match and method == record.method:
                    result = handler(ctx, *match.groups())
                    break
            else:
                raise _Error(404, "Not Found")
        except _Error as err:
            return JSONResponse(err.body, status_code=err.status, headers=self._rate_headers())
        failure = self._take_failure(record.method, path, after_write=True)
        if failure is not None:
            return self._failure_response(failure)
        status, body, *rest = result
        headers = {**self._rate_headers(), **(rest[0] if rest else {})}
        if body is None:
            return Response(status_code=status, headers=headers)
        return JSONResponse(body, status_code=status, headers=headers)

    def _failure_response(self, failure: Failure) -> Response:
        if failure.drop:
            return _DroppedResponse()
        return JSONResponse(failure.body, status_code=failure.status, headers=failure.headers)

    @staticmethod
    def _rate_headers() -> dict[str, str]:
        return {
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "4999",
            "x-ratelimit-reset": str(int(time.time()) + 3600),
        }

    def _authenticate(self, request: Request, path: str, query: dict[str, str], payload: Any) -> _Ctx:
        header = request.headers.get("authorization", "")
        scheme, _, credential = header.partition(" ")
        ctx = _Ctx(request, path, query, payload, actor=None, jwt_app=None, installation=None)
        if not credential:
            raise _Error(401, "Requires authentication")
        if scheme.lower() == "bearer" and credential.count(".") == 2:
            ctx.jwt_app = self._verify_jwt(credential)
            return ctx
        if credential in self._tokens:
            ctx.actor = self.account(self._tokens[credential])
            return ctx
        if credential in self._installation_tokens:
            installation_id, expiry = self._installation_tokens[credential]
            if time.time() > expiry:
                raise _Error(401, "Bad credentials")
            ctx.installation = self.installations[installation_id]
            ctx.actor = self.account(f"{self.apps[ctx.installation.app_id].slug}[bot]", type="Bot")
            return ctx
        raise _Error(401, "Bad credentials")

    def _verify_jwt(self, token: str) -> FakeApp:
        try:
            issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
            app = self.apps[int(str(issuer))]
            jwt.decode(token, app.public_key, algorithms=["RS256"], leeway=120)
        except (jwt.PyJWTError, KeyError, TypeError, ValueError):
            raise _Error(401, "A JSON web token could not be decoded") from None
        return app

    # ---- JSON shapes -----------------------------------------------------------------------------------

    def _user_json(self, login: str) -> dict[str, Any]:
        account = self.account(login)
        return {
            "login": account.login,
            "id": account.id,
            "node_id": f"U_{account.id}",
            "type": account.type,
            "site_admin": False,
            "url": f"{self.url}/users/{quote(account.login)}",
            "html_url": f"{self.web_url}/{quote(account.login)}",
        }

    def _app_json(self, app: FakeApp) -> dict[str, Any]:
        return {
            "id": app.id,
            "slug": app.slug,
            "node_id": f"A_{app.id}",
            "name": app.slug,
            "owner": self._user_json("app-owner"),
            "html_url": f"{self.web_url}/apps/{app.slug}",
            "created_at": _now(),
            "updated_at": _now(),
            "permissions": {"issues": "write", "contents": "read", "metadata": "read"},
            "events": ["issues", "issue_comment"],
        }

    def _repo_url(self, repo: Repo) -> str:
        return f"{self.url}/repos/{repo.full_name}"

    def _repo_json(self, repo: Repo) -> dict[str, Any]:
        url = self._repo_url(repo)
        return {
            "id": repo.id,
            "node_id": f"R_{repo.id}",
            "name": repo.full_name.split("/", 1)[1],
            "full_name": repo.full_name,
            "owner": self._user_json(repo.owner),
            "private": repo.private,
            "default_branch": repo.default_branch,
            "url": url,
            "html_url": f"{self.web_url}/{repo.full_name}",
            "issues_url": f"{url}/issues{{/number}}",
            "labels_url": f"{url}/labels{{/name}}",
            "contents_url": f"{url}/contents/{{+path}}",
            "collaborators_url": f"{url}/collaborators{{/collaborator}}",
        }

    def _label_json(self, repo: Repo, name: str) -> dict[str, Any]:
        label = repo.labels.get(name.casefold()) or LabelDef(id=0, name=name)
        return {
            "id": label.id,
            "node_id": f"L_{label.id}",
            "url": f"{self._repo_url(repo)}/labels/{quote(label.name, safe='')}",
            "name": label.name,
            "color": label.color,
            "default": False,
            "description": label.description,
        }

    def _issue_json(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        url = f"{self._repo_url(repo)}/issues/{issue.number}"
        data: dict[str, Any] = {
            "id": repo.id * 100_000 + issue.number,
            "node_id": f"I_{repo.id}_{issue.number}",
            "url": url,
            "repository_url": self._repo_url(repo),
            "labels_url": f"{url}/labels{{/name}}",
            "comments_url": f"{url}/comments",
            "events_url": f"{url}/events",
            "html_url": f"{self.web_url}/{repo.full_name}/issues/{issue.number}",
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "user": self._user_json(issue.author),
            "labels": [self._label_json(repo, name) for name in issue.labels],
            "state": issue.state,
            "locked": False,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": len(issue.comment_ids),
            "created_at": issue.created_at,
            "updated_at": issue.created_at,
            "closed_at": None,
            "author_association": issue.author_association,
            "type": {"id": 1, "name": issue.issue_type} if issue.issue_type else None,
        }
        if issue.pull_request:
            data["pull_request"] = {"url": f"{self._repo_url(repo)}/pulls/{issue.number}"}
        return data

    def _comment_json(self, comment: Comment) -> dict[str, Any]:
        repo = self.repo(comment.repo)
        counts: dict[str, int] = {}
        for reaction in comment.reactions:
            counts[reaction.content] = counts.get(reaction.content, 0) + 1
        return {
            "id": comment.id,
            "node_id": f"IC_{comment.id}",
            "url": f"{self._repo_url(repo)}/issues/comments/{comment.id}",
            "html_url": f"{self.web_url}/{repo.full_name}/issues/{comment.issue}#issuecomment-{comment.id}",
            "issue_url": f"{self._repo_url(repo)}/issues/{comment.issue}",
            "body": comment.body,
            "user": self._user_json(comment.author),
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "author_association": comment.author_association,
            "performed_via_github_app": self._app_json(self.apps[comment.app_id])
            if comment.app_id in self.apps
            else None,
            "reactions": {"total_count": len(comment.reactions), **counts},
        }

    # ---- helpers ---------------------------------------------------------------------------------------

    def _association(self, repo: Repo, login: str) -> str:
        if login.casefold() == repo.owner.casefold():
            return "OWNER"
        if repo.roles.get(login.casefold()) in ("admin", "maintain", "write"):
            return "COLLABORATOR"
        return "NONE"

    def _ensure_repo_label(
        self, repo: Repo, name: str, color: str = "ededed", description: str | None = None
    ) -> LabelDef:
        key = name.casefold()
        if key not in repo.labels:
            repo.labels[key] = LabelDef(id=self._id(), name=name, color=color, description=description)
        return repo.labels[key]

    def _visible_repo(self, ctx: _Ctx, owner: str, name: str) -> Repo:
        repo = self.repos.get(f"{owner}/{name}".casefold())
        if repo is None or (
            ctx.installation and ctx.installation.account.casefold() != repo.owner.casefold()
        ):
            raise _Error(404, "Not Found")
        if ctx.actor is None:
            raise _Error(401, "A JSON web token cannot be used for this endpoint")
        return repo

    def _visible_issue(self, ctx: _Ctx, owner: str, name: str, number: str) -> tuple[Repo, Issue]:
        repo = self._visible_repo(ctx, owner, name)
        issue = repo.issues.get(int(number))
        if issue is None:
            raise _Error(404, "Not Found")
        return repo, issue

    def _visible_comment(self, ctx: _Ctx, owner: str, name: str, comment_id: str) -> Comment:
        repo = self._visible_repo(ctx, owner, name)
        comment = self.comments_by_id.get(int(comment_id))
        if comment is None or comment.repo != repo.full_name:
            raise _Error(404, "Not Found")
        return comment

    def _page(
        self, ctx: _Ctx, items: list[Any], render: Callable[[Any], Any]
    ) -> tuple[int, Any, dict[str, str]]:
        per_page = max(1, min(int(ctx.query.get("per_page", "30")), 100))
        page = max(1, int(ctx.query.get("page", "1")))
        last = max(1, -(-len(items) // per_page))
        base = f"{self.url}{ctx.path}"

        def link(number: int, rel: str) -> str:
            params = {**ctx.query, "per_page": str(per_page), "page": str(number)}
            return f'<{base}?{urlencode(params)}>; rel="{rel}"'

        links = []
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        headers = {"link": ", ".join(links)} if links else {}
        return 200, [render(item) for item in items[(page - 1) * per_page : page * per_page]], headers

    def _require_app(self, ctx: _Ctx) -> FakeApp:
        if ctx.jwt_app is None:
            raise _Error(401, "A JSON web token could not be decoded")
        return ctx.jwt_app

    # ---- endpoints -------------------------------------------------------------------------------------

    def _register_routes(self) -> None:
        repo = r"/repos/([^/]+)/([^/]+)"
        table: list[tuple[str, str, Handler]] = [
            ("GET", "/app", self._get_app),
            ("POST", r"/app/installations/(\d+)/access_tokens", self._create_token),
            ("GET", "/app/hook/deliveries", self._list_deliveries),
            ("POST", r"/app/hook/deliveries/(\d+)/attempts", self._redeliver),
            ("GET", f"{repo}/installation", self._get_repo_installation),
            ("GET", "/user", self._get_user),
            ("GET", repo, self._get_repo),
            ("GET", rf"{repo}/issues/comments/(\d+)", self._get_comment),
            ("PATCH", rf"{repo}/issues/comments/(\d+)", self._edit_comment),
            ("DELETE", rf"{repo}/issues/comments/(\d+)", self._delete_comment),
            ("POST", rf"{repo}/issues/comments/(\d+)/reactions", self._create_reaction),
            ("GET", rf"{repo}/issues/(\d+)", self._get_issue),
            ("GET", rf"{repo}/issues/(\d+)/comments", self._list_comments),
            ("POST", rf"{repo}/issues/(\d+)/comments", self._create_comment),
            ("GET", rf"{repo}/issues/(\d+)/labels", self._list_issue_labels),
            ("POST", rf"{repo}/issues/(\d+)/labels", self._add_issue_labels),
            ("DELETE", rf"{repo}/issues/(\d+)/labels/(.+)", self._remove_issue_label),
            ("GET", f"{repo}/labels", self._list_labels),
            ("POST", f"{repo}/labels", self._create_label),
            ("GET", f"{repo}/labels/(.+)", self._get_label),
            ("GET", f"{repo}/contents/(.*)", self._get_contents),
            ("GET", f"{repo}/collaborators/([^/]+)/permission", self._get_permission),
            ("GET", f"{repo}/collaborators/([^/]+)", self._check_collaborator),
            ("GET", "/orgs/([^/]+)/members/([^/]+)", self._check_org_member),
        ]
        self._routes = [(method, re.compile(pattern), handler) for method, pattern, handler in table]

    def _get_app(self, ctx: _Ctx) -> tuple[int, Any]:
        return 200, self._app_json(self._require_app(ctx))

    def _create_token(self, ctx: _Ctx, installation_id: str) -> tuple[int, Any]:
        app = self._require_app(ctx)
        installation = self.installations.get(int(installation_id))
        if installation is None or installation.app_id != app.id:
            raise _Error(404, "Not Found")
        token = f"ghs_{hashlib.sha256(f'{installation.id}:{self._id()}'.encode()).hexdigest()[:36]}"
        expires = datetime.now(UTC) + self.token_lifetime
        self._installation_tokens[token] = (installation.id, expires.timestamp())
        self.issued_tokens.append(token)
        return 201, {
            "token": token,
            "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "permissions": {"issues": "write", "contents": "read", "metadata": "read"},
            "repository_selection": "all",
        }

    def _get_repo_installation(self, ctx: _Ctx, owner: str, name: str) -> tuple[int, Any]:
        app = self._require_app(ctx)
        for installation in self.installations.values():
            if installation.app_id == app.id and installation.account.casefold() == owner.casefold():
                return 200, {
                    "id": installation.id,
                    "app_id": app.id,
                    "account": self._user_json(installation.account),
                    "access_tokens_url": f"{self.url}/app/installations/{installation.id}/access_tokens",
                    "repositories_url": f"{self.url}/installation/repositories",
                    "html_url": f"{self.web_url}/settings/installations/{installation.id}",
                    "target_type": "Organization",
                }
        raise _Error(404, "Not Found")

    def _get_user(self, ctx: _Ctx) -> tuple[int, Any]:
        if ctx.actor is None or ctx.installation is not None:
            raise _Error(403, "Resource not accessible by integration")
        return 200, self._user_json(ctx.actor.login)

    def _get_repo(self, ctx: _Ctx, owner: str, name: str) -> tuple[int, Any]:
        return 200, self._repo_json(self._visible_repo(ctx, owner, name))

    def _get_issue(self, ctx: _Ctx, owner: str, name: str, number: str) -> tuple[int, Any]:
        repo, issue = self._visible_issue(ctx, owner, name, number)
        return 200, self._issue_json(repo, issue)

    def _list_comments(
        self, ctx: _Ctx, owner: str, name: str, number: str
    ) -> tuple[int, Any, dict[str, str]]:
        _, issue = self._visible_issue(ctx, owner, name, number)
        return self._page(ctx, issue.comment_ids, lambda i: self._comment_json(self.comments_by_id[i]))

    def _create_comment(self, ctx: _Ctx, owner: str, name: str, number: str) -> tuple[int, Any]:
        repo, issue = self._visible_issue(ctx, owner, name, number)
        body = (ctx.json or {}).get("body")
        if not isinstance(body, str) or not body:
            raise _Error(
                422, "Validation Failed", errors=[{"resource": "IssueComment", "code": "missing_field"}]
            )
        if len(body) > 65_536:
            raise _Error(422, "Validation Failed", errors=[{"field": "body", "message": "body is too long"}])
        assert ctx.actor is not None
        comment = Comment(
            id=self._id(),
            repo=repo.full_name,
            issue=issue.number,
            body=body,
            author=ctx.actor.login,
            author_association=self._association(repo, ctx.actor.login),
            app_id=ctx.installation.app_id if ctx.installation else None,
        )
        self.comments_by_id[comment.id] = comment
        issue.comment_ids.append(comment.id)
        return 201, self._comment_json(comment)

    def _get_comment(self, ctx: _Ctx, owner: str, name: str, comment_id: str) -> tuple[int, Any]:
        return 200, self._comment_json(self._visible_comment(ctx, owner, name, comment_id))

    def _edit_comment(self, ctx: _Ctx, owner: str, name: str, comment_id: str) -> tuple[int, Any]:
        comment = self._visible_comment(ctx, owner, name, comment_id)
        body = (ctx.json or {}).get("body")
        if not isinstance(body, str) or not body:
            raise _Error(422, "Validation Failed")
        comment.body = body
        comment.updated_at = _now()
        return 200, self._comment_json(comment)

    def _delete_comment(self, ctx: _Ctx, owner: str, name: str, comment_id: str) -> tuple[int, Any]:
        comment = self._visible_comment(ctx, owner, name, comment_id)
        self.delete_comment(comment.id)
        return 204, None

    def _create_reaction(self, ctx: _Ctx, owner: str, name: str, comment_id: str) -> tuple[int, Any]:
        comment = self._visible_comment(ctx, owner, name, comment_id)
        content = (ctx.json or {}).get("content")
        if content not in {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}:
            raise _Error(422, "Validation Failed")
        assert ctx.actor is not None
        status = 200
        reaction = next(
            (r for r in comment.reactions if r.content == content and r.user == ctx.actor.login), None
        )
        if reaction is None:
            reaction = Reaction(id=self._id(), content=content, user=ctx.actor.login)
            comment.reactions.append(reaction)
            status = 201
        return status, {
            "id": reaction.id,
            "node_id": f"RE_{reaction.id}",
            "user": self._user_json(reaction.user),
            "content": reaction.content,
            "created_at": _now(),
        }

    def _list_issue_labels(
        self, ctx: _Ctx, owner: str, name: str, number: str
    ) -> tuple[int, Any, dict[str, str]]:
        repo, issue = self._visible_issue(ctx, owner, name, number)
        return self._page(ctx, issue.labels, lambda label: self._label_json(repo, label))

    def _add_issue_labels(self, ctx: _Ctx, owner: str, name: str, number: str) -> tuple[int, Any]:
        repo, issue = self._visible_issue(ctx, owner, name, number)
        names = ctx.json.get("labels") if isinstance(ctx.json, dict) else ctx.json
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _Error(422, "Validation Failed")
        present = {label.casefold() for label in issue.labels}
        for label_name in names:
            label = self._ensure_repo_label(repo, label_name)  # GitHub creates unknown labels, grey
            if label.name.casefold() not in present:
                issue.labels.append(label.name)
                present.add(label.name.casefold())
        return 200, [self._label_json(repo, label) for label in issue.labels]

    def _remove_issue_label(
        self, ctx: _Ctx, owner: str, name: str, number: str, label: str
    ) -> tuple[int, Any]:
        repo, issue = self._visible_issue(ctx, owner, name, number)
        match = next((existing for existing in issue.labels if existing.casefold() == label.casefold()), None)
        if match is None:
            raise _Error(404, "Label does not exist")
        issue.labels.remove(match)
        return 200, [self._label_json(repo, existing) for existing in issue.labels]

    def _list_labels(self, ctx: _Ctx, owner: str, name: str) -> tuple[int, Any, dict[str, str]]:
        repo = self._visible_repo(ctx, owner, name)
        return self._page(ctx, list(repo.labels.values()), lambda label: self._label_json(repo, label.name))

    def _create_label(self, ctx: _Ctx, owner: str, name: str) -> tuple[int, Any]:
        repo = self._visible_repo(ctx, owner, name)
        data = ctx.json if isinstance(ctx.json, dict) else {}
        label_name, color = data.get("name"), str(data.get("color") or "ededed")
        if not isinstance(label_name, str) or not re.fullmatch(r"[0-9a-fA-F]{6}", color):
            raise _Error(422, "Validation Failed", errors=[{"resource": "Label", "code": "invalid"}])
        if label_name.casefold() in repo.labels:
            raise _Error(
                422,
                "Validation Failed",
                errors=[{"resource": "Label", "code": "already_exists", "field": "name"}],
            )
        self._ensure_repo_label(repo, label_name, color.lower(), data.get("description"))
        return 201, self._label_json(repo, label_name)

    def _get_label(self, ctx: _Ctx, owner: str, name: str, label: str) -> tuple[int, Any]:
        repo = self._visible_repo(ctx, owner, name)
        if label.casefold() not in repo.labels:
            raise _Error(404, "Not Found")
        return 200, self._label_json(repo, label)

    def _get_contents(self, ctx: _Ctx, owner: str, name: str, path: str) -> tuple[int, Any]:
        repo = self._visible_repo(ctx, owner, name)
        ref = ctx.query.get("ref") or repo.default_branch
        if ref not in repo.files and ref != repo.default_branch:
            raise _Error(404, f"No commit found for the ref {ref}")
        files = repo.files.get(ref, {})
        path = path.strip("/")
        url = f"{self._repo_url(repo)}/contents/{quote(path)}?ref={quote(ref)}"
        if path in files:
            raw = files[path].encode()
            encoded = base64.encodebytes(raw).decode()  # GitHub wraps base64 at 60-76 columns
            sha = hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()  # git's blob id
            return 200, {
                "type": "file",
                "encoding": "base64",
                "size": len(raw),
                "name": path.rsplit("/", 1)[-1],
                "path": path,
                "content": encoded,
                "sha": sha,
                "url": url,
                "git_url": f"{self._repo_url(repo)}/git/blobs/{sha}",
                "html_url": f"{self.web_url}/{repo.full_name}/blob/{ref}/{path}",
                "download_url": f"{self.web_url}/raw/{repo.full_name}/{ref}/{path}",
            }
        raise _Error(404, "Not Found")

    def _check_collaborator(self, ctx: _Ctx, owner: str, name: str, login: str) -> tuple[int, Any]:
        repo = self._visible_repo(ctx, owner, name)
        if login.casefold() == repo.owner.casefold() or login.casefold() in repo.roles:
            return 204, None
        raise _Error(404, "Not Found")

    def _check_org_member(self, ctx: _Ctx, org: str, login: str) -> tuple[int, Any]:
        if ctx.actor is None:
            raise _Error(401, "A JSON web token cannot be used for this endpoint")
        if login.casefold() in self.org_members.get(org.casefold(), set()):
            return 204, None
        raise _Error(404, "Not Found")

    def _get_permission(self, ctx: _Ctx, owner: str, name: str, login: str) -> tuple[int, Any]:
        repo = self._visible_repo(ctx, owner, name)
        if login.casefold() not in self.accounts:
            raise _Error(404, "Not Found")
        if login.casefold() == repo.owner.casefold():
            role = "admin"
        else:
            role = repo.roles.get(login.casefold(), "read")
        return 200, {"permission": _WRITE_ROLES[role], "role_name": role, "user": self._user_json(login)}

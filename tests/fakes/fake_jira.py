"""A fake Jira REST API (v2): a real HTTP server on 127.0.0.1 that the real `jira` client talks to.

    with FakeJira() as fake:                       # or the `fake_jira` fixture (tests/fakes/jira_fixture.py)
        issue = fake.add_issue("PROJ-1", summary="Export", description="h2. Goal\\n...")
        fake.add_comment("PROJ-1", "/reqgate recheck", author=fake.user("pm"))
        fake.fail_next(429, retry_after="0.2")     # the next request is rate limited
        tracker = JiraTracker(fake.url, email="bot@example.com", api_token="t")
        ... fake.requests[-1].method, fake.comments("PROJ-1")[0].body, fake.issue("PROJ-1").labels ...

Served: `serverInfo`, `myself`, `field`, issue get (with the `fields` filter) and update (`fields` and the
`update` verbs add / remove / set, labels included), comments (paginated list with startAt / maxResults /
total, add, get, update), `user/permission/search`, Jira's error body `{"errorMessages": [...], "errors": {}}`
for 400 / 403 / 404, and injected failures such as 429 with `Retry-After`. Every `self` URL points at the
fake. All writes are made as the bot user (`fake.bot`); comments by other users are seeded with
`add_comment`. `deployment="Server"` answers as Data Center does: users by name, no accountId.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Self
from urllib.parse import parse_qsl

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

COMMENT_MAX_CHARS = 32_767


@dataclass
class FakeUser:
    account_id: str | None
    name: str | None
    display_name: str

    @property
    def ident(self) -> str:
        """How the API names this user: accountId on Cloud, the user name on Data Center."""
        return self.account_id or self.name or ""


@dataclass
class FakeIssue:
    id: str
    key: str
    project: str
    summary: str
    description: str | dict[str, Any] | None
    labels: list[str]
    issuetype: str
    reporter: FakeUser | None


@dataclass
class FakeComment:
    id: str
    issue_id: str
    body: str | dict[str, Any]
    author: FakeUser
    created: str
    updated: str


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names
    body: Any
    status: int = 0  # filled in when the answer starts; recorded before, so no test can miss a request


@dataclass
class _Failure:
    status: int
    retry_after: str | None
    times: int
    method: str | None
    path_contains: str | None
    messages: list[str] = field(default_factory=list)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+0000"


def _error(status: int, *messages: str, errors: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"errorMessages": list(messages), "errors": errors or {}}, status_code=status)


class FakeJira:
    def __init__(
        self,
        *,
        deployment: Literal["Cloud", "Server"] = "Cloud",
        comment_page_size: int = 50,
        expected_authorization: str | None = None,
    ):
        self.deployment = deployment
        self.comment_page_size = comment_page_size
        # When set, requests without exactly this Authorization header get Jira's 401.
        self.expected_authorization = expected_authorization
        self._lock = threading.RLock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""
        self.reset()

    # -- lifecycle --------------------------------------------------------------------------------------

    def start(self) -> Self:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted sockets inherit it: without it every keep-alive answer waits 40 ms for a delayed ACK.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(self._app(), log_level="error", lifespan="off", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake Jira server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget issues, comments, users, failures and recorded requests; keep the server running."""
        with self._lock:
            self.requests: list[RecordedRequest] = []
            self._issues: dict[str, FakeIssue] = {}
            self._comments: list[FakeComment] = []
            self._failures: list[_Failure] = []
            self._users: dict[str, FakeUser] = {}
            self._ids = itertools.count(10000)
            self._comment_ids = itertools.count(20000)
            # Users with EDIT_ISSUES on every issue (for `user/permission/search`).
            self.editors: set[str] = set()
            # Users assignable to issues of a project (ASSIGNABLE_USER with `projectKey`): project key -> idents.
            self.assignable: dict[str, set[str]] = {}
            self.bot = self.user("reqgate-bot", display_name="ReqGate")

    # -- seeding and inspection -------------------------------------------------------------------------

    def user(self, name: str, *, display_name: str | None = None, account_id: str | None = None) -> FakeUser:
        """The user called `name` (created on first use); on Cloud its accountId is `account_id`, else
        derived from the name. Only users made here are found by `user/permission/search`."""
        with self._lock:
            if name not in self._users:
                cloud = self.deployment == "Cloud"
                self._users[name] = FakeUser(
                    account_id=(account_id or f"acc-{name}") if cloud else None,
                    name=None if cloud else name,
                    display_name=display_name or name.title(),
                )
            return self._users[name]

    def add_issue(
        self,
        key: str,
        *,
        summary: str = "",
        description: str | dict[str, Any] | None = None,
        labels: list[str] | tuple[str, ...] = (),
        issuetype: str = "Story",
        reporter: FakeUser | None = None,
        id: str | None = None,
    ) -> FakeIssue:
        with self._lock:
            issue = FakeIssue(
                id=id or str(next(self._ids)),
                key=key,
                project=key.rsplit("-", 1)[0],
                summary=summary,
                description=description,
                labels=list(labels),
                issuetype=issuetype,
                reporter=reporter or self.user("pm"),
            )
            self._issues[issue.key] = issue
            return issue

    def issue(self, id_or_key: str) -> FakeIssue:
        with self._lock:
            found = self._find_issue(id_or_key)
            if found is None:
                raise KeyError(id_or_key)
            return found

    def add_comment(
        self, id_or_key: str, body: str | dict[str, Any], *, author: FakeUser | None = None
    ) -> FakeComment:
        with self._lock:
            issue = self.issue(id_or_key)
            stamp = _now()
            comment = FakeComment(
                id=str(next(self._comment_ids)),
                issue_id=issue.id,
                body=body,
                author=author or self.bot,
                created=stamp,
                updated=stamp,
            )
            self._comments.append(comment)
            return comment

    def comments(self, id_or_key: str) -> list[FakeComment]:
        with self._lock:
            issue = self.issue(id_or_key)
            return [c for c in self._comments if c.issue_id == issue.id]

    def fail_next(
        self,
        status: int = 429,
        *,
        retry_after: str | None = None,
        times: int = 1,
        method: str | None = None,
        path_contains: str | None = None,
        message: str = "Rate limit exceeded.",
    ) -> None:
        """Answer the next `times` matching requests with `status` (and `Retry-After` when given)."""
        with self._lock:
            self._failures.append(_Failure(status, retry_after, times, method, path_contains, [message]))

    def calls(self, method: str, path_contains: str = "") -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.method == method and path_contains in r.path]

    # -- JSON shapes ------------------------------------------------------------------------------------

    def _api(self) -> str:
        return f"{self.url}/rest/api/2"

    def _user_json(self, user: FakeUser | None) -> dict[str, Any] | None:
        if user is None:
            return None
        data: dict[str, Any] = {"displayName": user.display_name, "active": True, "timeZone": "Etc/UTC"}
        if user.account_id:
            data |= {
                "self": f"{self._api()}/user?accountId={user.account_id}",
                "accountId": user.account_id,
                "accountType": "atlassian",
            }
        else:
            data |= {"self": f"{self._api()}/user?username={user.name}", "name": user.name, "key": user.name}
        return data

    def _comment_json(self, comment: FakeComment) -> dict[str, Any]:
        return {
            "self": f"{self._api()}/issue/{comment.issue_id}/comment/{comment.id}",
            "id": comment.id,
            "author": self._user_json(comment.author),
            "body": comment.body,
            "updateAuthor": self._user_json(comment.author),
            "created": comment.created,
            "updated": comment.updated,
            "jsdPublic": True,
        }

    def _issue_json(self, issue: FakeIssue, wanted: str | None) -> dict[str, Any]:
        project_id = str(10000 + sum(map(ord, issue.project)))
        comments = [self._comment_json(c) for c in self._comments if c.issue_id == issue.id]
        all_fields: dict[str, Any] = {
            "summary": issue.summary,
            "description": issue.description,
            "labels": list(issue.labels),
            "issuetype": {
                "self": f"{self._api()}/issuetype/1",
                "id": "1",
                "name": issue.issuetype,
                "subtask": False,
            },
            "reporter": self._user_json(issue.reporter),
            "project": {
                "self": f"{self._api()}/project/{project_id}",
                "id": project_id,
                "key": issue.project,
                "name": issue.project.title(),
            },
            "status": {"name": "To Do", "id": "10001"},
            "comment": {
                "comments": comments,
                "maxResults": len(comments),
                "total": len(comments),
                "startAt": 0,
            },
        }
        names = [n.strip() for n in (wanted or "*all").split(",") if n.strip()]
        if "*all" in names or "*navigable" in names:
            selected = dict(all_fields)
        else:
            selected = {n: all_fields[n] for n in names if n in all_fields}
        for name in names:
            if name.startswith("-"):
                selected.pop(name[1:], None)
        return {
            "expand": "renderedFields,names,schema,operations",
            "id": issue.id,
            "self": f"{self._api()}/issue/{issue.id}",
            "key": issue.key,
            "fields": selected,
        }

    def _find_issue(self, id_or_key: str) -> FakeIssue | None:
        if id_or_key in self._issues:
            return self._issues[id_or_key]
        return next((i for i in self._issues.values() if i.id == id_or_key), None)

    # -- HTTP -------------------------------------------------------------------------------------------

    def _app(self) -> Starlette:
        prefix = "/rest/api/{version}"
        routes = [
            Route(f"{prefix}/serverInfo", self._server_info),
            Route(f"{prefix}/myself", self._myself),
            Route(f"{prefix}/field", self._fields),
            Route(f"{prefix}/user/permission/search", self._permission_search),
            Route(f"{prefix}/issue/{{issue}}", self._issue_route, methods=["GET", "PUT"]),
            Route(f"{prefix}/issue/{{issue}}/comment", self._comments_route, methods=["GET", "POST"]),
            Route(
                f"{prefix}/issue/{{issue}}/comment/{{comment}}", self._comment_route, methods=["GET", "PUT"]
            ),
        ]
        app = Starlette(routes=routes)
        fake = self

        class _Recorder:
            """ASGI middleware: records every request, enforces auth and injected failures."""

            def __init__(self, inner: Any) -> None:
                self.inner = inner

            async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
                if scope["type"] != "http":
                    await self.inner(scope, receive, send)
                    return
                request = Request(scope, receive)
                raw = await request.body()
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                record = RecordedRequest(
                    method=request.method,
                    path=request.url.path,
                    query=dict(parse_qsl(request.url.query, keep_blank_values=True)),
                    headers={k.lower(): v for k, v in request.headers.items()},
                    body=body,
                )
                with fake._lock:
                    fake.requests.append(record)

                async def replay() -> dict[str, Any]:
                    return {"type": "http.request", "body": raw, "more_body": False}

                async def capture(message: MutableMapping[str, Any]) -> None:
                    if message["type"] == "http.response.start":
                        record.status = message["status"]
                    await send(message)

                response = fake._intercept(request)
                await (response or self.inner)(scope, replay, capture)

        return _Recorder(app)  # type: ignore[return-value]

    def _intercept(self, request: Request) -> Response | None:
        authorization = request.headers.get("authorization")
        if self.expected_authorization is not None and authorization != self.expected_authorization:
            return _error(
                401, "You are not authenticated. Authentication required to perform this operation."
            )
        with self._lock:
            for failure in self._failures:
                if failure.times <= 0:
                    continue
                if failure.method and failure.method != request.method:
                    continue
                if failure.path_contains and failure.path_contains not in request.url.path:
                    continue
                failure.times -= 1
                response = _error(failure.status, *failure.messages)
                if failure.retry_after is not None:
                    response.headers["Retry-After"] = failure.retry_after
                return response
        return None

    async def _server_info(self, request: Request) -> Response:
        cloud = self.deployment == "Cloud"
        return JSONResponse(
            {
                "baseUrl": self.url,
                "version": "1001.0.0-SNAPSHOT" if cloud else "9.12.4",
                "versionNumbers": [1001, 0, 0] if cloud else [9, 12, 4],
                "deploymentType": self.deployment,
                "buildNumber": 100242,
                "serverTitle": "Fake Jira",
            }
        )

    async def _myself(self, request: Request) -> Response:
        return JSONResponse(self._user_json(self.bot))

    async def _fields(self, request: Request) -> Response:
        names = {
            "summary": "Summary",
            "description": "Description",
            "labels": "Labels",
            "issuetype": "Issue Type",
            "reporter": "Reporter",
            "project": "Project",
        }
        return JSONResponse(
            [
                {
                    "id": key,
                    "key": key,
                    "name": name,
                    "custom": False,
                    "orderable": True,
                    "navigable": True,
                    "searchable": True,
                    "clauseNames": [key],
                }
                for key, name in names.items()
            ]
        )

    async def _permission_search(self, request: Request) -> Response:
        query = request.query_params
        if not query.get("permissions"):
            return _error(400, "The permissions parameter is required.")
        with self._lock:
            issue_ref = query.get("issueKey")
            if issue_ref and self._find_issue(issue_ref) is None:
                return _error(404, f"Issue '{issue_ref}' not found.")
            wanted = query.get("accountId") or query.get("username") or query.get("query") or ""
            holders = self.editors
            if query.get("permissions") == "ASSIGNABLE_USER":
                if not query.get("projectKey") and not issue_ref:
                    return _error(400, "A project key or an issue key is required.")
                holders = self.assignable.get(query.get("projectKey") or "", set())
            users = [
                self._user_json(user)
                for user in self._users.values()
                if user.ident in holders
                and (
                    user.account_id == wanted
                    if query.get("accountId")
                    else (user.name or "").startswith(wanted)
                )
            ]
        return JSONResponse(users)

    async def _issue_route(self, request: Request) -> Response:
        with self._lock:
            issue = self._find_issue(request.path_params["issue"])
            if issue is None:
                return _error(404, "Issue does not exist or you do not have permission to see it.")
            if request.method == "GET":
                return JSONResponse(self._issue_json(issue, request.query_params.get("fields")))
        payload = await request.json()
        with self._lock:
            return self._update_issue(issue, payload if isinstance(payload, dict) else {})

    def _update_issue(self, issue: FakeIssue, payload: dict[str, Any]) -> Response:
        settable = {"summary", "description", "labels"}
        errors: dict[str, str] = {}
        fields = payload.get("fields") or {}
        update = payload.get("update") or {}
        for name in [*fields, *update]:
            if name not in settable:
                errors[name] = (
                    f"Field '{name}' cannot be set. It is not on the appropriate screen, or unknown."
                )
        labels_after = list(fields.get("labels", issue.labels))
        for operation in update.get("labels", []):
            for verb, value in operation.items():
                if verb == "add" and value not in labels_after:
                    labels_after.append(value)
                elif verb == "remove" and value in labels_after:
                    labels_after.remove(value)
                elif verb == "set":
                    labels_after = list(value)
        bad = [label for label in labels_after if not label or any(ch.isspace() for ch in label)]
        if bad:
            errors["labels"] = f"The label '{bad[0]}' contains spaces which is invalid."
        if errors:
            return _error(400, errors=errors)
        issue.labels = labels_after
        for name in ("summary", "description"):
            if name in fields:
                setattr(issue, name, fields[name])
            for operation in update.get(name, []):
                if "set" in operation:
                    setattr(issue, name, operation["set"])
        return Response(status_code=204)

    async def _comments_route(self, request: Request) -> Response:
        with self._lock:
            issue = self._find_issue(request.path_params["issue"])
            if issue is None:
                return _error(404, "Issue does not exist or you do not have permission to see it.")
            if request.method == "GET":
                comments = [c for c in self._comments if c.issue_id == issue.id]
                if request.query_params.get("orderBy") == "-created":
                    comments.reverse()
                start = int(request.query_params.get("startAt", 0))
                size = min(
                    int(request.query_params.get("maxResults", self.comment_page_size)),
                    self.comment_page_size,
                )
                page = comments[start : start + size]
                return JSONResponse(
                    {
                        "startAt": start,
                        "maxResults": size,
                        "total": len(comments),
                        "comments": [self._comment_json(c) for c in page],
                    }
                )
        payload = await request.json()
        body = payload.get("body") if isinstance(payload, dict) else None
        if not body:
            return _error(400, errors={"comment": "Comment body can not be empty!"})
        if isinstance(body, str) and len(body) > COMMENT_MAX_CHARS:
            return _error(
                400,
                errors={
                    "comment": "The entered text is too long. It exceeds the allowed limit "
                    f"of {COMMENT_MAX_CHARS:,} characters."
                },
            )
        with self._lock:
            comment = self.add_comment(issue.key, body, author=self.bot)
            return JSONResponse(self._comment_json(comment), status_code=201)

    async def _comment_route(self, request: Request) -> Response:
        with self._lock:
            issue = self._find_issue(request.path_params["issue"])
            comment = next(
                (
                    c
                    for c in self._comments
                    if issue is not None and c.issue_id == issue.id and c.id == request.path_params["comment"]
                ),
                None,
            )
            if comment is None:
                return _error(
                    404, "Can not find a comment for the id: " + request.path_params["comment"] + "."
                )
            if request.method == "GET":
                return JSONResponse(self._comment_json(comment))
        payload = await request.json()
        body = payload.get("body") if isinstance(payload, dict) else None
        with self._lock:
            if comment.author is not self.bot:
                return _error(403, "You do not have the permission to edit this comment.")
            if isinstance(body, str) and len(body) > COMMENT_MAX_CHARS:
                return _error(400, errors={"comment": "The entered text is too long."})
            if body:
                comment.body = body
                comment.updated = _now()
            return JSONResponse(self._comment_json(comment))

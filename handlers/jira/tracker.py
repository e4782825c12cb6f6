"""The Jira side of the `Tracker` protocol, on the pycontribs `jira` client (REST API v2).

The client's own retry loop sleeps up to a minute per attempt on 429/503 and retries connection errors for
minutes; inside a durable workflow step that looks like a hang. It is switched off (`max_retries=0`) and
`_call` retries instead, briefly, honouring `Retry-After`, and gives up with `JiraAPIError` when the wait
would be too long, so that the workflow's own step retry takes over.
"""

from __future__ import annotations

import email.utils
import random
import re
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import requests
import structlog
from jira import JIRA, JIRAError

from reqgate.handlers.base import TicketRef, TrackerName, Trigger
from reqgate.handlers.jira.markup import adf_to_text, markdown_to_wiki, wiki_to_markdown
from reqgate.handlers.jira.webhook import JiraIdentity
from reqgate.handlers.publish import cap_comment, is_sticky
from reqgate.pipeline.config_loader import (
    ConfigError,
    ConfigLayer,
    ConfigProblem,
    LoadedConfig,
    load_config,
    parse_layer,
)
from reqgate.pipeline.schemas import RequirementPacket

T = TypeVar("T")
log = structlog.get_logger(__name__)

# Jira rejects comments over 32,767 characters; the margin leaves room for Cloud's storage conversion.
COMMENT_LIMIT = 32_000
ISSUE_FIELDS = "summary,description,labels,issuetype,reporter,project"
_PROJECT_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_MAX_EXTENDS_DEPTH = 5
_PAGE_SIZE = 100
# Statuses that mean "not done, try again". Only 429 and 503 are safe for a POST: Jira has not acted on it.
_RETRY_IDEMPOTENT = frozenset({429, 502, 503, 504})
_RETRY_ANY = frozenset({429, 503})
# The review's heading, for Jira sites that drop the (invisible) anchor macro on save.
_REVIEW_HEADING = re.compile(r"h3\. ReqGate: ")


class JiraAPIError(RuntimeError):
    """A Jira request failed for good. The message is Jira's error text only: no headers, no credentials."""

    def __init__(self, status: int | None, message: str):
        self.status = status
        super().__init__(f"Jira {status or 'unreachable'}: {message}")


def _retry_after(response: requests.Response | None) -> float | None:
    value = response.headers.get("Retry-After") if response is not None else None
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        when = email.utils.parsedate_to_datetime(value)
        return max(when.timestamp() - time.time(), 0.0) if when else None


def _error_text(exc: JIRAError) -> str:
    text = exc.text or ""
    return " ".join(str(text).split())[:300] or f"HTTP {exc.status_code}"


def _jira_label(name: str) -> str:
    # Jira labels cannot contain spaces; the same mapping for add and remove keeps the delta consistent.
    return re.sub(r"\s+", "_", name.strip())


def _user_id(user: Any) -> str | None:
    if not isinstance(user, dict):
        return None
    value = user.get("accountId") or user.get("name") or user.get("key")
    return str(value) if value else None


class JiraTracker:
    """`handlers.base.Tracker` for Jira Cloud (email + API token) and Data Center (personal access token).

    Commands are authorised for the issue's reporter and for users with the EDIT_ISSUES permission on the
    issue (Jira's equivalent of GitHub write access), looked up with `user/permission/search`, which needs
    the bot to have "Browse users and groups". `allow_any_commenter=True` accepts anybody who could comment
    (Jira already checked "Add comments"): commands only re-run a review, so that is a defensible choice for
    internal projects, but not for service desks whose customers comment.
    """

    name: TrackerName = "jira"
    comment_limit: int = COMMENT_LIMIT

    def __init__(
        self,
        url: str,
        *,
        email: str | None = None,
        api_token: str | None = None,
        pat: str | None = None,
        config_dir: Path | None = None,
        allow_any_commenter: bool = False,
        timeout_s: float = 30.0,
        max_attempts: int = 4,
        max_wait_s: float = 60.0,
    ):
        if pat:
            auth: dict[str, Any] = {"token_auth": pat}
        elif email and api_token:
            auth = {"basic_auth": (email, api_token)}
        else:
            raise ValueError(
                "Jira needs an email with an API token (Cloud) or a personal access token (Data Center)"
            )
        self.base_url = url.rstrip("/")
        self._config_dir = config_dir
        self._allow_any_commenter = allow_any_commenter
        self._max_attempts = max(1, max_attempts)
        self._max_wait_s = max_wait_s
        # get_server_info=False: construction makes no request, so a Jira outage cannot stop the bot starting.
        self._client = JIRA(
            server=self.base_url,
            options={"check_update": False},
            max_retries=0,
            timeout=(min(10.0, timeout_s), timeout_s),
            get_server_info=False,
            **auth,
        )
        self._identity: JiraIdentity | None = None
        self._identity_lock = threading.Lock()

    # -- plumbing -------------------------------------------------------------------------------------

    def _call(self, what: str, request: Callable[[], T], *, idempotent: bool = True) -> T:
        """`request()` with bounded retries on rate limits and transient failures."""
        retryable = _RETRY_IDEMPOTENT if idempotent else _RETRY_ANY
        deadline = time.monotonic() + self._max_wait_s
        for attempt in range(1, self._max_attempts + 1):
            backoff = min(0.5 * 2 ** (attempt - 1), 8.0) * random.uniform(0.75, 1.0)
            try:
                return request()
            except JIRAError as exc:
                status = exc.status_code
                wait = _retry_after(exc.response)
                if status not in retryable or attempt == self._max_attempts:
                    raise JiraAPIError(status, f"{what}: {_error_text(exc)}") from None
                wait = backoff if wait is None else wait
            except (requests.ConnectionError, requests.Timeout) as exc:
                # A POST that timed out may have been applied: the marker lookup decides, not a retry.
                if not idempotent or attempt == self._max_attempts:
                    raise JiraAPIError(None, f"{what}: {type(exc).__name__}") from None
                status, wait = None, backoff
            if time.monotonic() + wait > deadline:
                raise JiraAPIError(status, f"{what}: asked to wait {wait:.0f} s, longer than we block a step")
            log.warning("jira_retry", what=what, status=status, attempt=attempt, wait_s=round(wait, 2))
            time.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def identity(self) -> JiraIdentity:
        """The bot's own account (cached): how its comments and changes are recognised."""
        with self._identity_lock:
            if self._identity is None:
                me = self._call("myself", self._client.myself)
                self._identity = JiraIdentity(account_id=me.get("accountId"), name=me.get("name"))
            return self._identity

    def _issue_raw(self, key: str, fields: str) -> dict[str, Any]:
        issue = self._call(f"get issue {key}", lambda: self._client.issue(key, fields=fields))
        return dict(issue.raw)

    def resolve_ref(self, ref: TicketRef) -> TicketRef:
        """`ref` with the issue key and project key, for refs parsed from events that carried only an id."""
        if ref.project and not ref.key.isdigit():
            return ref
        raw = self._issue_raw(ref.key, "project")
        project = ((raw.get("fields") or {}).get("project") or {}).get("key") or ref.project
        return ref.model_copy(update={"project": project, "key": raw.get("key") or ref.key})

    def _wiki(self, markdown: str) -> str:
        """Markdown as wiki markup that fits in one comment; the cap is applied to the markdown, so the
        trimming note and the closing of open blocks are converted too."""
        wiki = markdown_to_wiki(markdown)
        source = markdown
        for _ in range(4):
            if len(wiki) <= self.comment_limit:
                return wiki
            budget = int(len(source) * self.comment_limit / len(wiki)) - 200
            source = cap_comment(markdown, max(budget, 1000))
            wiki = markdown_to_wiki(source)
        return wiki if len(wiki) <= self.comment_limit else cap_comment(wiki, self.comment_limit)

    # -- Tracker --------------------------------------------------------------------------------------

    def fetch_ticket(self, ref: TicketRef) -> RequirementPacket:
        raw = self._issue_raw(ref.key, ISSUE_FIELDS)
        fields = raw.get("fields") or {}
        key = str(raw.get("key") or ref.key)
        description = fields.get("description")
        if isinstance(description, dict):
            body = adf_to_text(description)
        else:
            body = wiki_to_markdown(description or "")
        issue_type = (fields.get("issuetype") or {}).get("name")
        return RequirementPacket(
            source="jira",
            project=str((fields.get("project") or {}).get("key") or ref.project),
            key=key,
            title=str(fields.get("summary") or ""),
            body=body,
            issue_type=str(issue_type) if issue_type else None,
            labels=[str(label) for label in fields.get("labels") or []],
            author=_user_id(fields.get("reporter")),
            url=f"{self.base_url}/browse/{key}",
        )

    def load_config(self, ref: TicketRef) -> LoadedConfig:
        if self._config_dir is None:
            return load_config()
        project = ref.project or self.resolve_ref(ref).project
        if not _PROJECT_KEY.match(project):
            return load_config()
        for suffix in (".yml", ".yaml"):
            relative = f"projects/{project}{suffix}"
            if (self._config_dir / relative).is_file():
                return load_config(*self._layers(relative))
        return load_config()

    def _layers(self, relative: str, chain: tuple[str, ...] = ()) -> list[ConfigLayer]:
        """The project file and the files it `_extends` (paths inside the config directory), base first."""
        assert self._config_dir is not None
        path = self._config_dir / relative
        layer = parse_layer(path.read_text(encoding="utf-8"), relative)
        if layer.extends is None:
            return [layer]
        line = layer.lines.get(("_extends",))
        root = self._config_dir.resolve()
        target = (path.parent / layer.extends).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            message = f"`{layer.extends}` is not a file in the configuration directory"
            raise ConfigError([ConfigProblem(relative, "_extends", line, message)])
        base = target.relative_to(root).as_posix()
        if base in chain or base == relative or len(chain) >= _MAX_EXTENDS_DEPTH:
            raise ConfigError(
                [ConfigProblem(relative, "_extends", line, "the `_extends` chain loops or is too deep")]
            )
        return [*self._layers(base, (*chain, relative)), layer]

    def upsert_comment(self, ref: TicketRef, body: str, known_comment_id: str | None) -> str:
        wiki = self._wiki(body)
        me = self.identity()
        comment = None
        if known_comment_id:
            try:
                found = self._call("get comment", lambda: self._client.comment(ref.key, known_comment_id))
                comment = found if me.is_me(found.raw.get("author")) else None
            except JiraAPIError as exc:
                if exc.status != 404:
                    raise
        if comment is None:
            sticky_id = self._find_sticky(ref.key, me)
            if sticky_id is not None:
                comment = self._call("get comment", lambda: self._client.comment(ref.key, sticky_id))
        if comment is None:
            created = self._call(
                "add comment", lambda: self._client.add_comment(ref.key, wiki), idempotent=False
            )
            return str(created.id)
        if comment.raw.get("body") != wiki:
            self._call("edit comment", lambda: comment.update(body=wiki))
        return str(comment.id)

    def _find_sticky(self, key: str, me: JiraIdentity) -> str | None:
        """The oldest comment by the bot that carries the marker or, failing that, starts a review heading.

        Only reached when the stored comment id is unknown or gone: the id and the author come first."""
        start = 0
        while True:
            # The client's comments() drops `total`, which paging needs when Jira caps maxResults.
            page = self._call(
                "list comments",
                partial(
                    self._client._get_json,
                    f"issue/{key}/comment",
                    params={"startAt": start, "maxResults": _PAGE_SIZE},
                ),
            )
            comments = page.get("comments") or []
            for comment in comments:
                body = comment.get("body")
                if me.is_me(comment.get("author")) and isinstance(body, str) and (
                    is_sticky(body) or _REVIEW_HEADING.match(body.lstrip())
                ):
                    return str(comment["id"])
            start += len(comments)
            if not comments or start >= int(page.get("total") or 0):
                return None

    def sync_labels(self, ref: TicketRef, add: list[str], remove: list[str], color: str) -> None:
        # Jira labels have no colour; `color` is accepted for the protocol and ignored.
        add = [_jira_label(name) for name in add if name.strip()]
        remove = [_jira_label(name) for name in remove if name.strip()]
        if not add and not remove:
            return
        issue = self._call(f"get issue {ref.key}", lambda: self._client.issue(ref.key, fields="labels"))
        current = set(issue.raw.get("fields", {}).get("labels") or [])
        operations = [{"add": name} for name in add if name not in current]
        operations += [{"remove": name} for name in remove if name in current]
        if operations:
            self._call("update labels", lambda: issue.update(update={"labels": operations}))

    def acknowledge(self, trigger: Trigger) -> None:
        """Jira has no reactions on comments; the updated review comment is the acknowledgement."""

    def reply(self, ref: TicketRef, body: str) -> None:
        wiki = self._wiki(body)
        self._call("add comment", lambda: self._client.add_comment(ref.key, wiki), idempotent=False)

    def is_member(self, trigger: Trigger) -> bool:
        """A user who may be assigned issues of the ticket's project: Jira's notion of the project's team."""
        actor = trigger.actor
        if not actor:
            return False
        return self._has_permission(actor, "ASSIGNABLE_USER", projectKey=trigger.ref.project)

    def is_authorised(self, trigger: Trigger) -> bool:
        actor = trigger.actor
        if not actor:
            return False
        if self._allow_any_commenter:
            return True
        raw = self._issue_raw(trigger.ref.key, "reporter")
        if _user_id((raw.get("fields") or {}).get("reporter")) == actor:
            return True
        return self._has_permission(actor, "EDIT_ISSUES", issueKey=raw.get("key") or trigger.ref.key)

    def _has_permission(self, actor: str, permission: str, **scope: str) -> bool:
        """Jira's permission search for one user; a search Jira refuses counts as no permission."""
        who = "accountId" if self.identity().account_id else "username"
        params = {"permissions": permission, **scope, who: actor}
        try:
            users = self._call(
                "permission search", lambda: self._client._get_json("user/permission/search", params=params)
            )
        except JiraAPIError as exc:
            if exc.status in (400, 403, 404):
                log.warning("jira_permission_search_refused", permission=permission, status=exc.status)
                return False
            raise
        return any(_user_id(user) == actor for user in users or [])

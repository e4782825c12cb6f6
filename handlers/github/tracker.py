"""`Tracker` for GitHub issues, on PyGithub: fetch, repository config, sticky comment, labels, commands."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable
from urllib.parse import quote

import requests
from github import Github, GithubException
from github.ContentFile import ContentFile
from github.Issue import Issue
from github.IssueComment import IssueComment
from github.Repository import Repository

from reqgate.handlers.base import TicketRef, TrackerName, Trigger
from reqgate.handlers.github.client import (
    DEFAULT_API_URL,
    ClientOptions,
    GitHubAuth,
    GitHubClients,
    RateLimitHook,
)
from reqgate.handlers.github.webhook import BotIdentity
from reqgate.handlers.publish import cap_comment, is_sticky
from reqgate.pipeline.config_loader import (
    EXTENDS_KEY,
    ConfigError,
    ConfigLayer,
    ConfigProblem,
    LoadedConfig,
    load_config,
    parse_layer,
)
from reqgate.pipeline.schemas import RequirementPacket

CONFIG_PATH = ".github/reqgate.yml"
ORG_CONFIG_REPO = ".github"
MAX_EXTENDS_DEPTH = 5
TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
_EXTENDS_RE = re.compile(r"^(?:(?P<owner>[\w.-]+)/)?(?P<repo>[\w.-]+)(?::(?P<path>[^:]+))?$")


def _transient(exc: Exception) -> bool:
    """A failure that a retry may cure, and after which a write may or may not have happened."""
    if isinstance(exc, GithubException):
        return exc.status >= 500
    return isinstance(
        exc, requests.ConnectionError | requests.Timeout | requests.exceptions.ChunkedEncodingError
    )


def _extends_error(layer: ConfigLayer, message: str) -> ConfigError:
    return ConfigError([ConfigProblem(layer.source, EXTENDS_KEY, layer.lines.get((EXTENDS_KEY,)), message)])


class GitHubTracker:
    """GitHub issues through PyGithub. Thread-safe: clients and the identity are built once, under a lock."""

    name: TrackerName = "github"
    comment_limit = 65_000  # GitHub refuses bodies over 65,536 characters; keep a margin

    def __init__(
        self,
        auth: GitHubAuth,
        api_url: str = DEFAULT_API_URL,
        identity: BotIdentity | None = None,
        *,
        options: ClientOptions | None = None,
        on_rate_limit_wait: RateLimitHook | None = None,
    ) -> None:
        self.clients = GitHubClients(auth, api_url, options, on_rate_limit_wait)
        self.options = self.clients.options
        self._identity = identity if identity is not None and identity.login else None
        self._identity_hint = identity
        self._identity_lock = threading.Lock()

    def close(self) -> None:
        self.clients.close()

    # ---- identity --------------------------------------------------------------------------------------

    def identity(self) -> BotIdentity:
        """Who the bot is (given, or resolved once with `GET /user` or `GET /app`)."""
        with self._identity_lock:
            if self._identity is None:
                resolved = self.clients.resolve_identity()
                hint_app = self._identity_hint.app_id if self._identity_hint else None
                self._identity = resolved.model_copy(update={"app_id": resolved.app_id or hint_app})
            return self._identity

    def _is_ours(self, comment: IssueComment) -> bool:
        me = self.identity()
        if me.login and comment.user is not None and comment.user.login.casefold() == me.login.casefold():
            return True
        app = comment.performed_via_github_app
        return me.app_id is not None and app is not None and app.id == me.app_id

    # ---- helpers ---------------------------------------------------------------------------------------

    def _gh(self, ref: TicketRef) -> Github:
        return self.clients.for_ref(ref)

    def _repo(self, ref: TicketRef) -> Repository:
        return self._gh(ref).get_repo(ref.project)

    def _issue(self, ref: TicketRef) -> Issue:
        return self._repo(ref).get_issue(int(ref.key))

    def _backoff(self, attempt: int) -> None:
        delay = min(self.options.backoff_factor * 2**attempt, self.options.backoff_max)
        if delay > 0:
            time.sleep(delay)

    def _create_comment_once(
        self, issue: Issue, body: str, find: Callable[[], IssueComment | None]
    ) -> IssueComment:
        """Create a comment; after a failure that may have hidden a success, look for it before trying again.

        The transport never retries this POST itself (see `PoliteRetry`), so this is the only retry loop.
        """
        attempt = 0
        while True:
            try:
                return issue.create_comment(body)
            except (GithubException, requests.RequestException) as exc:
                if not _transient(exc) or attempt >= self.options.max_retries:
                    raise
            self._backoff(attempt)
            attempt += 1
            found = find()
            if found is not None:
                return found

    # ---- Tracker ---------------------------------------------------------------------------------------

    def fetch_ticket(self, ref: TicketRef) -> RequirementPacket:
        issue = self._issue(ref)
        return RequirementPacket(
            source="github",
            project=ref.project,
            key=ref.key,
            title=issue.title or "",
            body=issue.body or "",
            labels=[label.name for label in issue.labels],
            author=issue.user.login if issue.user is not None else None,
            url=issue.html_url,
            issue_type=issue.type.name if issue.type is not None and issue.type.name else None,
        )

    def load_config(self, ref: TicketRef) -> LoadedConfig:
        """Defaults < `_extends` bases < `.github/reqgate.yml` of the repository (else of `<owner>/.github`)."""
        gh = self._gh(ref)
        repo = gh.get_repo(ref.project)
        branch = repo.default_branch
        text = self._read(repo, CONFIG_PATH, branch)
        location = (ref.project, CONFIG_PATH)
        source = f"{CONFIG_PATH} @ {branch}"
        if text is None:
            owner = ref.project.split("/", 1)[0]
            location = (f"{owner}/{ORG_CONFIG_REPO}", CONFIG_PATH)
            text = self._read(gh.get_repo(location[0]), CONFIG_PATH, None)
            source = f"{location[0]}:{CONFIG_PATH}"
        if text is None:
            return load_config()
        return load_config(*self._chain(gh, parse_layer(text, source), location))

    def _read(self, repo: Repository, path: str, ref: str | None) -> str | None:
        """A text file's content, or None when the repository or file is missing or unreadable to us."""
        try:
            found = repo.get_contents(path, ref=ref) if ref else repo.get_contents(path)
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise
        if not isinstance(found, ContentFile) or found.type != "file":
            return None
        try:
            return found.decoded_content.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(
                [ConfigProblem(f"{repo.full_name}:{path}", "", None, "not UTF-8 text")]
            ) from None

    def _chain(self, gh: Github, layer: ConfigLayer, location: tuple[str, str]) -> list[ConfigLayer]:
        """The layer and the files it `_extends`, lowest priority first. Cycles and deep chains are errors."""
        chain = [layer]
        seen = {(location[0].casefold(), location[1])}
        owner = location[0].split("/", 1)[0]
        while layer.extends is not None:
            match = _EXTENDS_RE.match(layer.extends.strip())
            if match is None:
                raise _extends_error(
                    layer, f"`{layer.extends}` must look like `repo`, `owner/repo` or `owner/repo:path`"
                )
            target = f"{match['owner'] or owner}/{match['repo']}"
            path = (match["path"] or CONFIG_PATH).strip("/")
            if (target.casefold(), path) in seen:
                raise _extends_error(
                    layer, f"`{layer.extends}` leads back to a file already being loaded (a cycle)"
                )
            if len(chain) > MAX_EXTENDS_DEPTH:
                raise _extends_error(layer, f"more than {MAX_EXTENDS_DEPTH} levels of `{EXTENDS_KEY}`")
            text = self._read(gh.get_repo(target), path, None)
            if text is None:
                raise _extends_error(
                    layer, f"`{layer.extends}`: {target}:{path} does not exist or the bot cannot read it"
                )
            layer = parse_layer(text, f"{target}:{path}")
            chain.insert(0, layer)
            seen.add((target.casefold(), path))
            owner = target.split("/", 1)[0]
        return chain

    def _find_sticky(self, issue: Issue) -> IssueComment | None:
        for comment in issue.get_comments():
            if is_sticky(comment.body or "") and self._is_ours(comment):
                return comment
        return None

    def _known_sticky(self, ref: TicketRef, issue: Issue, comment_id: str) -> IssueComment | None:
        """The remembered comment, if it still exists, is ours, is the sticky one and belongs to this issue."""
        if not comment_id.isdigit():
            return None
        try:
            comment = issue.get_comment(int(comment_id))
            issue_url = comment.issue_url
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise
        same_issue = (
            issue_url.rstrip("/").casefold().endswith(f"/repos/{ref.project}/issues/{ref.key}".casefold())
        )
        return comment if same_issue and is_sticky(comment.body or "") and self._is_ours(comment) else None

    def upsert_comment(self, ref: TicketRef, body: str, known_comment_id: str | None) -> str:
        body = cap_comment(body, self.comment_limit)
        issue = self._issue(ref)
        comment = self._known_sticky(ref, issue, known_comment_id) if known_comment_id else None
        comment = comment or self._find_sticky(issue)
        if comment is None:
            comment = self._create_comment_once(issue, body, lambda: self._find_sticky(issue))
        if comment.body != body:
            comment.edit(body)
        return str(comment.id)

    def sync_labels(self, ref: TicketRef, add: list[str], remove: list[str], color: str) -> None:
        repo = self._repo(ref)
        issue = repo.get_issue(int(ref.key))
        for name in add:
            self._ensure_label(repo, name, color.lstrip("#"))
        if add:
            issue.add_to_labels(*add)
        for name in remove:
            try:
                issue.remove_from_labels(name)
            except GithubException as exc:
                if exc.status != 404:  # already gone: that is what we wanted
                    raise

    def _ensure_label(self, repo: Repository, name: str, color: str) -> None:
        """Create a missing label with our colour; adding an unknown label would create it grey."""
        try:
            repo.get_label(name).color  # noqa: B018 - the attribute read performs the (lazy) GET
            return
        except GithubException as exc:
            if exc.status != 404:
                raise
        try:
            repo.create_label(name, color)
        except GithubException as exc:
            errors = exc.data.get("errors", []) if isinstance(exc.data, dict) else []
            if not (exc.status == 422 and any(e.get("code") == "already_exists" for e in errors)):
                raise

    def acknowledge(self, trigger: Trigger) -> None:
        if trigger.comment_id is None:
            return
        self._issue(trigger.ref).get_comment(int(trigger.comment_id)).create_reaction("eyes")

    def reply(self, ref: TicketRef, body: str) -> None:
        # A hidden nonce lets a retry after an ambiguous failure find the reply it may already have posted.
        nonce = f"<!-- reqgate:reply {uuid.uuid4().hex} -->"
        body = cap_comment(body, self.comment_limit - len(nonce) - 2)
        issue = self._issue(ref)

        def find() -> IssueComment | None:
            return next(
                (c for c in issue.get_comments() if nonce in (c.body or "") and self._is_ours(c)), None
            )

        self._create_comment_once(issue, f"{body}\n\n{nonce}", find)

    def is_member(self, trigger: Trigger) -> bool:
        """OWNER / MEMBER / COLLABORATOR as the webhook says, else a collaborator of the repository or a member
        of its organisation per the API (private members show up as CONTRIBUTOR or NONE in webhooks)."""
        actor = trigger.actor
        if not actor:
            return False
        if (trigger.actor_association or "").upper() in TRUSTED_ASSOCIATIONS:
            return True
        repo = self._repo(trigger.ref)
        if repo.has_in_collaborators(actor):
            return True
        owner = trigger.ref.project.split("/", 1)[0]
        url = f"/orgs/{quote(owner, safe='')}/members/{quote(actor, safe='')}"
        status, headers, _ = self._gh(trigger.ref).requester.requestJson("GET", url)
        if status == 302 and headers.get("location"):
            status, _, _ = self._gh(trigger.ref).requester.requestJson("GET", headers["location"])
        return status == 204

    def is_authorised(self, trigger: Trigger) -> bool:
        """The issue's author, OWNER / MEMBER / COLLABORATOR, or write access per the permission API.

        CONTRIBUTOR is not enough on its own, and private organisation members show up as CONTRIBUTOR,
        which is why the permission API decides every other case.
        """
        actor = trigger.actor
        if not actor:
            return False
        if (trigger.actor_association or "").upper() in TRUSTED_ASSOCIATIONS:
            return True
        repo = self._repo(trigger.ref)
        author = repo.get_issue(int(trigger.ref.key)).user
        if author is not None and author.login.casefold() == actor.casefold():
            return True
        try:
            permission = repo.get_collaborator_permission(actor)
        except GithubException as exc:
            if exc.status == 404:
                return False
            raise
        return permission in WRITE_PERMISSIONS

"""GitHubTracker with the real PyGithub over HTTP against the fake GitHub on 127.0.0.1."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from github import GithubException
from github.GithubException import RateLimitExceededExceedsMaxWait
from pydantic import SecretStr

from reqgate.handlers.base import TicketRef, Tracker, Trigger
from reqgate.handlers.github.client import ClientOptions, GitHubAuth
from reqgate.handlers.github.tracker import GitHubTracker
from reqgate.handlers.github.webhook import BotIdentity
from reqgate.handlers.publish import STICKY_MARKER
from reqgate.pipeline.config_loader import ConfigError, load_default_config
from reqgate.pipeline.rules import decide_type
from reqgate.pipeline.schemas import TicketType
from tests.fakes.fake_github import FakeGitHub, generate_app_key
from tests.fakes.github_fixture import fake_github, fake_github_server  # noqa: F401

REPO = "acme/widgets"
REF = TicketRef(source="github", project=REPO, key="1")
FAST = ClientOptions(seconds_between_writes=0, backoff_factor=0, max_retries=3)
COMMENTS = r"/repos/acme/widgets/issues/1/comments"


@pytest.fixture
def fake(fake_github: FakeGitHub) -> FakeGitHub:  # noqa: F811
    fake_github.add_repo(REPO)
    fake_github.add_issue(REPO, title="Export tasks", body="As an admin I want a CSV export.", author="alice")
    return fake_github


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
def tracker(fake: FakeGitHub, waits: list[float]) -> Iterator[GitHubTracker]:
    tracker = GitHubTracker(
        GitHubAuth(token=SecretStr(fake.token)),
        api_url=fake.url,
        options=FAST,
        on_rate_limit_wait=waits.append,
    )
    yield tracker
    tracker.close()


def sticky(text: str = "Needs info") -> str:
    return f"{STICKY_MARKER}\n### ReqGate: {text}"


def command(fake: FakeGitHub, actor: str, association: str, body: str = "/reqgate recheck") -> Trigger:
    comment = fake.add_comment(REPO, 1, body, author=actor)
    return Trigger(
        delivery_id="d1",
        source="github",
        kind="command",
        reason="comment",
        ref=REF,
        command="recheck",
        command_line=body,
        actor=actor,
        actor_association=association,
        comment_id=str(comment.id),
    )


def test_satisfies_the_tracker_protocol(tracker: GitHubTracker) -> None:
    typed: Tracker = tracker  # checked by mypy
    assert (typed.name, typed.comment_limit) == ("github", 65_000)


# ---- fetch ---------------------------------------------------------------------------------------------


def test_fetch_ticket_reads_the_issue_as_it_is_now(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_issue(REPO, number=7, title="Crash on save", body=None, author="bob", labels=["Type: Bug", "p1"])
    packet = tracker.fetch_ticket(REF.model_copy(update={"key": "7"}))
    assert packet.model_dump() == {
        "source": "github",
        "project": REPO,
        "key": "7",
        "title": "Crash on save",
        "body": "",
        "type_hint": None,
        "issue_type": None,
        "labels": ["Type: Bug", "p1"],
        "author": "bob",
        "url": f"{fake.web_url}/{REPO}/issues/7",
    }


@pytest.mark.parametrize(
    ("labels", "issue_type", "hint", "source"),
    [
        (["enhancement"], None, TicketType.story, "label"),
        (["feature"], None, TicketType.story, "label"),
        (["spike"], None, TicketType.spike, "label"),
        (["kind/task"], None, TicketType.task, "label"),
        (["type: bug"], None, TicketType.bug, "label"),
        (["help wanted"], None, None, "text"),
        ([], None, None, "text"),
        (["enhancement"], "Bug", TicketType.bug, "tracker"),  # GitHub's own issue type wins over labels
    ],
)
def test_type_from_issue_type_or_labels(
    fake: FakeGitHub,
    tracker: GitHubTracker,
    labels: list[str],
    issue_type: str | None,
    hint: TicketType | None,
    source: str,
) -> None:
    fake.add_issue(REPO, number=9, labels=labels, issue_type=issue_type)
    packet = tracker.fetch_ticket(REF.model_copy(update={"key": "9"}))
    assert packet.issue_type == issue_type and packet.type_hint is None
    decided = decide_type(packet, load_default_config())
    assert decided.source == source
    if hint is not None:
        assert decided.ticket_type is hint


# ---- config --------------------------------------------------------------------------------------------


def test_no_config_anywhere_gives_the_defaults(tracker: GitHubTracker) -> None:
    loaded = tracker.load_config(REF)
    assert len(loaded.sources) == 1 and loaded.config.threshold == 70


def test_repo_config_is_read_from_the_default_branch(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.repo(REPO).default_branch = "trunk"
    fake.add_file(REPO, ".github/reqgate.yml", "threshold: 80\n", branch="trunk")
    fake.add_file(REPO, ".github/reqgate.yml", "threshold: 10\n", branch="feature")
    loaded = tracker.load_config(REF)
    assert loaded.config.threshold == 80
    assert loaded.provenance["threshold"] == ".github/reqgate.yml @ trunk"
    assert loaded.provenance["review_on_edit"] != ".github/reqgate.yml @ trunk"


def test_org_dot_github_repository_is_the_fallback(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_repo("acme/.github")
    fake.add_file("acme/.github", ".github/reqgate.yml", "review_on_edit: true\n")
    loaded = tracker.load_config(REF)
    assert loaded.config.review_on_edit is True
    assert loaded.provenance["review_on_edit"] == "acme/.github:.github/reqgate.yml"


def test_repo_config_wins_over_the_org_fallback(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_repo("acme/.github")
    fake.add_file("acme/.github", ".github/reqgate.yml", "review_on_edit: true\n")
    fake.add_file(REPO, ".github/reqgate.yml", "threshold: 75\n")
    loaded = tracker.load_config(REF)
    assert (loaded.config.threshold, loaded.config.review_on_edit) == (75, False)


def test_extends_inherits_and_the_repo_file_overrides(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_repo("acme/policies")
    fake.add_file("acme/policies", ".github/reqgate.yml", "threshold: 60\nreview_on_edit: true\n")
    fake.add_file(REPO, ".github/reqgate.yml", "_extends: policies\nthreshold: 85\n")
    loaded = tracker.load_config(REF)
    assert (loaded.config.threshold, loaded.config.review_on_edit) == (85, True)
    assert loaded.provenance["threshold"] == ".github/reqgate.yml @ main"
    assert loaded.provenance["review_on_edit"] == "acme/policies:.github/reqgate.yml"
    assert loaded.sources[1:] == ["acme/policies:.github/reqgate.yml", ".github/reqgate.yml @ main"]


def test_extends_another_owner_and_path(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_repo("platform/config")
    fake.add_file("platform/config", "reqgate/base.yml", "labels:\n  color: 00ff00\n")
    fake.add_file(REPO, ".github/reqgate.yml", "_extends: platform/config:reqgate/base.yml\n")
    assert tracker.load_config(REF).config.labels.color == "00ff00"


def test_extends_cycle_is_a_config_error_naming_the_key(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_repo("acme/policies")
    fake.add_file("acme/policies", ".github/reqgate.yml", "threshold: 60\n_extends: acme/widgets\n")
    fake.add_file(REPO, ".github/reqgate.yml", "_extends: policies\n")
    with pytest.raises(ConfigError) as err:
        tracker.load_config(REF)
    [problem] = err.value.problems
    assert (problem.path, problem.line, problem.source) == (
        "_extends",
        2,
        "acme/policies:.github/reqgate.yml",
    )
    assert "cycle" in problem.message


def test_extends_to_a_missing_file_is_a_config_error(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_file(REPO, ".github/reqgate.yml", "threshold: 80\n_extends: nowhere\n")
    with pytest.raises(ConfigError, match="acme/nowhere:.github/reqgate.yml does not exist"):
        tracker.load_config(REF)


def test_invalid_config_names_the_key_and_line(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_file(REPO, ".github/reqgate.yml", "# ReqGate\nenabled: true\nthreshold: high\n")
    with pytest.raises(ConfigError) as err:
        tracker.load_config(REF)
    [problem] = err.value.problems
    assert (problem.source, problem.path, problem.line) == (".github/reqgate.yml @ main", "threshold", 3)


def test_yaml_syntax_error_names_the_line(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_file(REPO, ".github/reqgate.yml", "threshold: 80\nlabels: [unclosed\n")
    with pytest.raises(ConfigError, match="line"):
        tracker.load_config(REF)


# ---- sticky comment ------------------------------------------------------------------------------------


def test_upsert_creates_once_then_edits_in_place(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    first = tracker.upsert_comment(REF, sticky("Needs info"), None)
    second = tracker.upsert_comment(REF, sticky("Ready"), first)
    third = tracker.upsert_comment(REF, sticky("Ready again"), None)  # state lost: found by its marker
    [comment] = fake.comments(REPO, 1)
    assert first == second == third == str(comment.id)
    assert comment.body == sticky("Ready again") and comment.author == fake.bot_login
    assert len(fake.requests_to("POST", COMMENTS)) == 1


def test_unchanged_body_is_not_rewritten(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    comment_id = tracker.upsert_comment(REF, sticky(), None)
    tracker.upsert_comment(REF, sticky(), comment_id)
    assert fake.requests_to("PATCH", r"/repos/acme/widgets/issues/comments/\d+") == []


def test_finds_the_sticky_among_many_comments_across_pages(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    for i in range(150):
        if i == 120:
            ours = fake.add_comment(REPO, 1, sticky("old"), author=fake.bot_login)
        fake.add_comment(REPO, 1, f"comment {i}", author="carol")
    assert tracker.upsert_comment(REF, sticky("new"), None) == str(ours.id)
    assert fake.comments_by_id[ours.id].body == sticky("new")
    assert len(fake.comments(REPO, 1)) == 151
    pages = [r.query.get("page", "1") for r in fake.requests_to("GET", COMMENTS)]
    assert pages == ["1", "2"] and fake.requests_to("GET", COMMENTS)[0].query["per_page"] == "100"


def test_marker_written_by_someone_else_is_not_ours(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    foreign = fake.add_comment(REPO, 1, sticky("copied by a human"), author="mallory")
    comment_id = tracker.upsert_comment(REF, sticky("real"), str(foreign.id))
    assert comment_id != str(foreign.id)
    assert foreign.body == sticky("copied by a human")
    assert [c.author for c in fake.comments(REPO, 1)] == ["mallory", fake.bot_login]


def test_known_id_of_a_deleted_comment_falls_back_to_search_then_create(
    fake: FakeGitHub, tracker: GitHubTracker
) -> None:
    old = tracker.upsert_comment(REF, sticky("v1"), None)
    fake.delete_comment(int(old))
    new = tracker.upsert_comment(REF, sticky("v2"), old)
    assert new != old and [c.body for c in fake.comments(REPO, 1)] == [sticky("v2")]


def test_known_id_of_our_comment_on_another_issue_is_not_used(
    fake: FakeGitHub, tracker: GitHubTracker
) -> None:
    fake.add_issue(REPO, number=2)
    elsewhere = tracker.upsert_comment(REF.model_copy(update={"key": "2"}), sticky("issue 2"), None)
    here = tracker.upsert_comment(REF, sticky("issue 1"), elsewhere)
    assert here != elsewhere and fake.comments_by_id[int(elsewhere)].body == sticky("issue 2")


def test_failure_after_the_write_does_not_duplicate_the_comment(
    fake: FakeGitHub, tracker: GitHubTracker
) -> None:
    fake.fail_after_write("POST", COMMENTS, status=500)
    comment_id = tracker.upsert_comment(REF, sticky(), None)
    [comment] = fake.comments(REPO, 1)
    assert comment_id == str(comment.id)
    assert len(fake.requests_to("POST", COMMENTS)) == 1  # the transport did not blindly repeat the POST


def test_connection_dropped_after_the_write_does_not_duplicate_the_comment(
    fake: FakeGitHub, tracker: GitHubTracker
) -> None:
    fake.fail_after_write("POST", COMMENTS, drop=True)
    tracker.upsert_comment(REF, sticky(), None)
    assert len(fake.comments(REPO, 1)) == 1 and len(fake.requests_to("POST", COMMENTS)) == 1


def test_oversized_body_is_capped_rather_than_refused(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    tracker.upsert_comment(REF, sticky() + "\n" + "word " * 20_000, None)
    [comment] = fake.comments(REPO, 1)
    assert len(comment.body) <= tracker.comment_limit < 65_536 and "trimmed" in comment.body


def test_failure_before_the_write_is_retried(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.fail("POST", COMMENTS, 502, message="Bad Gateway")
    tracker.upsert_comment(REF, sticky(), None)
    assert len(fake.comments(REPO, 1)) == 1 and len(fake.requests_to("POST", COMMENTS)) == 2


def test_persistent_5xx_on_create_gives_up_with_the_status(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.fail("POST", COMMENTS, 503, times=10)
    with pytest.raises(GithubException) as err:
        tracker.upsert_comment(REF, sticky(), None)
    assert err.value.status == 503
    assert len(fake.requests_to("POST", COMMENTS)) == FAST.max_retries + 1
    assert fake.comments(REPO, 1) == []


def test_reply_survives_a_failure_after_write_without_duplicating(
    fake: FakeGitHub, tracker: GitHubTracker
) -> None:
    fake.fail_after_write("POST", COMMENTS, status=502)
    tracker.reply(REF, "Only the author or a collaborator can run `/reqgate recheck`.")
    [reply] = fake.comments(REPO, 1)
    assert reply.body.startswith("Only the author") and "<!-- reqgate:reply " in reply.body
    assert reply.author == fake.bot_login


# ---- labels and reactions ------------------------------------------------------------------------------


def test_label_delta_keeps_foreign_labels_and_creates_missing_ones(
    fake: FakeGitHub, tracker: GitHubTracker
) -> None:
    fake.add_issue(REPO, number=3, labels=["bug", "reqgate:needs-info", "team:payments"])
    ref = REF.model_copy(update={"key": "3"})
    tracker.sync_labels(ref, ["reqgate:ready"], ["reqgate:needs-info", "reqgate:error"], "#5319e7")
    assert fake.issue(REPO, 3).labels == ["bug", "team:payments", "reqgate:ready"]
    assert fake.repo_labels(REPO)["reqgate:ready"] == "5319e7"
    assert fake.requests_to("PUT", r".*") == []  # the label set is never replaced


def test_existing_repo_label_is_not_recreated(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_label(REPO, "reqgate:ready", color="00aa00")
    tracker.sync_labels(REF, ["reqgate:ready"], [], "5319e7")
    assert fake.repo_labels(REPO)["reqgate:ready"] == "00aa00"
    assert fake.requests_to("POST", r"/repos/acme/widgets/labels") == []
    assert fake.issue(REPO, 1).labels == ["reqgate:ready"]


def test_label_created_concurrently_is_fine(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.add_label(REPO, "reqgate:ready")
    fake.fail("GET", r"/repos/acme/widgets/labels/reqgate:ready", 404, message="Not Found")
    tracker.sync_labels(REF, ["reqgate:ready"], [], "5319e7")
    [create] = fake.requests_to("POST", r"/repos/acme/widgets/labels")
    assert create.status == 422 and fake.issue(REPO, 1).labels == ["reqgate:ready"]


def test_acknowledge_reacts_with_eyes_on_the_command(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    trigger = command(fake, "alice", "NONE")
    tracker.acknowledge(trigger)
    tracker.acknowledge(trigger)  # a replayed step: GitHub keeps one reaction per user and content
    [reaction] = fake.comments_by_id[int(trigger.comment_id or 0)].reactions
    assert (reaction.content, reaction.user) == ("eyes", fake.bot_login)


# ---- authorisation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("association", ["OWNER", "MEMBER", "COLLABORATOR"])
def test_trusted_associations_need_no_lookup(
    fake: FakeGitHub, tracker: GitHubTracker, association: str
) -> None:
    trigger = command(fake, "dave", association)
    before = len(fake.requests)
    assert tracker.is_authorised(trigger)
    assert len(fake.requests) == before


def test_issue_author_may_run_commands(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    assert tracker.is_authorised(command(fake, "alice", "NONE"))


@pytest.mark.parametrize(
    ("role", "allowed"),
    [("write", True), ("maintain", True), ("admin", True), ("triage", False), ("read", False)],
)
def test_contributor_is_decided_by_the_permission_api(
    fake: FakeGitHub, tracker: GitHubTracker, role: str, allowed: bool
) -> None:
    fake.set_role(REPO, "erin", role)
    assert tracker.is_authorised(command(fake, "erin", "CONTRIBUTOR")) is allowed
    assert fake.requests_to("GET", r"/repos/acme/widgets/collaborators/erin/permission")


def test_stranger_and_missing_actor_are_refused(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    assert not tracker.is_authorised(command(fake, "frank", "NONE"))
    assert not tracker.is_authorised(command(fake, "frank", "NONE").model_copy(update={"actor": None}))


# ---- identity, rate limits, retries, politeness --------------------------------------------------------


def test_identity_is_resolved_once(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    assert tracker.identity() == BotIdentity(login=fake.bot_login)
    tracker.upsert_comment(REF, sticky(), None)
    tracker.upsert_comment(REF, sticky("again"), None)
    assert len(fake.requests_to("GET", "/user")) == 1


def test_given_identity_is_trusted_without_a_request(fake: FakeGitHub) -> None:
    tracker = GitHubTracker(
        GitHubAuth(token=SecretStr(fake.token)), fake.url, BotIdentity(login="reqgate-bot"), options=FAST
    )
    tracker.upsert_comment(REF, sticky(), None)
    assert fake.requests_to("GET", "/user") == []


@pytest.mark.parametrize("status", [429, 403])
def test_retry_after_is_honoured_and_reported(
    fake: FakeGitHub, tracker: GitHubTracker, waits: list[float], status: int
) -> None:
    fake.rate_limit("GET", r"/repos/acme/widgets/issues/1", status=status, retry_after=0)
    assert tracker.fetch_ticket(REF).title == "Export tasks"
    assert waits == [0.0]
    assert [r.status for r in fake.requests_to("GET", r"/repos/acme/widgets/issues/1")] == [status, 200]


def test_exhausted_quota_waits_until_the_reset(
    fake: FakeGitHub, tracker: GitHubTracker, waits: list[float]
) -> None:
    fake.rate_limit("POST", COMMENTS, status=403, reset_in=-5)  # the reset has just passed
    tracker.upsert_comment(REF, sticky(), None)
    assert waits == [0.0] and len(fake.comments(REPO, 1)) == 1  # a rate-limited POST was not processed


def test_rate_limit_wait_is_bounded(fake: FakeGitHub, waits: list[float]) -> None:
    options = FAST.model_copy(update={"max_rate_limit_wait": 5})
    tracker = GitHubTracker(
        GitHubAuth(token=SecretStr(fake.token)), fake.url, options=options, on_rate_limit_wait=waits.append
    )
    fake.rate_limit("GET", r"/repos/acme/widgets/issues/1", retry_after=3600)
    started = time.monotonic()
    with pytest.raises(RateLimitExceededExceedsMaxWait) as err:
        tracker.fetch_ticket(REF)
    assert time.monotonic() - started < 2 and err.value.wait == 3600 and waits == []


def test_server_errors_on_reads_are_retried(fake: FakeGitHub, tracker: GitHubTracker) -> None:
    fake.fail("GET", r"/repos/acme/widgets/issues/1", 502, times=2)
    assert tracker.fetch_ticket(REF).title == "Export tasks"
    assert [r.status for r in fake.requests_to("GET", r"/repos/acme/widgets/issues/1")] == [502, 502, 200]


def test_writes_are_spaced(fake: FakeGitHub) -> None:
    options = FAST.model_copy(update={"seconds_between_writes": 0.3})
    tracker = GitHubTracker(
        GitHubAuth(token=SecretStr(fake.token)), fake.url, BotIdentity(login="reqgate-bot"), options=options
    )
    started = time.monotonic()
    tracker.sync_labels(REF, [], ["a", "b"], "ededed")
    assert time.monotonic() - started >= 0.3


def test_enterprise_base_url_with_a_path_prefix() -> None:
    with FakeGitHub(prefix="/api/v3") as ghe:
        ghe.add_repo(REPO)
        ghe.add_issue(REPO, title="On GHE")
        tracker = GitHubTracker(GitHubAuth(token=SecretStr(ghe.token)), api_url=ghe.url, options=FAST)
        assert tracker.fetch_ticket(REF).title == "On GHE"
        tracker.upsert_comment(REF, sticky(), None)
        assert len(ghe.comments(REPO, 1)) == 1


# ---- GitHub App ----------------------------------------------------------------------------------------


@pytest.fixture
def app_key(fake: FakeGitHub) -> str:
    private, public = generate_app_key()
    fake.add_app(4242, "reqgate", public)
    fake.add_installation(777, 4242, "acme")
    return private


def test_app_exchanges_a_jwt_for_an_installation_token_and_posts_as_the_bot(
    fake: FakeGitHub, app_key: str
) -> None:
    tracker = GitHubTracker(
        GitHubAuth(app_id=4242, private_key=SecretStr(app_key)), api_url=fake.url, options=FAST
    )
    ref = REF.model_copy(update={"installation_id": 777})
    assert tracker.identity() == BotIdentity(login="reqgate[bot]", app_id=4242)
    comment_id = tracker.upsert_comment(ref, sticky(), None)
    tracker.upsert_comment(ref, sticky("edited"), None)
    [comment] = fake.comments(REPO, 1)
    assert str(comment.id) == comment_id and comment.author == "reqgate[bot]" and comment.app_id == 4242
    [exchange] = fake.requests_to("POST", "/app/installations/777/access_tokens")
    assert exchange.headers["authorization"].startswith("Bearer ") and exchange.actor == "app:4242"
    assert {r.actor for r in fake.requests_to("GET", COMMENTS)} == {"reqgate[bot]"}


def test_app_without_installation_id_looks_it_up_once(fake: FakeGitHub, app_key: str) -> None:
    tracker = GitHubTracker(
        GitHubAuth(app_id=4242, private_key=SecretStr(app_key)), api_url=fake.url, options=FAST
    )
    tracker.fetch_ticket(REF)
    tracker.fetch_ticket(REF)
    assert len(fake.requests_to("GET", "/repos/acme/widgets/installation")) == 1


def test_app_installation_token_is_refreshed_before_it_expires(fake: FakeGitHub, app_key: str) -> None:
    fake.token_lifetime = timedelta(seconds=10)  # inside PyGithub's 20 s refresh margin
    tracker = GitHubTracker(
        GitHubAuth(app_id=4242, private_key=SecretStr(app_key)), api_url=fake.url, options=FAST
    )
    ref = REF.model_copy(update={"installation_id": 777})
    tracker.fetch_ticket(ref)
    tracker.fetch_ticket(ref)
    assert len(fake.issued_tokens) == 2


def test_auth_needs_exactly_one_mode() -> None:
    with pytest.raises(ValueError):
        GitHubAuth()
    with pytest.raises(ValueError):
        GitHubAuth(token=SecretStr("t"), app_id=1, private_key=SecretStr("k"))
    with pytest.raises(ValueError):
        GitHubAuth(app_id=1)


# ---- the fake itself -----------------------------------------------------------------------------------


def test_fake_paginates_with_link_headers(fake: FakeGitHub) -> None:
    for i in range(45):
        fake.add_comment(REPO, 1, f"c{i}")
    headers = {"authorization": f"token {fake.token}"}
    first = httpx.get(f"{fake.url}{COMMENTS}?per_page=20", headers=headers)
    assert len(first.json()) == 20
    assert 'page=2>; rel="next"' in first.headers["link"] and 'page=3>; rel="last"' in first.headers["link"]
    last = httpx.get(f"{fake.url}{COMMENTS}?per_page=20&page=3", headers=headers)
    assert [c["body"] for c in last.json()] == ["c40", "c41", "c42", "c43", "c44"]
    assert 'rel="next"' not in last.headers["link"]
    assert httpx.get(f"{fake.url}{COMMENTS}", headers={"authorization": "token nope"}).status_code == 401

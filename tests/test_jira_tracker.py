"""`JiraTracker` with the real `jira` client against the fake Jira REST API on 127.0.0.1."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest

from reqgate.handlers.base import TicketRef, Trigger
from reqgate.handlers.jira.tracker import COMMENT_LIMIT, JiraAPIError, JiraTracker
from reqgate.handlers.publish import STICKY_MARKER, is_sticky
from reqgate.pipeline.config_loader import ConfigError
from tests.fakes.fake_jira import FakeJira

pytest_plugins = ["tests.fakes.jira_fixture"]

REF = TicketRef(source="jira", project="PROJ", key="PROJ-7")
REVIEW = f"{STICKY_MARKER}\n### ReqGate: ✅ Ready — score 90\n\n**Questions for you**\n- [ ] Which formats?\n"


def command(actor: str | None, key: str = "PROJ-7") -> Trigger:
    return Trigger(
        delivery_id="d",
        source="jira",
        kind="command",
        reason="comment",
        ref=TicketRef(source="jira", project="PROJ", key=key),
        command="recheck",
        actor=actor,
    )


# -- fetch ---------------------------------------------------------------------------------------------


def test_fetch_ticket_with_a_wiki_description(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue(
        "PROJ-7",
        summary="Export tasks",
        description="h2. Goal\n\nAs a *PM* I want CSV.\n\n* one",
        labels=["team-a"],
        issuetype="Bug",
        reporter=fake_jira.user("dana"),
    )
    packet = jira_tracker.fetch_ticket(REF)
    assert (packet.source, packet.project, packet.key, packet.title) == (
        "jira",
        "PROJ",
        "PROJ-7",
        "Export tasks",
    )
    assert packet.body == "## Goal\n\nAs a **PM** I want CSV.\n\n- one"
    assert packet.issue_type == "Bug" and packet.type_hint is None  # mapped by `types.issue_types`
    assert packet.labels == ["team-a"]
    assert packet.author == "acc-dana"
    assert packet.url == f"{fake_jira.url}/browse/PROJ-7"
    fetches = fake_jira.calls("GET", "/issue/")
    assert len(fetches) == 1
    assert fetches[0].query["fields"] == "summary,description,labels,issuetype,reporter,project"


def test_fetch_ticket_with_an_adf_description(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    adf = {
        "type": "doc",
        "version": 1,
        "content": [
            {"type": "heading", "attrs": {"level": 3}, "content": [{"type": "text", "text": "Goal"}]},
            {
                "type": "taskList",
                "content": [
                    {
                        "type": "taskItem",
                        "attrs": {"state": "TODO"},
                        "content": [{"type": "text", "text": "CSV export"}],
                    }
                ],
            },
        ],
    }
    fake_jira.add_issue("PROJ-7", summary="S", description=adf, issuetype="Widget")
    packet = jira_tracker.fetch_ticket(REF)
    assert packet.body == "### Goal\n\n- [ ] CSV export"
    assert packet.issue_type == "Widget"  # a type the map does not know: the text decides


def test_fetch_ticket_by_issue_id_resolves_key_and_project(
    fake_jira: FakeJira, jira_tracker: JiraTracker
) -> None:
    fake_jira.add_issue("PROJ-7", summary="S", description=None, id="10013")
    by_id = TicketRef(source="jira", project="", key="10013")
    packet = jira_tracker.fetch_ticket(by_id)
    assert (packet.project, packet.key, packet.body) == ("PROJ", "PROJ-7", "")
    assert jira_tracker.resolve_ref(by_id) == REF
    before = len(fake_jira.requests)
    assert jira_tracker.resolve_ref(REF) == REF  # already resolved: no request
    assert len(fake_jira.requests) == before


def test_missing_issue_is_a_404(jira_tracker: JiraTracker) -> None:
    with pytest.raises(JiraAPIError) as raised:
        jira_tracker.fetch_ticket(REF)
    assert raised.value.status == 404
    assert "Issue does not exist" in str(raised.value)


# -- config --------------------------------------------------------------------------------------------


def tracker_with(fake: FakeJira, config_dir: Path | None) -> JiraTracker:
    return JiraTracker(fake.url, email="bot@example.com", api_token="t", config_dir=config_dir)


def test_config_defaults_without_a_directory_or_file(fake_jira: FakeJira, tmp_path: Path) -> None:
    assert len(tracker_with(fake_jira, None).load_config(REF).sources) == 1
    loaded = tracker_with(fake_jira, tmp_path).load_config(REF)
    assert len(loaded.sources) == 1 and loaded.config.threshold == 70
    assert fake_jira.requests == []


def test_project_file_is_merged_over_the_defaults(fake_jira: FakeJira, tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()
    (tmp_path / "projects" / "PROJ.yml").write_text("threshold: 80\nlabels:\n  ready: ok-to-build\n")
    loaded = tracker_with(fake_jira, tmp_path).load_config(REF)
    assert loaded.config.threshold == 80
    assert loaded.config.labels.ready == "ok-to-build"
    assert loaded.config.labels.needs_info == "reqgate:needs-info"
    assert loaded.provenance["threshold"] == "projects/PROJ.yml"
    assert loaded.provenance["labels.needs_info"] == loaded.sources[0]
    assert loaded.sources[1:] == ["projects/PROJ.yml"]


def test_project_file_can_extend_a_shared_file(fake_jira: FakeJira, tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()
    (tmp_path / "shared.yml").write_text("threshold: 60\nreview_on_edit: true\n")
    (tmp_path / "projects" / "PROJ.yml").write_text("_extends: ../shared.yml\nthreshold: 75\n")
    loaded = tracker_with(fake_jira, tmp_path).load_config(REF)
    assert (loaded.config.threshold, loaded.config.review_on_edit) == (75, True)
    assert loaded.sources[1:] == ["shared.yml", "projects/PROJ.yml"]


@pytest.mark.parametrize(
    ("text", "path", "line"),
    [
        ("threshold: 80\nlabels:\n  redy: x\n", "labels.redy", 3),
        ("threshold: 80\nchecks:\n  wording.vague: {default: loud}\n", "checks.wording.vague.default", 3),
        ("threshold: [1\n", "", 2),
        ("_extends: ../../etc/passwd\n", "_extends", 1),
    ],
)
def test_invalid_project_file_names_key_and_line(
    fake_jira: FakeJira, tmp_path: Path, text: str, path: str, line: int
) -> None:
    (tmp_path / "projects").mkdir()
    (tmp_path / "projects" / "PROJ.yml").write_text(text)
    with pytest.raises(ConfigError) as raised:
        tracker_with(fake_jira, tmp_path).load_config(REF)
    problem = raised.value.problems[0]
    assert (problem.source, problem.path, problem.line) == ("projects/PROJ.yml", path, line)


def test_config_for_an_unresolved_ref_looks_the_project_up(fake_jira: FakeJira, tmp_path: Path) -> None:
    fake_jira.add_issue("PROJ-7", id="10013")
    (tmp_path / "projects").mkdir()
    (tmp_path / "projects" / "PROJ.yml").write_text("threshold: 81\n")
    loaded = tracker_with(fake_jira, tmp_path).load_config(TicketRef(source="jira", project="", key="10013"))
    assert loaded.config.threshold == 81


# -- comments ------------------------------------------------------------------------------------------


def test_upsert_creates_then_edits_the_same_comment(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7")
    fake_jira.add_comment("PROJ-7", "Looks good to me", author=fake_jira.user("dana"))
    first = jira_tracker.upsert_comment(REF, REVIEW, None)
    second = jira_tracker.upsert_comment(REF, REVIEW.replace("Which formats?", "Which sizes?"), None)
    third = jira_tracker.upsert_comment(REF, REVIEW.replace("Which formats?", "Who exports?"), first)
    assert first == second == third
    ours = [c for c in fake_jira.comments("PROJ-7") if c.author is fake_jira.bot]
    assert len(ours) == 1
    body = ours[0].body
    assert isinstance(body, str) and is_sticky(body)
    assert body.startswith("h3. ReqGate: ✅ Ready") and "* ☐ Who exports?" in body
    assert fake_jira.comments("PROJ-7")[0].body == "Looks good to me"
    assert len(fake_jira.calls("POST", "/comment")) == 1


def test_upsert_with_unchanged_body_makes_no_write(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7")
    comment_id = jira_tracker.upsert_comment(REF, REVIEW, None)
    assert jira_tracker.upsert_comment(REF, REVIEW, comment_id) == comment_id
    assert fake_jira.calls("PUT", "/comment") == []


def test_upsert_finds_the_sticky_on_a_later_page_and_ignores_foreign_markers(
    fake_jira: FakeJira, jira_tracker: JiraTracker
) -> None:
    fake_jira.comment_page_size = 2
    fake_jira.add_issue("PROJ-7")
    dana = fake_jira.user("dana")
    fake_jira.add_comment("PROJ-7", "quoting the bot: \\<\\!\\-\\- reqgate:review v1 \\-\\->", author=dana)
    for n in range(4):
        fake_jira.add_comment("PROJ-7", f"chatter {n}", author=dana)
    fake_jira.add_comment("PROJ-7", "a reply of the bot without marker", author=fake_jira.bot)
    sticky = fake_jira.add_comment(
        "PROJ-7", "h3. old review\n\\<\\!\\-\\- reqgate:review v1 \\-\\->", author=fake_jira.bot
    )
    assert jira_tracker.upsert_comment(REF, REVIEW, None) == sticky.id
    assert "ReqGate: ✅ Ready" in str(fake_jira.comments("PROJ-7")[-1].body)
    assert len(fake_jira.comments("PROJ-7")) == 7
    starts = [r.query["startAt"] for r in fake_jira.calls("GET", "/PROJ-7/comment") if "startAt" in r.query]
    assert starts == ["0", "2", "4", "6"]


def test_upsert_with_a_stale_or_foreign_known_id(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7")
    foreign = fake_jira.add_comment("PROJ-7", "mine, not the bot's", author=fake_jira.user("dana"))
    created = jira_tracker.upsert_comment(REF, REVIEW, "99999")
    assert jira_tracker.upsert_comment(REF, REVIEW + "\nmore", foreign.id) == created
    assert fake_jira.comments("PROJ-7")[0].body == "mine, not the bot's"
    assert len(fake_jira.comments("PROJ-7")) == 2


def test_oversized_comment_is_capped_for_jira(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7")
    rows = "\n".join(f'| check.{n} | warn | finding-{n} with some words | "quote-{n}" |' for n in range(900))
    body = f"{REVIEW}\n| check | mode | finding | quote |\n|---|---|---|---|\n{rows}\n"
    jira_tracker.upsert_comment(REF, body, None)
    stored = str(fake_jira.comments("PROJ-7")[0].body)
    assert COMMENT_LIMIT - 2000 < len(stored) <= COMMENT_LIMIT
    assert is_sticky(stored) and "trimmed" in stored


def test_reply_adds_a_separate_wiki_comment(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7")
    jira_tracker.upsert_comment(REF, REVIEW, None)
    jira_tracker.reply(REF, "**ReqGate commands**\n\n- `/reqgate recheck` review again")
    bodies = [c.body for c in fake_jira.comments("PROJ-7")]
    assert len(bodies) == 2
    assert bodies[1] == "*ReqGate commands*\n\n* {{/reqgate recheck}} review again\n"


def test_acknowledge_makes_no_request(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    jira_tracker.acknowledge(command("acc-dana"))
    assert fake_jira.requests == []


# -- labels --------------------------------------------------------------------------------------------


def test_labels_are_changed_by_delta_keeping_foreign_labels(
    fake_jira: FakeJira, jira_tracker: JiraTracker
) -> None:
    fake_jira.add_issue("PROJ-7", labels=["team-a", "reqgate:needs-info", "backend"])
    jira_tracker.sync_labels(REF, ["reqgate:ready"], ["reqgate:needs-info"], "5319e7")
    assert fake_jira.issue("PROJ-7").labels == ["team-a", "backend", "reqgate:ready"]
    put = fake_jira.calls("PUT", "/issue/")[-1]
    assert put.body["update"] == {"labels": [{"add": "reqgate:ready"}, {"remove": "reqgate:needs-info"}]}
    assert "labels" not in put.body["fields"]


def test_labels_without_change_make_no_write(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7", labels=["reqgate:ready"])
    jira_tracker.sync_labels(REF, ["reqgate:ready"], ["reqgate:error"], "5319e7")
    jira_tracker.sync_labels(REF, [], [], "5319e7")
    assert fake_jira.calls("PUT") == []


def test_label_names_with_spaces_are_made_valid(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7")
    jira_tracker.sync_labels(REF, ["needs more info"], [], "5319e7")
    assert fake_jira.issue("PROJ-7").labels == ["needs_more_info"]


# -- retries -------------------------------------------------------------------------------------------


def test_429_retry_after_is_honoured_quickly(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7", summary="S")
    fake_jira.fail_next(429, retry_after="0.3", times=2)
    started = time.monotonic()
    assert jira_tracker.fetch_ticket(REF).title == "S"
    elapsed = time.monotonic() - started
    assert 0.6 <= elapsed < 2.0
    assert [r.status for r in fake_jira.calls("GET", "/issue/PROJ-7")] == [429, 429, 200]


def test_a_wait_longer_than_the_budget_fails_fast(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7")
    fake_jira.fail_next(429, retry_after="3600")
    started = time.monotonic()
    with pytest.raises(JiraAPIError) as raised:
        jira_tracker.fetch_ticket(REF)
    assert raised.value.status == 429 and time.monotonic() - started < 1.0
    assert len(fake_jira.requests) == 1


def test_post_is_retried_only_when_jira_did_not_act(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7")
    fake_jira.fail_next(503, retry_after="0", method="POST")
    jira_tracker.reply(REF, "hello")
    assert len(fake_jira.comments("PROJ-7")) == 1
    fake_jira.fail_next(502, method="POST")
    with pytest.raises(JiraAPIError) as raised:
        jira_tracker.reply(REF, "hello again")
    assert raised.value.status == 502
    assert len(fake_jira.calls("POST")) == 3


def test_errors_carry_no_credentials(fake_jira: FakeJira) -> None:
    tracker = JiraTracker(
        fake_jira.url, email="bot@example.com", api_token="very-secret-token", max_attempts=1
    )
    fake_jira.fail_next(500, message="boom")
    with pytest.raises(JiraAPIError) as raised:
        tracker.fetch_ticket(REF)
    assert "very-secret-token" not in str(raised.value) and "boom" in str(raised.value)
    assert raised.value.__cause__ is None


def test_unreachable_jira_gives_up(fake_jira: FakeJira) -> None:
    tracker = JiraTracker("http://127.0.0.1:9", email="e", api_token="t", max_attempts=2, timeout_s=1)
    with pytest.raises(JiraAPIError) as raised:
        tracker.fetch_ticket(REF)
    assert raised.value.status is None


# -- auth and identity ---------------------------------------------------------------------------------


def test_cloud_uses_basic_auth_with_email_and_api_token(
    fake_jira: FakeJira, jira_tracker: JiraTracker
) -> None:
    identity = jira_tracker.identity()
    assert (identity.account_id, identity.name) == ("acc-reqgate-bot", None)
    jira_tracker.identity()
    assert len(fake_jira.calls("GET", "/myself")) == 1
    expected = "Basic " + base64.b64encode(b"bot@example.com:api-token").decode()
    assert fake_jira.requests[0].headers["authorization"] == expected


def test_data_center_uses_a_bearer_personal_access_token() -> None:
    with FakeJira(deployment="Server", expected_authorization="Bearer pat-123") as fake:
        fake.add_issue("PROJ-7", summary="On prem", reporter=fake.user("lev"))
        tracker = JiraTracker(fake.url, pat="pat-123")
        assert tracker.identity().name == "reqgate-bot" and tracker.identity().account_id is None
        assert tracker.fetch_ticket(REF).author == "lev"
        comment_id = tracker.upsert_comment(REF, REVIEW, None)
        assert tracker.upsert_comment(REF, REVIEW + "\nedited", None) == comment_id
        assert all(r.headers["authorization"] == "Bearer pat-123" and r.status < 400 for r in fake.requests)
        bad = JiraTracker(fake.url, pat="wrong")
        with pytest.raises(JiraAPIError) as raised:
            bad.identity()
        assert raised.value.status == 401


def test_constructor_needs_credentials() -> None:
    with pytest.raises(ValueError, match="API token"):
        JiraTracker("https://example.atlassian.net", email="e")


# -- command authorisation ---------------------------------------------------------------------------


def test_reporter_and_editors_may_run_commands(fake_jira: FakeJira, jira_tracker: JiraTracker) -> None:
    fake_jira.add_issue("PROJ-7", reporter=fake_jira.user("dana"))
    fake_jira.user("lead")
    fake_jira.user("stranger")
    fake_jira.editors.add("acc-lead")
    assert jira_tracker.is_authorised(command("acc-dana"))
    assert jira_tracker.is_authorised(command("acc-lead"))
    assert not jira_tracker.is_authorised(command("acc-stranger"))
    assert not jira_tracker.is_authorised(command(None))
    search = fake_jira.calls("GET", "/user/permission/search")[-1]
    assert search.query == {"permissions": "EDIT_ISSUES", "issueKey": "PROJ-7", "accountId": "acc-stranger"}


def test_data_center_permission_search_matches_the_exact_user_name() -> None:
    with FakeJira(deployment="Server") as fake:
        fake.add_issue("PROJ-7", reporter=fake.user("dana"))
        fake.user("lev")
        fake.user("levin")
        fake.editors.add("levin")
        tracker = JiraTracker(fake.url, pat="p")
        assert not tracker.is_authorised(command("lev"))  # "lev" is a prefix of the editor "levin"
        assert tracker.is_authorised(command("levin"))
        assert fake.calls("GET", "/user/permission/search")[-1].query["username"] == "levin"


def test_any_commenter_when_configured(fake_jira: FakeJira) -> None:
    tracker = JiraTracker(fake_jira.url, email="e", api_token="t", allow_any_commenter=True)
    assert tracker.is_authorised(command("acc-anyone"))
    assert fake_jira.requests == []

"""End to end over HTTP for Jira: `reqgate serve` as a subprocess, the real `jira` client talking to the fake
Jira, the real Anthropic SDK talking to the fake Anthropic, the real Cloud and Server captures in
../shared/data/jira-payloads/ signed here as a Jira admin webhook signs them.

One server per Jira flavour and module (starting one costs seconds); each test works on its own issue.
"""

from __future__ import annotations

import itertools
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reqgate.handlers.jira.markup import markdown_to_wiki
from reqgate.handlers.publish import STICKY_MARKER, is_sticky
from tests.e2e_support import BotServer, sign
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_jira import FakeJira, FakeUser, RecordedRequest
from tests.jira_e2e_support import (
    AUTOMATION_TOKEN,
    CLOUD_COMMENT,
    CLOUD_CREATED,
    GOOD_WIKI,
    JIRA_API_TOKEN,
    JIRA_PAT,
    JIRA_SECRET,
    SERVER_COMMENT,
    VAGUE_WIKI,
    WARNED_WIKI,
    bot_comments,
    capture,
    capture_issue,
    cloud_authorization,
    deliver_jira,
    jira_env,
    ours,
    retarget,
    stickies,
    with_comment,
)

pytestmark = pytest.mark.server

# The Cloud accounts the captures name: the issue's creator (and reporter), and the commenter.
CREATOR = ("sample.user", "5cedcb4355a88a0fc86388ba", "Sample User")
COMMENTER = ("admin", "5c5f880629be9642ba529340", "Test User")
BAD_CONFIG = "threshold: 70\nlabels:\n  ready: ok\n  colour: red\n"
_ids = itertools.count(20001)


@pytest.fixture(scope="module")
def config_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jira-config")
    (root / "projects").mkdir()
    (root / "projects" / "BAD.yml").write_text(BAD_CONFIG, encoding="utf-8")
    # A valid project file: deep-merged over the defaults; a label with spaces becomes a valid Jira label.
    (root / "projects" / "CUS.yml").write_text("labels:\n  needs_info: needs more info\n", encoding="utf-8")
    (root / "projects" / "EDT.yml").write_text("review_on_edit: true\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def jira() -> Iterator[FakeJira]:
    with FakeJira(expected_authorization=cloud_authorization()) as fake:
        for name, account_id, display_name in (CREATOR, COMMENTER):
            fake.user(name, account_id=account_id, display_name=display_name)
        yield fake


def creator(jira: FakeJira) -> FakeUser:
    return jira.user(CREATOR[0])


def commenter(jira: FakeJira) -> FakeUser:
    return jira.user(COMMENTER[0])


@pytest.fixture(scope="module")
def server(jira: FakeJira, config_dir: Path, fake_anthropic_server: FakeAnthropic,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotServer]:
    bot = BotServer(tmp_path_factory.mktemp("bot"), {**jira_env(jira, config_dir), **fake_anthropic_server.env()})
    bot.start()
    yield bot
    bot.stop()


@pytest.fixture(scope="module")
def dc_jira() -> Iterator[FakeJira]:
    with FakeJira(deployment="Server", expected_authorization=f"Bearer {JIRA_PAT}") as fake:
        yield fake


@pytest.fixture(scope="module")
def dc_server(dc_jira: FakeJira, config_dir: Path, fake_anthropic_server: FakeAnthropic,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotServer]:
    bot = BotServer(tmp_path_factory.mktemp("bot-dc"), {**jira_env(dc_jira, config_dir),
                                                         **fake_anthropic_server.env()})
    bot.start()
    yield bot
    bot.stop()


def new_issue(jira: FakeJira, project: str = "KT", description: str | None = GOOD_WIKI,
              reporter: FakeUser | None = None, **kw: Any) -> tuple[str, str]:
    """A fresh issue (key, id) on the fake, so that no two tests share a ticket's stored state."""
    number = next(_ids)
    key, issue_id = f"{project}-{number}", str(number)
    jira.add_issue(key, id=issue_id, summary="Export workspace tasks to CSV", description=description,
                   reporter=reporter or creator(jira), **kw)
    return key, issue_id


def created(key: str, issue_id: str) -> dict[str, Any]:
    return retarget(capture(CLOUD_CREATED), key, issue_id)


def recheck(key: str, issue_id: str, body: str = "/reqgate recheck") -> dict[str, Any]:
    return with_comment(retarget(capture(CLOUD_COMMENT), key, issue_id), body)


def edited(key: str, issue_id: str, *fields: str) -> dict[str, Any]:
    """The Cloud capture as the `jira:issue_updated` Jira sends after an edit of `fields`."""
    event = created(key, issue_id)
    event["webhookEvent"], event["issue_event_type_name"] = "jira:issue_updated", "issue_updated"
    event["changelog"] = {"id": "2", "items": [{"field": name, "fieldtype": "jira", "fieldId": name}
                                              for name in fields]}
    return event


def issue_writes(jira: FakeJira, issue_id: str) -> list[RecordedRequest]:
    return [r for r in jira.calls("PUT", f"/issue/{issue_id}") if r.path.endswith(f"/issue/{issue_id}")]


def wiki_of(comment_body: object) -> str:
    assert isinstance(comment_body, str)
    return comment_body


def assert_wiki_markup(body: str, findings_table: bool = True) -> None:
    """Jira wiki markup as the comment renderer writes it, and nothing Jira would print literally."""
    assert re.match(r"h3\. ReqGate: (✅ Ready|⚠️ Needs info) · (Story|Task|Bug) \(type [a-z ]+\) · score \d+/100",
                    body), body[:200]
    # The marker is an anchor macro, which Jira renders as nothing; no marker text shows.
    assert body.splitlines()[0].endswith(" {anchor:reqgate-review-v1}") and "reqgate:review" not in body
    assert "\nh4. Details: draft" in body and "*Draft for this " in body
    assert re.search(r"^\* ☐ \S", body, re.MULTILINE)  # a checklist item
    if findings_table:
        assert "\n*All findings (" in body
        assert re.search(r"^\|\|category\|\|check\|\|mode\|\|finding\|\|quote\|\|\n\|\w+\|\{\{[\w.\\-]+\}\}\|", body,
                         re.MULTILINE)
    for markdown in ("<details", "</details", "<summary", "<sub>", "<!--", "### ", "**", "- [ ]", "|---|"):
        assert markdown not in body, markdown
    assert "{color:#6b778c}ReqGate 0.1" in body and is_sticky(body)


# ---- issue created ----------------------------------------------------------------------------------


def test_the_cloud_capture_of_issue_created_gives_one_wiki_comment_and_one_label(
    server: BotServer, jira: FakeJira, fake_anthropic: FakeAnthropic
) -> None:
    key, issue_id = capture_issue(CLOUD_CREATED)  # KT-22, the issue the capture is about
    jira.add_issue(key, id=issue_id, summary="Lots of fields selected", description=WARNED_WIKI,
                   reporter=creator(jira), issuetype="Task", labels=["team-a"])
    answer = deliver_jira(server, capture(CLOUD_CREATED), "created-1")
    assert answer.status_code == 202, answer.text
    assert answer.json()["workflow_id"] == "jira:created-1"
    outcome = server.wait_done("jira:created-1")
    assert outcome["status"] == "published"

    (comment,) = jira.comments(key)
    assert comment.author is jira.bot and outcome["comment_id"] == comment.id
    assert_wiki_markup(wiki_of(comment.body))
    label = {"ready": "reqgate:ready", "needs_info": "reqgate:needs-info"}[outcome["verdict"]]
    assert jira.issue(key).labels == ["team-a", label]  # added to, never replaced
    (write,) = issue_writes(jira, issue_id)
    assert write.body["update"] == {"labels": [{"add": label}]} and "labels" not in write.body["fields"]
    assert len(fake_anthropic.requests) == 2  # structure, then render
    assert server.steps("jira:created-1") == ["started_at", "resolve_ref", "load_config", "fetch_and_prepare",
                                              "load_state", "llm_structure", "sync_labels", "llm_render",
                                              "upsert_comment", "save_state"]
    # The description was read from Jira (wiki markup -> markdown) and sent to the LLM delimited.
    assert "one row per task" in fake_anthropic.requests[0].user_text


# ---- /reqgate recheck --------------------------------------------------------------------------------


def test_recheck_after_an_edit_edits_the_same_comment_and_swaps_the_label(
    server: BotServer, jira: FakeJira, fake_anthropic: FakeAnthropic
) -> None:
    key, issue_id = capture_issue(CLOUD_COMMENT)  # TES-41, the issue the Cloud comment capture is about
    jira.add_issue(key, id=issue_id, summary="Export workspace tasks to CSV", description=VAGUE_WIKI,
                   reporter=commenter(jira))
    assert deliver_jira(server, created(key, issue_id), "recheck-1").status_code == 202
    assert server.wait_done("jira:recheck-1")["verdict"] == "needs_info"
    (first,) = jira.comments(key)
    first_id, first_body = first.id, wiki_of(first.body)
    assert "Needs info" in first_body and ours(jira.issue(key).labels) == {"reqgate:needs-info"}

    # The PM edits the description in Jira, then comments; the capture is that comment, body changed.
    jira.issue(key).description = GOOD_WIKI
    pm_comment = jira.add_comment(key, "/reqgate recheck", author=commenter(jira))
    event = with_comment(capture(CLOUD_COMMENT), "Done, please look again.\n/reqgate recheck")
    event["comment"]["id"] = pm_comment.id
    calls = len(fake_anthropic.requests)
    answer = deliver_jira(server, event, "recheck-2")
    assert answer.status_code == 202, answer.text
    outcome = server.wait_done("jira:recheck-2")

    assert outcome["status"] == "published" and outcome["comment_id"] == first_id
    assert outcome["verdict"] == "ready"
    assert len(fake_anthropic.requests) == calls + 2  # the text changed: reviewed again
    (edited,) = bot_comments(jira, key)
    assert edited.id == first_id and wiki_of(edited.body) != first_body
    assert_wiki_markup(wiki_of(edited.body), findings_table=False)
    assert wiki_of(edited.body).startswith("h3. ReqGate: ✅ Ready")
    assert ours(jira.issue(key).labels) == {"reqgate:ready"}
    assert len(jira.calls("POST", f"/issue/{key}/comment")) == 1  # created once, then edited in place
    assert len(jira.calls("PUT", f"/comment/{first_id}")) == 1
    swap = issue_writes(jira, issue_id)[-1]
    assert swap.body["update"]["labels"] == [{"add": "reqgate:ready"}, {"remove": "reqgate:needs-info"}]


def test_recheck_of_unchanged_text_makes_no_llm_call(server: BotServer, jira: FakeJira,
                                                      fake_anthropic: FakeAnthropic) -> None:
    key, issue_id = new_issue(jira, reporter=commenter(jira))
    deliver_jira(server, created(key, issue_id), "cache-1")
    first = server.wait_done("jira:cache-1")
    calls = len(fake_anthropic.requests)
    deliver_jira(server, recheck(key, issue_id), "cache-2")
    outcome = server.wait_done("jira:cache-2")
    assert outcome["status"] == "cached" and outcome["comment_id"] == first["comment_id"]
    assert len(fake_anthropic.requests) == calls
    (sticky,) = stickies(jira, key)
    assert "no LLM call" in wiki_of(sticky.body)


def test_a_recheck_by_someone_without_edit_rights_gets_a_reply_and_no_review(
    server: BotServer, jira: FakeJira, fake_anthropic: FakeAnthropic
) -> None:
    key, issue_id = new_issue(jira)  # reported by the creator; the Cloud commenter may not edit it
    answer = deliver_jira(server, recheck(key, issue_id), "refused-1")
    assert answer.status_code == 202
    assert server.wait_done("jira:refused-1")["status"] == "refused"
    (reply,) = bot_comments(jira, key)
    assert "was not run" in wiki_of(reply.body) and not is_sticky(wiki_of(reply.body))
    assert jira.issue(key).labels == [] and fake_anthropic.requests == []
    # Someone with EDIT_ISSUES on the issue may (Jira's equivalent of write access).
    jira.editors.add(commenter(jira).ident)
    try:
        deliver_jira(server, recheck(key, issue_id), "allowed-1")
        assert server.wait_done("jira:allowed-1")["status"] == "published"
    finally:
        jira.editors.discard(commenter(jira).ident)
    assert len(stickies(jira, key)) == 1


# ---- deliveries that must not run (twice) -------------------------------------------------------------


def test_the_same_delivery_twice_runs_once(server: BotServer, jira: FakeJira,
                                           fake_anthropic: FakeAnthropic) -> None:
    key, issue_id = new_issue(jira)
    event = created(key, issue_id)
    assert deliver_jira(server, event, "dup-1").status_code == 202
    again = deliver_jira(server, event, "dup-1")  # Jira's retry keeps X-Atlassian-Webhook-Identifier
    assert again.status_code == 200 and again.json() == {"status": "duplicate", "workflow_id": "jira:dup-1"}
    server.wait_done("jira:dup-1")
    assert deliver_jira(server, event, "dup-1").status_code == 200
    assert len(jira.comments(key)) == 1
    fetches = [r for r in jira.calls("GET", f"/issue/{key}") if "description" in r.query.get("fields", "")]
    assert len(fetches) == 1
    assert len(fake_anthropic.requests) == 2


def test_without_the_identifier_the_same_event_is_still_one_run(server: BotServer, jira: FakeJira) -> None:
    key, issue_id = new_issue(jira)
    event = created(key, issue_id)
    first = deliver_jira(server, event, "")
    assert first.status_code == 202
    workflow_id = first.json()["workflow_id"]
    assert deliver_jira(server, event, "").json() == {"status": "duplicate", "workflow_id": workflow_id}
    server.wait_done(workflow_id)
    assert len(jira.comments(key)) == 1


def test_a_comment_by_the_bot_itself_does_nothing(server: BotServer, jira: FakeJira) -> None:
    key, issue_id = new_issue(jira, reporter=commenter(jira))
    me = {"accountId": jira.bot.account_id, "displayName": jira.bot.display_name}
    for n, body in enumerate(["/reqgate recheck", markdown_to_wiki(f"{STICKY_MARKER}\n### ReqGate: ✅ Ready")]):
        event = with_comment(retarget(capture(CLOUD_COMMENT), key, issue_id), body, author=me)
        assert deliver_jira(server, event, f"self-{n}").status_code == 204
        assert f"jira:self-{n}" not in server.workflows()
    # The marker alone (a PM quoting the bot's comment) does not start anything either.
    quoted = with_comment(retarget(capture(CLOUD_COMMENT), key, issue_id),
                          "you wrote: <!-- reqgate:review v1 --> /reqgate recheck")
    assert deliver_jira(server, quoted, "quoted-1").status_code == 204
    # Nor does an ordinary comment: the capture as it is.
    assert deliver_jira(server, retarget(capture(CLOUD_COMMENT), key, issue_id), "plain-1").status_code == 204
    assert jira.comments(key) == [] and jira.issue(key).labels == []


def test_the_bots_own_label_change_does_nothing(server: BotServer, jira: FakeJira) -> None:
    key, issue_id = new_issue(jira, project="EDT")  # edits are reviewed here
    by_bot = {**edited(key, issue_id, "description"), "user": {"accountId": jira.bot.account_id}}
    assert deliver_jira(server, by_bot, "own-edit").status_code == 204
    assert deliver_jira(server, edited(key, issue_id, "labels"), "label-edit").status_code == 204
    assert "jira:own-edit" not in server.workflows() and "jira:label-edit" not in server.workflows()


def test_an_edit_is_reviewed_only_where_the_project_file_asks(server: BotServer, jira: FakeJira) -> None:
    key, issue_id = new_issue(jira)  # project KT: defaults, review_on_edit is off
    assert deliver_jira(server, edited(key, issue_id, "description"), "edit-off").status_code == 202
    assert server.wait_done("jira:edit-off")["detail"] == "review_on_edit is off"
    assert jira.comments(key) == []

    key, issue_id = new_issue(jira, project="EDT")  # projects/EDT.yml: review_on_edit: true
    assert deliver_jira(server, edited(key, issue_id, "summary"), "edit-on").status_code == 202
    assert server.wait_done("jira:edit-on")["status"] == "published"
    assert len(stickies(jira, key)) == 1
    assert deliver_jira(server, edited(key, issue_id, "priority"), "edit-other").status_code == 204


def test_help_and_config_reply_in_wiki_markup(server: BotServer, jira: FakeJira) -> None:
    key, issue_id = new_issue(jira, project="CUS", reporter=commenter(jira))
    deliver_jira(server, recheck(key, issue_id, "/reqgate help"), "help-1")
    # The legacy shape: an issue update that carries the comment.
    legacy = edited(key, issue_id)
    legacy["issue_event_type_name"] = "issue_commented"
    legacy["comment"] = recheck(key, issue_id, "Which settings apply here?\n/reqgate config")["comment"]
    deliver_jira(server, legacy, "config-1")
    deliver_jira(server, recheck(key, issue_id, "/reqgate frobnicate"), "unknown-1")
    for delivery in ("help-1", "config-1", "unknown-1"):
        assert server.wait_done(f"jira:{delivery}")["status"] == "replied"
    replies = [wiki_of(c.body) for c in bot_comments(jira, key)]
    assert len(replies) == 3
    (help_text,) = [r for r in replies if "ReqGate commands" in r]
    (config_text,) = [r for r in replies if "ReqGate configuration" in r]
    (unknown_text,) = [r for r in replies if "does not know" in r]
    assert "*ReqGate commands*" in help_text and "* {{/reqgate recheck}}" in help_text
    assert "*ReqGate configuration*" in config_text and "{{projects/CUS.yml}}" in config_text
    assert "{code:yaml}" in config_text and "needs more info" in config_text
    assert "||Key||Value||Set in||" in config_text
    assert "does not know {{/reqgate frobnicate}}" in unknown_text
    for text in (help_text, config_text, unknown_text):
        assert "**" not in text and "<details" not in text and not is_sticky(text)
    assert jira.issue(key).labels == []


# ---- Data Center --------------------------------------------------------------------------------------


def test_the_server_comment_capture_without_an_issue_finds_the_issue_and_reviews_it(
    dc_server: BotServer, dc_jira: FakeJira, fake_anthropic: FakeAnthropic
) -> None:
    _, issue_id = capture_issue(SERVER_COMMENT)  # only the id, from comment.self: 10013
    author = capture(SERVER_COMMENT)["comment"]["author"]["name"]
    dc_jira.add_issue("DC-7", id=issue_id, summary="Export workspace tasks to CSV", description=WARNED_WIKI,
                      reporter=dc_jira.user(author))
    event = with_comment(capture(SERVER_COMMENT), "/reqgate recheck")
    assert "issue" not in event
    answer = deliver_jira(dc_server, event, "dc-1")
    assert answer.status_code == 202, answer.text
    outcome = dc_server.wait_done("jira:dc-1")

    assert outcome["status"] == "published"
    (comment,) = dc_jira.comments("DC-7")
    assert comment.author is dc_jira.bot and outcome["comment_id"] == comment.id
    assert_wiki_markup(wiki_of(comment.body))
    label = {"ready": "reqgate:ready", "needs_info": "reqgate:needs-info"}[outcome["verdict"]]
    assert dc_jira.issue("DC-7").labels == [label]
    steps = dc_server.steps("jira:dc-1")
    assert steps[:3] == ["started_at", "resolve_ref", "authorise"] and "upsert_comment" in steps
    assert len(fake_anthropic.requests) == 2
    # Every request carried the personal access token (the fake refuses anything else with a 401).
    assert all(r.status < 400 for r in dc_jira.requests), [(r.method, r.path, r.status) for r in dc_jira.requests]

    # The bot's own comment on Data Center names it by user name.
    me = {"name": dc_jira.bot.name, "key": dc_jira.bot.name}
    own = with_comment(capture(SERVER_COMMENT), "/reqgate recheck", author=me)
    assert deliver_jira(dc_server, own, "dc-self").status_code == 204


# ---- authentication and what a sender can send ---------------------------------------------------------


def test_an_automation_rule_with_the_shared_token_is_accepted(server: BotServer, jira: FakeJira) -> None:
    key, issue_id = new_issue(jira)
    # What the Automation rule's custom data sends (handlers/jira/webhook.py); Automation cannot sign.
    body = {"webhookEvent": "jira:issue_created", "timestamp": 1700000000000,
            "issue": {"id": issue_id, "key": key}}
    assert deliver_jira(server, body, "", secret=None, token="not-the-token").status_code == 401
    assert deliver_jira(server, body, "", secret=None).status_code == 401
    answer = deliver_jira(server, body, "", secret=None, token=AUTOMATION_TOKEN)
    assert answer.status_code == 202, answer.text
    assert server.wait_done(answer.json()["workflow_id"])["status"] == "published"
    assert len(stickies(jira, key)) == 1


def test_bad_signatures_are_refused(server: BotServer, jira: FakeJira) -> None:
    key, issue_id = new_issue(jira)
    body = json.dumps(created(key, issue_id)).encode()
    good = sign(body, JIRA_SECRET)
    refused: list[dict[str, str | bytes]] = [
        {"X-Hub-Signature": sign(body, "not-the-secret")},
        {},
        {"X-Hub-Signature": "sha1=" + good.partition("=")[2]},
        {"X-Hub-Signature": "sha256"},
        {"X-Hub-Signature": ""},
        {"X-Hub-Signature": "sha256=" + "0" * 64},
        {"X-Hub-Signature-256": good},  # GitHub's header name is not Jira's
        {"X-ReqGate-Token": JIRA_SECRET},  # the webhook secret is not the Automation token
        # Non-ASCII in either header (HTTP carries Latin-1 bytes there).
        {"X-Hub-Signature": "sha256=\xe9".encode("latin-1")},
        {"X-ReqGate-Token": "\xe9t\xe9".encode("latin-1")},
    ]
    for headers in refused:
        answer = server.client.post("/webhooks/jira", content=body,
                                    headers={"Content-Type": "application/json", **headers})
        assert answer.status_code == 401, (headers, answer.status_code)
    # The signature over other bytes than those sent.
    assert deliver_jira(server, body + b" ", secret=None, **{"X-Hub-Signature": good}).status_code == 401
    # The exact bytes, signed, the method prefix in any case: accepted, and only that delivery ran.
    answer = deliver_jira(server, body, "sig-ok", secret=None, **{"X-Hub-Signature": good.replace("sha256", "SHA256")})
    assert answer.status_code == 202
    server.wait_done("jira:sig-ok")
    assert len(jira.comments(key)) == 1


GARBAGE: list[tuple[bytes, int]] = [
    (b"{not json", 400),
    (b"\xff\xfe\x00", 400),
    (b"", 400),
    (b"[1, 2]", 400),
    (b'"a string"', 400),
    (b"{}", 400),
    (b'{"webhookEvent": 5}', 400),
    (b'{"webhookEvent": "jira:issue_created"}', 400),
    (b'{"webhookEvent": "jira:issue_created", "issue": "KT-1"}', 400),
    (b'{"webhookEvent": "jira:issue_created", "issue": {}}', 400),
    (b'{"webhookEvent": "jira:issue_created", "issue": {"key": ["KT-1"]}}', 400),
    (b'{"webhookEvent": "comment_created", "comment": "x"}', 400),
    (b'{"webhookEvent": "comment_created", "comment": {"body": 5}}', 400),
    (b'{"webhookEvent": "comment_created", "comment": {"body": "/reqgate recheck"}}', 400),
    (b'{"webhookEvent": "comment_created", "comment": {"body": "/reqgate recheck", "self": "x"}}', 400),
    (b'{"webhookEvent": "jira:issue_updated", "issue": {"key": "KT-1"}, "changelog": {"items": "x"}}', 400),
    (b'{"webhookEvent": "jira:issue_updated", "issue": {"key": "KT-1"}, "changelog": {"items": [5]}}', 400),
    (b'{"webhookEvent": "jira:issue_updated", "issue": {"key": "KT-1"}, "user": 7, "comment": 5}', 204),
    (b'{"webhookEvent": "comment_created", "comment": {"body": {"type": "doc", "content": 5}}}', 204),
    (b'{"webhookEvent": "jira:worklog_updated", "worklog": {}}', 204),
    (b'{"webhookEvent": "comment_deleted", "comment": {"body": "/reqgate recheck"}}', 204),
]


@pytest.mark.parametrize(("body", "status"), GARBAGE, ids=[str(i) for i in range(len(GARBAGE))])
def test_garbage_is_a_4xx_never_a_5xx(server: BotServer, body: bytes, status: int) -> None:
    answer = deliver_jira(server, body)
    assert answer.status_code == status, (body, answer.status_code, answer.text)


def test_deeply_nested_json_is_a_400(server: BotServer) -> None:
    assert deliver_jira(server, b"[" * 100_000).status_code == 400


def test_oversize_bodies_are_refused(server: BotServer) -> None:
    assert deliver_jira(server, b" " * (1024 * 1024 + 1)).status_code == 413
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(b"POST /webhooks/jira HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 99999999\r\n\r\n{}")
        assert raw.recv(4096).startswith(b"HTTP/1.1 413")


# ---- per-project configuration -------------------------------------------------------------------------


def test_an_invalid_project_file_gives_an_error_comment_and_no_llm_call(
    server: BotServer, jira: FakeJira, fake_anthropic: FakeAnthropic
) -> None:
    key, issue_id = new_issue(jira, project="BAD", labels=["reqgate:ready", "team-a"])
    deliver_jira(server, created(key, issue_id), "conf-bad-1")
    outcome = server.wait_done("jira:conf-bad-1")
    assert outcome["status"] == "config_error"
    (comment,) = jira.comments(key)
    body = wiki_of(comment.body)
    assert is_sticky(body) and body.startswith("h3. ReqGate: ❌ Error")
    assert "projects/BAD.yml" in body and "labels.colour" in body and "line 4" in body
    assert "/reqgate recheck" in body and "<sub>" not in body
    assert jira.issue(key).labels == ["team-a", "reqgate:error"]
    assert fake_anthropic.requests == []


def test_a_valid_project_file_is_merged_over_the_defaults(server: BotServer, jira: FakeJira) -> None:
    key, issue_id = new_issue(jira, project="CUS", description=VAGUE_WIKI)
    deliver_jira(server, created(key, issue_id), "conf-ok-1")
    outcome = server.wait_done("jira:conf-ok-1")
    assert outcome["verdict"] == "needs_info"
    # `needs more info` from projects/CUS.yml, as a valid Jira label; the other labels are the defaults'.
    assert jira.issue(key).labels == ["needs_more_info"]
    (comment,) = stickies(jira, key)
    assert "projects/CUS.yml" in wiki_of(comment.body)


# ---- the process ---------------------------------------------------------------------------------------


def test_readiness_metrics_and_logs(server: BotServer, jira: FakeJira) -> None:
    assert server.client.get("/readyz").json()["identities"] == {"jira": True}
    assert server.client.post("/webhooks/github", content=b"{}").status_code == 404  # GitHub is off
    text = server.client.get("/metrics").text
    assert 'reqgate_webhooks_total{outcome="accepted",source="jira"}' in text
    logs = server.logs()
    for secret in (JIRA_SECRET, AUTOMATION_TOKEN, JIRA_API_TOKEN, "one row per task"):
        assert secret not in logs
    # Every request to Jira carried the Cloud credentials (the fake answers 401 to anything else).
    assert jira.requests and all(r.status != 401 for r in jira.requests)


# ---- reqgate replay ----------------------------------------------------------------------------------


@pytest.mark.parametrize("auth", ["signature", "automation_token"])
def test_replay_posts_the_example_jira_payload(server: BotServer, jira: FakeJira, auth: str) -> None:
    """`reqgate replay examples/jira-issue-created.json` as a developer runs it against a local server: the
    source is recognised from the payload, and the delivery is authenticated as the server expects."""
    import subprocess
    import sys

    example = Path(__file__).resolve().parents[1] / "examples" / "jira-issue-created.json"
    issue = json.loads(example.read_text(encoding="utf-8"))["issue"]
    jira.add_issue(issue["key"], id=issue["id"], summary=issue["fields"]["summary"], description=GOOD_WIKI,
                   reporter=creator(jira))
    env = dict(server.env)
    if auth == "automation_token":
        env["REQGATE_JIRA_WEBHOOK_SECRET"] = ""  # empty is unset: replay falls back to the token header
    delivery = f"replay-{auth}"
    done = subprocess.run(
        [sys.executable, "-m", "reqgate.bot.cli", "replay", str(example), "--url", f"{server.url}/webhooks/jira",
         "--delivery", delivery],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("202 Accepted")
    assert json.loads(done.stdout.splitlines()[1])["workflow_id"] == f"jira:{delivery}"
    assert server.wait_done(f"jira:{delivery}")["status"] in ("published", "cached")  # the second: same text


def test_replay_of_a_github_payload_needs_its_event(tmp_path: Path) -> None:
    import subprocess
    import sys

    example = Path(__file__).resolve().parents[1] / "examples" / "github-issues-opened.json"
    done = subprocess.run([sys.executable, "-m", "reqgate.bot.cli", "replay", str(example)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "needs --event" in done.stderr

"""`reqgate audit` as a user runs it: each export format, the JSON Lines it writes, the summary, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reqgate.bot.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]

# Shaped like Jira's "Export CSV": a BOM, one Labels column per label, wiki markup over several lines.
JIRA_CSV = (
    "\ufeffSummary,Issue key,Issue id,Issue Type,Status,Labels,Labels,Description\r\n"
    'Balloon framework fails to run due to bad flags,MESOS-487,12345,Bug,Open,flaky,,"Running the balloon '
    'framework fails:\n{code}\n./bin/balloon --master=local\nFailed to parse flags\n{code}\n'
    'h3. Steps\n# build\n# run the command above"\r\n'
    'Support ephemeral ports,MESOS-900,12346,Improvement,Open,networking,ports,"As an operator I want the '
    'slave to use *ephemeral* ports so that I can run two slaves on a host."\r\n'
)
GITHUB_JSON = [
    {"number": 12, "title": "Crash when saving an empty form", "repository_url": "https://api.github.com/repos/acme/app",
     "body": "Saving a form with an empty title answers 500.\n\n1. open /forms/new\n2. press Save",
     "labels": [{"name": "ui"}], "type": {"name": "Bug"}},
    {"number": 13, "title": "Bump deps", "pull_request": {"url": "x"}, "body": "", "labels": []},
    {"number": 14, "title": "Export to CSV", "body": "Add a CSV export of the task list.",
     "labels": [{"name": "enhancement"}], "type": None},
]
GITLAB_JSON = [
    {"iid": 7, "title": "Broken link on pricing page", "description": "The *Contact* link gives 404.",
     "labels": ["bug"], "issue_type": "issue", "references": {"full": "gitlab-com/marketing#7"}},
]
JSONL = [
    {"key": "T-1", "title": "Upgrade Jetty", "body": "Upgrade Jetty from 9.2 to 9.4.", "format": "markdown",
     "type": "task"},
    {"key": "T-2", "title": "Make search fast", "body": "Search should be fast and user friendly. Limit: TBD",
     "format": "markdown"},
    {"key": "T-3", "title": "Login fails", "body": "h3. Steps\n# open login\n# submit\n\nAn error is shown.",
     "format": "jira-wiki", "type": "Bug", "labels": ["auth"]},
]


def main(argv: list[str]) -> int:
    """The command without `reqgate.bot.cli.main`'s logging set-up, which would keep pytest's captured
    standard error as its stream after the test closed it."""
    args = build_parser().parse_args(argv)
    return args.handler(args)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def audit(tmp_path: Path, export: Path, *extra: str) -> list[dict]:
    out = tmp_path / "out.jsonl"
    assert main(["audit", str(export), "--jsonl", str(out), *extra]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_jira_csv_export(tmp_path):
    export = tmp_path / "jira.csv"
    export.write_text(JIRA_CSV, encoding="utf-8", newline="")
    lines = audit(tmp_path, export)
    assert [line["key"] for line in lines] == ["MESOS-487", "MESOS-900"]
    bug, story = lines
    assert bug["ticket_type"] == "bug" and bug["packet"]["labels"] == ["flaky"]
    assert story["ticket_type"] == "story" and story["packet"]["labels"] == ["networking", "ports"]
    # The wiki markup reached the review as markdown.
    assert "```" in bug["packet"]["body"] and "1. build" in bug["packet"]["body"]
    assert "**ephemeral**" in story["packet"]["body"]


def test_jira_csv_with_another_delimiter(tmp_path):
    export = tmp_path / "jira.csv"
    export.write_text("\ufeffIssue key;Summary;Issue Type;Description\nAB-1;Crash on start;Bug;\"It crashes; always.\"\n",
                      encoding="utf-8")
    [line] = audit(tmp_path, export)
    assert (line["key"], line["packet"]["title"], line["ticket_type"]) == ("AB-1", "Crash on start", "bug")
    assert line["packet"]["body"] == "It crashes; always."


def test_github_and_gitlab_api_lists(tmp_path):
    github = tmp_path / "github.json"
    github.write_text(json.dumps(GITHUB_JSON, indent=2), encoding="utf-8")
    lines = audit(tmp_path, github)
    assert [(line["key"], line["ticket_type"]) for line in lines] == [("acme/app#12", "bug"), ("#14", "story")]
    gitlab = tmp_path / "gitlab.json"
    gitlab.write_text(json.dumps(GITLAB_JSON), encoding="utf-8")
    [line] = audit(tmp_path, gitlab)
    assert line["key"] == "gitlab-com/marketing#7" and line["ticket_type"] == "bug"
    assert line["packet"]["body"] == "The *Contact* link gives 404."  # markdown is not converted


def test_jsonl_lines_are_the_review_json_plus_key(tmp_path):
    lines = audit(tmp_path, write_jsonl(tmp_path / "in.jsonl", JSONL))
    assert [line["key"] for line in lines] == ["T-1", "T-2", "T-3"]
    assert [line["ticket_type"] for line in lines] == ["task", lines[1]["ticket_type"], "bug"]
    ticket = tmp_path / "T-2.md"
    ticket.write_text("Make search fast\n\nSearch should be fast and user friendly. Limit: TBD\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    alone = subprocess.run([sys.executable, "-m", "reqgate.bot.cli", "review", str(ticket), "--json", "--no-cache"],
                           capture_output=True, check=False, env=env, cwd=ROOT, timeout=120)
    review = json.loads(alone.stdout)
    assert list(lines[1]) == ["key", *review]
    assert lines[1]["decision"] == review["decision"] and lines[1]["findings"] == review["findings"]


def test_summary_on_stdout(tmp_path, capsys):
    export = write_jsonl(tmp_path / "in.jsonl", JSONL)
    assert main(["audit", str(export)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 tickets: ")
    assert "task" in out and "bug" in out and "Most frequent issues" in out


def test_exact_command_of_the_issue(tmp_path):
    write_jsonl(tmp_path / "IN.jsonl", JSONL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    run = subprocess.run([sys.executable, "-m", "reqgate.bot.cli", "audit", "IN.jsonl", "--offline", "--jsonl",
                          "OUT.jsonl"], capture_output=True, check=False, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert len((tmp_path / "OUT.jsonl").read_text().splitlines()) == 3
    assert run.stdout.decode().startswith("3 tickets: ")


@pytest.mark.parametrize(("content", "message"), [
    ("issuekey,title,description\nX-1,a,b\n", "not a format reqgate audit reads"),
    ("", "is empty"),
    ('{"key": "A", "title": "t", "body": "b"}\n{"title": "no key"}\n', "line 2: key: Field required"),
    ('{"key": "A", "format": "rst"}\n', "line 1: format"),
    ('[{"number": 1, "title": "t"}, {"title": "neither"}]', "item 1: neither a GitHub issue"),
    ('[{"number": 1, "title": "t"}', "not closed"),
])
def test_bad_input_exits_2_with_a_reason(tmp_path, capsys, content, message):
    export = tmp_path / "export.txt"
    export.write_text(content, encoding="utf-8")
    assert main(["audit", str(export)]) == 2
    assert message in capsys.readouterr().err


def test_missing_file_and_bad_config_exit_2(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "nope.csv")]) == 2
    assert "cannot read" in capsys.readouterr().err
    config = tmp_path / "reqgate.yml"
    config.write_text("threshold: lots\n", encoding="utf-8")
    export = write_jsonl(tmp_path / "in.jsonl", JSONL)
    assert main(["audit", str(export), "--config", str(config)]) == 2
    assert "invalid configuration" in capsys.readouterr().err


def test_help_does_not_load_the_audit(tmp_path):
    code = ("import sys\nfrom reqgate.bot.cli import build_parser\nbuild_parser()\n"
            "print(sorted(m for m in sys.modules if m.startswith(('reqgate.bot.audit', 'reqgate.handlers.export', "
            "'tqdm'))))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, cwd=tmp_path, timeout=120)
    assert run.stdout.decode().strip() == "['reqgate.bot.audit_cli']"

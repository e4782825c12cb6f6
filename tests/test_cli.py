"""`reqgate review` as a user runs it: a subprocess, its exit code, what it prints."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def reqgate(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None, tmp: Path | None = None):
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    if tmp is not None:
        base["REQGATE_CACHE_DIR"] = str(tmp / "cache")
    base.update(env or {})
    return subprocess.run([sys.executable, "-m", "reqgate.bot.cli", "review", *args], input=stdin, capture_output=True,
                          check=False, env=base, cwd=ROOT, timeout=60)


# Rules only, vague words and a "TBD" ask (warn / info) and do not block: on real tickets they were not
# right often enough to hold work back (bench/eval_tickets.py); the LLM path may still rate it down.
@pytest.mark.parametrize(("name", "code"), [("good-story.md", 0), ("bug-report.md", 0), ("vague-story.md", 0),
                                           ("injection.md", 1)])
def test_exit_code_is_the_verdict(name, code, tmp_path):
    run = reqgate(str(EXAMPLES / name), tmp=tmp_path)
    assert run.returncode == code, run.stderr
    assert run.stdout.decode().startswith("<!-- reqgate:review v1 -->")
    assert b"rules-only review (ANTHROPIC_API_KEY is not set)" in run.stderr


def test_stdin_cp1252_and_json_output(tmp_path):
    ticket = "Export\n\nAs a manager I\u2019d like to export the stock list so that I can order in time.".encode("cp1252")
    run = reqgate("-", "--json", "--type", "story", stdin=ticket, tmp=tmp_path)
    data = json.loads(run.stdout)
    assert data["ticket_type"] == "story" and data["packet"]["body"].startswith("As a manager I\u2019d like")
    assert data["decision"]["verdict"] in ("ready", "needs_info")


def test_leaked_token_never_printed(tmp_path):
    run = reqgate(str(EXAMPLES / "leaked-token.md"), "--json", tmp=tmp_path)
    out = run.stdout.decode() + run.stderr.decode()
    assert "ghp_R8c2XbQmZt7LkP4wN9sVd3HyFj6Ua1Ge0Ko5" not in out and "dana.miller@example.com" not in out
    assert "[REDACTED:github_token]" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such/ticket.md"], b"cannot read /no/such/ticket.md"),
        (["-"], b"is empty"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(args, message, tmp_path):
    run = reqgate(*args, stdin=b"  \n", tmp=tmp_path)
    assert run.returncode == 2 and message in run.stderr and run.stdout == b""


def test_invalid_config_names_key_and_line(tmp_path):
    config = tmp_path / "reqgate.yml"
    config.write_text("threshold: 70\nchecks:\n  wording.vague: {default: loud}\n")
    run = reqgate(str(EXAMPLES / "good-story.md"), "--config", str(config), tmp=tmp_path)
    assert run.returncode == 2
    assert b"line 3" in run.stderr and b"checks.wording.vague.default" in run.stderr


def test_config_override_changes_the_verdict(tmp_path):
    config = tmp_path / "reqgate.yml"
    config.write_text("threshold: 100\nchecks:\n  wording.vague: {default: error}\n")
    assert reqgate(str(EXAMPLES / "good-story.md"), "--config", str(config), tmp=tmp_path).returncode in (0, 1)
    strict = reqgate(str(EXAMPLES / "vague-story.md"), "--config", str(config), tmp=tmp_path)
    assert strict.returncode == 1 and b"`wording.vague` | error" in strict.stdout


def test_with_an_api_key_it_calls_the_llm_and_then_serves_the_cache(fake_anthropic, tmp_path):
    env = fake_anthropic.env()
    first = reqgate(str(EXAMPLES / "good-story.md"), "--json", env=env, tmp=tmp_path)
    assert first.returncode in (0, 1), first.stderr
    assert len(fake_anthropic.requests) == 2
    again = reqgate(str(EXAMPLES / "good-story.md"), "--json", env=env, tmp=tmp_path)
    assert len(fake_anthropic.requests) == 2 and json.loads(again.stdout)["trace"]["from_cache"] is True
    offline = reqgate(str(EXAMPLES / "good-story.md"), "--offline", env=env, tmp=tmp_path)
    assert len(fake_anthropic.requests) == 2 and b"--offline" in offline.stderr

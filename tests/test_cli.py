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
    assert b"rules-only review (ANTHROPIC_API_KEY is not set; no LLM is asked)" in run.stderr


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


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (PNG, b"a PNG image"),
        (Path(sys.executable).resolve().read_bytes()[:4096], b"an ELF executable"),
        (os.urandom(3072), b"not text"),
        # Every byte a defined Windows-1252 character, so only the share of control characters can tell.
        (bytes(range(1, 32)) * 40 + b"title\n", b"not text"),
    ],
    ids=["png", "elf", "random", "controls"],
)
def test_binary_input_exits_2_and_says_why(content, message, tmp_path):
    path = tmp_path / "ticket.md"
    path.write_bytes(content)
    run = reqgate(str(path), tmp=tmp_path)
    assert run.returncode == 2 and run.stdout == b"", run.stdout[:200]
    assert message in run.stderr and b"text or markdown file" in run.stderr


def test_utf16_with_bom_and_a_stray_escape_are_text(tmp_path):
    ticket = (EXAMPLES / "good-story.md").read_text(encoding="utf-8")
    (tmp_path / "utf16.md").write_bytes(ticket.encode("utf-16"))
    (tmp_path / "escape.md").write_bytes(ticket.replace("\n\n", "\n\x1b[0m\n", 1).encode())
    for name in ("utf16.md", "escape.md"):
        run = reqgate(str(tmp_path / name), tmp=tmp_path)
        assert run.returncode == 0, run.stderr


def test_unwritable_cache_is_a_warning_and_the_review_still_prints(fake_anthropic, tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    run = reqgate(str(EXAMPLES / "good-story.md"), env={**fake_anthropic.env(), "REQGATE_CACHE_DIR": str(blocked)})
    assert run.returncode in (0, 1) and len(fake_anthropic.requests) == 2
    assert run.stdout.decode().startswith("<!-- reqgate:review v1 -->")
    assert b"warning: cannot write the review cache" in run.stderr and b"Traceback" not in run.stderr


def test_offline_with_a_key_says_offline_not_missing_key(tmp_path):
    run = reqgate(str(EXAMPLES / "good-story.md"), "--offline", env={"ANTHROPIC_API_KEY": "sk-ant-unused"},
                  tmp=tmp_path)
    assert run.returncode == 0
    assert b"offline: no LLM was asked (ANTHROPIC_API_KEY is set; --offline wins)" in run.stderr
    assert b"not set" not in run.stderr and "offline: no LLM was asked" in run.stdout.decode()


def test_a_bare_off_in_yaml_is_explained(tmp_path):
    config = tmp_path / "reqgate.yml"
    config.write_text("checks:\n  wording.vague: {default: off}\n  story.role: off\n")
    run = reqgate(str(EXAMPLES / "good-story.md"), "--config", str(config), tmp=tmp_path)
    assert run.returncode == 2
    lines = run.stderr.decode().splitlines()
    assert any("line 2" in line and "quote it, 'off'" in line for line in lines), lines
    assert any("line 3" in line and "{default: 'off'}" in line for line in lines), lines

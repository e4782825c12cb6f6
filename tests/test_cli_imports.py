"""`reqgate --help` and an offline review start fast: they import neither the Anthropic SDK, DBOS, the trackers'
clients nor the server, and a rules-only review does not even load structlog, nor mistletoe, whose import alone
takes ~0.4 s and which only a model-written draft needs, nor phonenumbers for a ticket without a seven-digit run,
nor pydantic while nothing from outside needs validating (bench/bench_cli.py times them).
Each runs in a fresh interpreter, since this test process has imported everything already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("anthropic", "dbos", "github", "jira", "sqlalchemy", "uvicorn", "starlette", "httpx", "structlog",
         "mistletoe", "phonenumbers", "pydantic", "pydantic_core")
PROBE = """
import json, sys
from reqgate.bot.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(sys.stdin.readline())))
sys.stdout.flush()
print("\\nIMPORTED " + json.dumps(heavy), file=sys.stderr)
sys.exit(code)
"""


def imported(*args: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], input=json.dumps(HEAVY) + "\n", text=True,
                          capture_output=True, env={**base, **(env or {})}, cwd=ROOT, timeout=60, check=False)
    marker = done.stderr.rsplit("IMPORTED ", 1)
    assert len(marker) == 2, done.stderr
    return done.returncode, json.loads(marker[1])


def test_help_imports_nothing_heavy() -> None:
    code, heavy = imported("--help")
    assert code == 0 and heavy == []


@pytest.mark.parametrize("command", ["review", "serve", "replay"])
def test_subcommand_help_imports_nothing_heavy(command: str) -> None:
    code, heavy = imported(command, "--help")
    assert code == 0 and heavy == []


def test_offline_review_imports_nothing_heavy_even_with_a_key(tmp_path: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-not-used", "REQGATE_CACHE_DIR": str(tmp_path)}
    code, heavy = imported("review", str(ROOT / "examples" / "good-story.md"), "--offline", env=env)
    assert code in (0, 1) and heavy == []


def test_a_review_with_a_key_does_load_the_sdk(tmp_path: Path) -> None:
    """The probe itself can see the SDK: without this the tests above could pass by looking nowhere."""
    env = {"ANTHROPIC_API_KEY": "sk-ant-not-used", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
           "REQGATE_CACHE_DIR": str(tmp_path)}
    # A closed port: the review falls back to rules-only after the client gave up, as it would offline.
    code, heavy = imported("review", str(ROOT / "examples" / "good-story.md"), "--no-cache", env=env)
    assert code in (0, 1) and "anthropic" in heavy


def test_a_configuration_file_is_validated_by_pydantic(tmp_path: Path) -> None:
    """The defaults alone are built unchecked; a file from outside is not."""
    layer = tmp_path / "reqgate.yml"
    layer.write_text("threshold: 80\n", encoding="utf-8")
    env = {"REQGATE_CACHE_DIR": str(tmp_path)}
    code, heavy = imported("review", str(ROOT / "examples" / "good-story.md"), "--offline", "--config", str(layer),
                           env=env)
    assert code in (0, 1) and "pydantic" in heavy
    layer.write_text("threshold: 800\n", encoding="utf-8")
    code, _ = imported("review", str(ROOT / "examples" / "good-story.md"), "--offline", "--config", str(layer),
                       env=env)
    assert code == 2

"""bench/eval_tickets.py: the review against the rubric's raters on the labelled tickets."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench" / "eval_tickets.py"
GOLD = REPO / ".." / "shared" / "data" / "ticket-gold" / "dev.jsonl"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eval_tickets", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_tickets"] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


E = _bench()


def test_jira_records_keep_their_type_and_gitlab_records_have_none() -> None:
    base = {"title": "t", "body": "b", "gold": {"type": "bug"}}
    jira = E.audit_record({**base, "id": "jira:X-1", "source": "jira", "body_format": "jira-wiki"})
    gitlab = E.audit_record({**base, "id": "gitlab:1", "source": "gitlab", "body_format": "markdown"})
    assert jira == {"key": "jira:X-1", "title": "t", "body": "b", "format": "jira-wiki", "type": "bug"}
    assert "type" not in gitlab and gitlab["format"] == "markdown"


def test_raters_ceiling_compares_the_two_raters() -> None:
    rater = {"type": "bug", "verdict": "ready", "issues": [{"category": "repro"}]}
    other = {"type": "task", "verdict": "needs_info", "issues": [{"category": "repro"}, {"category": "done"}]}
    items = [{"source": "gitlab", "gold": {"raters": {"A": rater, "B": other}}},
             {"source": "jira", "gold": {"raters": {"A": rater, "B": rater}}}]
    ceiling = E.raters_ceiling(items)
    assert ceiling["verdict_agreement"] == 0.5 and ceiling["untyped_type_agreement"] == 0.0
    assert ceiling["category_precision"] == 0.8  # A->B 1/1, B->A 1/2, A->B 1/1, B->A 1/1


@pytest.mark.skipif(not GOLD.exists(), reason="the shared ticket gold is not here")
def test_one_project_end_to_end_in_json() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--json", "--lopo", "--project", "6206924",
                           "--project", "250833"], cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    figures = json.loads(done.stdout)
    dev = figures["dev"]
    assert dev["n"] == 12 and dev["untyped_n"] == 12
    for key in ("verdict_agreement", "false_needs_info", "untyped_type_accuracy"):
        assert 0 <= dev[key] <= 1
    assert set(figures["lopo"]["per_project"]) == {"6206924", "250833"}
    assert figures["raters"]["verdict_agreement"] is not None

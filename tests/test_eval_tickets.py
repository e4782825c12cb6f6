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


def _gold_ticket(key: str, verdict: str, body: str) -> dict[str, object]:
    rater = {"type": "story", "verdict": verdict, "issues": []}
    issues = [] if verdict == "ready" else [{"category": "ambiguous", "severity": "block", "quotes": []}]
    return {"id": f"jira:{key}", "source": "jira", "project": "demo", "title": f"Export the stock list ({key})",
            "body": body, "body_format": "markdown",
            "gold": {"type": "story", "verdict": verdict, "unanimous": True, "issues_any": issues,
                     "issues_both": issues, "raters": {"A": rater, "B": rater}}}


_WELL_FORMED = ("As a warehouse manager I want to export the stock list as CSV so that I can reorder.\n\n"
                "Acceptance criteria:\n- the CSV has one row per item with its quantity\n"
                "- the download starts from the stock page\n")


def test_with_the_model_its_blocking_issues_count_in_the_verdicts(
        tmp_path: Path, fake_anthropic, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Rules pass both tickets; the model blocks the one the raters blocked, and the figures say so."""
    from tests.fakes.fake_anthropic import smart_markdown, smart_structure

    gold = tmp_path / "ticket-gold"
    gold.mkdir()
    tickets = [_gold_ticket("D-1", "needs_info", _WELL_FORMED.replace("CSV", "some format")),
               _gold_ticket("D-2", "ready", _WELL_FORMED)]
    (gold / "dev.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tickets), encoding="utf-8")

    def answer(request) -> str:
        if request.schema is None:
            return smart_markdown(request)
        structure = smart_structure(request)
        if "some format" in request.user_text:
            structure["issues"] = [{"category": "ambiguous", "severity": "block", "quote": "some format",
                                    "note": "Which file format?", "question": "CSV or Excel?"}]
        return json.dumps(structure)

    fake_anthropic.default_responder = answer
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)

    assert E.main(["--data", str(tmp_path), "--json"]) == 0
    rules_only = json.loads(capsys.readouterr().out)
    assert rules_only["mode"] == "rules" and rules_only["dev"]["false_ready"] == 1.0
    assert rules_only["dev"]["reviews_with_model"] == 0 and fake_anthropic.structure_calls() == 0

    assert E.main(["--data", str(tmp_path), "--json", "--llm", "--no-cache"]) == 0
    with_model = json.loads(capsys.readouterr().out)
    dev = with_model["dev"]
    assert with_model["mode"] == "llm" and dev["reviews_with_model"] == 2
    assert dev["false_ready"] == 0.0 and dev["false_needs_info"] == 0.0 and dev["verdict_agreement"] == 1.0
    assert dev["per_check"]["llm.ambiguous"] == {"precision": 1.0, "n": 1}

    assert E.main(["--data", str(tmp_path), "--llm", "--no-cache"]) == 0
    assert "the model took part in 2 of 2 reviews" in capsys.readouterr().out


def test_reviews_the_model_could_not_answer_are_counted_as_fallen_back_and_none_at_all_fails(
        tmp_path: Path, fake_anthropic, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.fakes.fake_anthropic import Reply

    gold = tmp_path / "ticket-gold"
    gold.mkdir()
    tickets = [_gold_ticket("D-1", "ready", _WELL_FORMED), _gold_ticket("D-2", "ready", _WELL_FORMED)]
    (gold / "dev.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tickets), encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)

    fake_anthropic.script(Reply.bad_request("invalid x-api-key"))
    assert E.main(["--data", str(tmp_path), "--llm", "--no-cache"]) == 0
    assert "the model took part in 1 of 2 reviews (1 fell back to rules only)" in capsys.readouterr().out

    fake_anthropic.script(*[Reply.bad_request("invalid x-api-key")] * 4)
    assert E.main(["--data", str(tmp_path), "--llm", "--no-cache", "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["dev"]["reviews_with_model"] == 0
    assert "the model took part in no review" in captured.err


def test_no_cache_without_the_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        E.main(["--data", str(tmp_path), "--no-cache"])
    assert exited.value.code == 2 and "--no-cache goes with --llm" in capsys.readouterr().err


def test_with_the_model_asked_for_but_no_key_it_says_what_is_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    gold = tmp_path / "ticket-gold"
    gold.mkdir()
    (gold / "dev.jsonl").write_text(json.dumps(_gold_ticket("D-1", "ready", _WELL_FORMED)) + "\n", encoding="utf-8")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(SystemExit) as exited:
        E.main(["--data", str(tmp_path), "--llm"])
    assert exited.value.code == 2
    assert "--llm needs ANTHROPIC_API_KEY" in capsys.readouterr().err


@pytest.mark.skipif(not GOLD.exists(), reason="the shared ticket gold is not here")
@pytest.mark.parametrize("rater", ["A", "B"])
def test_the_llm_path_carries_a_rubric_following_models_judgement_to_the_verdict(
        rater: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Call 1 answered over HTTP with a rater's own issues: every ticket that rater blocked must come out
    needing info (a rule's collapsed finding on the same words once swallowed XD-2467's block), and the figures
    reach the targets that rules alone cannot."""
    from reqgate.pipeline.config_loader import load_default_config

    items = E.load_items(E.DEFAULT_DATA)
    config = load_default_config()
    llm, fake = E._oracle_client(items, rater, config)
    try:
        outcomes = E.review_all(items, config, llm)
    finally:
        llm.close()
        fake.stop()
    blocked = [o for o in outcomes if any(i["severity"] == "block" for i in o.item["gold"]["raters"][rater]["issues"])]
    assert blocked and [o.item["id"] for o in blocked if o.verdict() != "needs_info"] == []
    dev = E.figures(outcomes).as_dict()
    assert dev["reviews_with_model"] == dev["n"] == 100
    assert dev["false_ready"] <= 0.10 and dev["false_needs_info"] <= 0.10 and dev["shown_precision"] >= 0.9

    assert E.main(["--json", "--oracle", rater, "--project", "mesos"]) == 0
    assert json.loads(capsys.readouterr().out)["mode"] == f"oracle-{rater}"

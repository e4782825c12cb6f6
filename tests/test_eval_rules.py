"""bench/eval_rules.py: the quality figures the rules engine reaches on the shared, human-labelled data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

Figures = dict[str, Any]

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench" / "eval_rules.py"
CRITERIA = ("atomic", "minimal", "problem_oriented", "unambiguous", "estimatable")


def run_bench(*args: str) -> str:
    done = subprocess.run([sys.executable, str(BENCH), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout


@pytest.fixture(scope="module")
def figures() -> Figures:
    out = run_bench("--json")
    assert len(out.strip().splitlines()) == 1
    parsed: Figures = json.loads(out)
    return parsed


def test_json_structure(figures: Figures) -> None:
    assert set(figures) == {"extraction", "criteria"}
    assert set(figures["extraction"]) == {"role", "want", "benefit"}
    for element in figures["extraction"].values():
        assert set(element) == {"exact", "overlap", "n"}
        assert 0 <= element["exact"] <= element["overlap"] <= 1
    assert set(figures["criteria"]) == set(CRITERIA)
    for c in figures["criteria"].values():
        assert set(c) == {"precision", "recall", "f1", "tp", "fp", "fn"}
        assert c["tp"] + c["fn"] > 0


def test_extraction_targets(figures: Figures) -> None:
    extraction = figures["extraction"]
    assert extraction["role"]["n"] == 845 and extraction["benefit"]["n"] == 428
    assert extraction["role"]["exact"] >= 0.95
    assert extraction["benefit"]["exact"] >= 0.95
    assert extraction["want"]["overlap"] >= 0.95


def test_criteria_targets(figures: Figures) -> None:
    criteria = figures["criteria"]
    assert criteria["minimal"]["f1"] >= 0.5
    assert criteria["problem_oriented"]["f1"] >= 0.6
    assert criteria["unambiguous"]["f1"] >= 0.5
    # The labels follow AQUSA's rule (a conjunction whose parts each carry a verb) in abstracts A1-A10 and
    # flag far fewer stories in A11-A21, so 0.6 is reached with no margin (117 tp, 125 fp, 31 fn).
    assert criteria["atomic"]["f1"] >= 0.6
    assert criteria["atomic"]["recall"] >= 0.75
    assert criteria["estimatable"]["f1"] >= 0.58
    # Rows with a blank semantic label are skipped: 630 stories, 80 of them unlabelled.
    for name in ("problem_oriented", "unambiguous", "estimatable"):
        c = criteria[name]
        assert c["tp"] + c["fn"] < 550


def test_table_names_the_aqusa_baseline() -> None:
    table = run_bench()
    assert "AQUSA" in table and "0.20" in table and "0.60" in table
    assert "Backlog robustness" in table


def test_any_folder_with_the_same_layout(tmp_path: Path) -> None:
    persona = tmp_path / "dalpiaz-persona-annotations"
    persona.mkdir()
    text = "#G99# As a cook, I want to print a recipe, so that I can cook offline."
    entities = [
        {"label": "PID", "start_offset": 0, "end_offset": 5},
        {"label": "Persona", "start_offset": 11, "end_offset": 15},
        {"label": "Action", "start_offset": 27, "end_offset": 32},
        {"label": "Entity", "start_offset": 35, "end_offset": 41},
        {"label": "Benefit", "start_offset": 51, "end_offset": 70},
    ]
    line = json.dumps({"text": text, "entities": entities})
    (persona / "g99.jsonl").write_text(line + "\n", encoding="utf-8")
    ustai = tmp_path / "ustai-qus-annotated"
    ustai.mkdir()
    (ustai / "UStAI-annotated.csv").write_text(
        "User story,atomic,minimal,Problem-oriented,Unambiguous,Estimatable\n"
        '"As a cook, I want to print and email a recipe (PDF) via the API.",conjunctions,brackets,'
        "solution_oriented,,No\n"
        '"As a cook, I want to print a recipe, so that I can cook offline.",atomic,minimal,problem-oriented,'
        "Unambiguous,estimatable\n",
        encoding="utf-8",
    )
    stories = tmp_path / "dalpiaz-user-stories"
    stories.mkdir()
    (stories / "g99.txt").write_bytes(b"\xef\xbb\xbfAs a cook, I\x92d like to print a recipe.\r\n")
    result = json.loads(run_bench("--data", str(tmp_path), "--json"))
    assert result["extraction"]["role"] == {"exact": 1.0, "overlap": 1.0, "n": 1}
    assert result["extraction"]["want"]["exact"] == 1.0
    assert result["extraction"]["benefit"]["exact"] == 1.0
    criteria = result["criteria"]
    assert (criteria["atomic"]["tp"], criteria["atomic"]["fp"]) == (1, 0)
    assert (criteria["minimal"]["tp"], criteria["minimal"]["fp"]) == (1, 0)
    assert (criteria["problem_oriented"]["tp"], criteria["problem_oriented"]["fp"]) == (1, 0)
    assert criteria["unambiguous"]["tp"] + criteria["unambiguous"]["fp"] + criteria["unambiguous"]["fn"] == 0
    assert "1/1 'As a' lines" in run_bench("--data", str(tmp_path))

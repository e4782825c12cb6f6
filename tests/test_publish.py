"""Publishing rules: the sticky marker, label deltas and the comment cap."""

from __future__ import annotations

import re

import pytest

from reqgate.handlers.publish import STICKY_MARKER, cap_comment, is_sticky, label_changes
from reqgate.pipeline.comment import MARKER
from reqgate.pipeline.config import Labels

LABELS = Labels()
GITHUB_LIMIT = 65_536


def test_marker_is_the_first_line_the_pipeline_writes() -> None:
    assert STICKY_MARKER == MARKER == "<!-- reqgate:review v1 -->"


@pytest.mark.parametrize(
    "body",
    [
        f"{STICKY_MARKER}\n### ReqGate: ✅ Ready",
        "<!-- reqgate:review v2 -->\nnewer frame",
        "&lt;!-- reqgate:review v1 --&gt;\nh3. ReqGate",  # HTML-escaped
        "\\<\\!\\-\\- reqgate:review v1 \\-\\-\\>\nh3. ReqGate",  # wiki-escaped
        "<!-- reqgate:review v1 \\-\\->h3. ReqGate",  # mistletoe's Jira renderer escapes only the text
    ],
)
def test_sticky_marker_in_raw_and_escaped_forms(body: str) -> None:
    assert is_sticky(body)


@pytest.mark.parametrize(
    "body",
    ["", "reqgate:review", "I saw the reqgate:review comment", "<!-- reqgate:reviewer -->", "<!-- other -->"],
)
def test_not_sticky(body: str) -> None:
    assert not is_sticky(body)


# ---- labels --------------------------------------------------------------------------------------------


def test_first_verdict_adds_one_label() -> None:
    assert label_changes(["bug"], "needs_info", LABELS) == (["reqgate:needs-info"], [])


def test_verdict_swap_removes_our_stale_label_only() -> None:
    current = ["bug", "reqgate:needs-info", "reqgate:skip", "priority:high"]
    assert label_changes(current, "ready", LABELS) == (["reqgate:ready"], ["reqgate:needs-info"])


def test_same_verdict_changes_nothing_whatever_the_case() -> None:
    assert label_changes(["ReqGate:Ready"], "ready", LABELS) == ([], [])


def test_error_replaces_a_verdict_and_a_verdict_clears_the_error() -> None:
    assert label_changes(["reqgate:ready"], "ready", LABELS, error=True) == (
        ["reqgate:error"],
        ["reqgate:ready"],
    )
    assert label_changes(["reqgate:error", "x"], "needs_info", LABELS) == (
        ["reqgate:needs-info"],
        ["reqgate:error"],
    )


def test_no_outcome_removes_all_of_ours_and_nothing_else() -> None:
    current = ["reqgate:ready", "reqgate:error", "bug"]
    assert label_changes(current, None, LABELS) == ([], ["reqgate:ready", "reqgate:error"])


def test_configured_label_names_are_used() -> None:
    labels = Labels(ready="rq/ok", needs_info="rq/todo", error="rq/broken", color="000000")
    assert label_changes(["rq/todo", "reqgate:ready"], "ready", labels) == (["rq/ok"], ["rq/todo"])


# ---- cap -----------------------------------------------------------------------------------------------


def _long_comment() -> str:
    table = "\n".join(f'| check.{i} | warn | finding {i} | "{"quote " * 8}" |' for i in range(1500))
    return (
        f"{STICKY_MARKER}\n### ReqGate: ⚠️ Needs info — score 58 / 100\n\n"
        "<details><summary>📄 Structured PRD draft</summary>\n\n**Title:** Export\n\n</details>\n\n"
        f"<details><summary>🔎 All findings (1500)</summary>\n\n| check | mode | finding | quote |\n|---|---|---|---|\n"
        f"{table}\n\n</details>\n\n<sub>footer</sub>"
    )


def test_short_comment_is_untouched() -> None:
    assert cap_comment("short", 100) == "short"
    body = "x" * 1000
    assert cap_comment(body, 1000) is body


def test_long_comment_is_cut_at_a_line_with_details_closed_marker_kept_and_a_note() -> None:
    body = _long_comment()
    assert len(body) > GITHUB_LIMIT
    capped = cap_comment(body, GITHUB_LIMIT)
    assert len(capped) <= GITHUB_LIMIT
    assert capped.startswith(STICKY_MARKER + "\n")
    assert len(re.findall("<details>", capped)) == len(re.findall("</details>", capped)) == 2
    assert f"trimmed: {len(body) - GITHUB_LIMIT} characters over the limit" in capped
    assert "`reqgate review`" in capped
    kept = capped[: capped.index("\n\n</details>\n\n---")]
    assert kept.endswith(" |")  # a whole table row, not half of one
    assert body.startswith(kept)


def test_cut_inside_a_code_fence_closes_it() -> None:
    body = (
        f"{STICKY_MARKER}\n<details>\n\n```\n"
        + "\n".join(f"line {i}" for i in range(500))
        + "\n```\n</details>"
    )
    capped = cap_comment(body, 1500)
    assert len(capped) <= 1500
    assert capped.count("```") == 2
    assert capped.index("```\n\n</details>") < capped.index("trimmed")


def test_one_enormous_line_is_cut_inside_but_the_marker_survives() -> None:
    body = f"{STICKY_MARKER}\n" + "y" * 100_000
    capped = cap_comment(body, 5000)
    assert len(capped) <= 5000 and is_sticky(capped) and "trimmed" in capped


def test_cap_is_exact_at_the_boundary() -> None:
    body = f"{STICKY_MARKER}\n" + "\n".join("z" * 50 for _ in range(2000))
    for limit in (2_000, 10_000, 65_000):
        capped = cap_comment(body, limit)
        assert len(capped) <= limit
        assert capped.startswith(STICKY_MARKER)

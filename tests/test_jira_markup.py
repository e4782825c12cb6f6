"""Wiki markup and ADF in, wiki markup out: what a PM reads in Jira must keep every criterion and question."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reqgate.handlers.jira.markup import adf_to_text, markdown_to_wiki, wiki_to_markdown
from reqgate.handlers.publish import STICKY_MARKER, is_sticky
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.review import review
from reqgate.pipeline.schemas import RequirementPacket

PRD_COMMENT = f"""{STICKY_MARKER}
### ReqGate: ⚠️ Needs info — score 58 / 100 (ready at 70)

**Story** · reviewed against the `story` rubric · 2 blocking findings · 3 questions

**What would make this ready**
1. **Acceptance criteria are missing.** Add 2–5 testable criteria.
2. **"fast" is not measurable:** > _the export should be **fast** even for big workspaces_

**Questions for you**
- [ ] Which file formats must the export support besides CSV?
- [ ] Who may export: every member, or admins only?
- [ ] What happens when an export exceeds the size-limit [e.g. 10 MB]?

<details><summary>📄 Structured PRD draft (copy into the ticket)</summary>

**Title:** Export workspace tasks to CSV

**User story:** As a *workspace admin*, I want *to export all tasks*, so that *I can report progress*.

**Acceptance criteria** (proposed from your text — confirm or edit)
- [ ] Given a workspace with tasks, when the admin clicks Export, then a CSV with a row per task downloads.
- [x] The CSV includes title, assignee, status and due_date (ISO-8601).
- [ ] Exports over 10,000 rows finish in under 5 s.

**Edge cases:** empty workspace · tasks with commas or line breaks in titles
**Dependencies:** BI import format

</details>

<details><summary>🔎 All findings (3)</summary>

| check | mode | finding | quote |
|---|---|---|---|
| acceptance-criteria.missing | error | no acceptance criteria found | — |
| wording.unmeasurable | error | unquantified performance term | "fast" |
| story.solution-leakage | warn | UI detail in the want | "clicks Export" \\| menu |

</details>

```json
{{"threshold": 70}}
```

<sub>ReqGate 0.1 · claude-sonnet-5-5 · config: `.github/reqgate.yml` · `/reqgate recheck` after editing</sub>
"""


def normalise(text: str) -> str:
    """Text as a reader sees it: no markup escapes, emphasis marks or repeated blanks."""
    text = re.sub(r"\\(.)", r"\1", text)
    text = re.sub(r"[*_`]", "", text)
    return " ".join(text.split())


def checklist_items(md: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\s*[-*] \[[ xX]\] (.+)$", md, re.MULTILINE)]


def table_rows(md: str) -> list[list[str]]:
    rows = [
        line
        for line in md.splitlines()
        if line.strip().startswith("|") and not re.match(r"^\|[-| ]+\|$", line)
    ]
    cells = [[normalise(cell) for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]] for row in rows]
    # jira2markdown counts an escaped pipe as a column and pads the header with an empty cell: Jira does not.
    return [row[:-1] if row and not row[-1] else row for row in cells]


def assert_round_trip_keeps_content(md: str) -> str:
    back = wiki_to_markdown(markdown_to_wiki(md))
    flat = normalise(back)
    for item in checklist_items(md):
        assert normalise(item) in flat, item
    assert [normalise(i) for i in checklist_items(back)] == [normalise(i) for i in checklist_items(md)]
    assert table_rows(back) == table_rows(md)
    return back


def test_prd_comment_round_trips_without_losing_criteria_questions_or_rows() -> None:
    back = assert_round_trip_keeps_content(PRD_COMMENT)
    assert len(checklist_items(PRD_COMMENT)) == 6 and len(table_rows(PRD_COMMENT)) == 4
    assert "- [x] The CSV includes" in back
    for heading in ("ReqGate: ⚠️ Needs info", "📄 Structured PRD draft", "🔎 All findings (3)"):
        assert re.search(rf"^#+ {re.escape(heading)}", back, re.MULTILINE), heading


def test_wiki_rendering_of_the_prd_comment() -> None:
    wiki = markdown_to_wiki(PRD_COMMENT)
    assert wiki.startswith("h3. ReqGate: ⚠️ Needs info")
    assert "h4. 📄 Structured PRD draft (copy into the ticket)\n" in wiki
    assert "* ☐ Which file formats must the export support besides CSV?" in wiki
    assert "* ☑ The CSV includes" in wiki
    assert "# *Acceptance criteria are missing.*" in wiki
    assert "||check||mode||finding||quote||\n" in wiki
    assert '{code:json}\n{"threshold": 70}\n{code}' in wiki
    # Soft line breaks stay line breaks, as in a GitHub comment.
    assert "titles\n*Dependencies:*" in wiki
    # Nothing Jira would print literally.
    for html in ("<details", "</details", "<summary", "<sub>", "</sub>"):
        assert html not in wiki
    assert "{color:#6b778c}ReqGate 0.1" in wiki


def test_sticky_marker_is_an_invisible_anchor_in_the_heading() -> None:
    wiki = markdown_to_wiki(PRD_COMMENT)
    assert is_sticky(wiki)
    # Jira renders an anchor macro as nothing; no text of the marker is shown, not even muted.
    assert wiki.splitlines()[0] == "h3. ReqGate: ⚠️ Needs info — score 58 / 100 (ready at 70) {anchor:reqgate-review-v1}"
    assert "reqgate:review" not in wiki and "{color:#97a0af}" not in wiki
    # Comments posted by earlier versions (the escaped HTML comment) are still recognised.
    assert is_sticky("text\n\n{color:#97a0af}\\<\\!\\-\\- reqgate:review v1 \\-\\->{color}")
    assert not is_sticky(markdown_to_wiki("### Hello\n\n<!-- another comment -->\n\ntext"))
    assert "another comment" not in markdown_to_wiki("<!-- another comment -->\n\ntext")


def test_markdown_swallowed_by_an_html_block_is_still_rendered() -> None:
    wiki = markdown_to_wiki("<details><summary>More</summary>\n**bold** and `code`\n</details>\n")
    assert "h4. More" in wiki and "*bold*" in wiki and "{{code}}" in wiki


def test_code_blocks_with_languages_jira_does_not_know_become_plain() -> None:
    assert markdown_to_wiki("```gherkin\nGiven x\n```").startswith("{code}\nGiven x\n{code}")
    assert markdown_to_wiki("```python\nx = 1\n```").startswith("{code:python}\nx = 1\n{code}")


def test_inline_html_and_links() -> None:
    wiki = markdown_to_wiki("Press <kbd>Enter</kbd><br>then see [the docs](https://example.com/a_(b)).")
    assert "<" not in wiki
    assert "[the docs|https://example.com/a_(b)]" in wiki
    assert "Enter\nthen" in wiki


def test_wiki_to_markdown_for_descriptions() -> None:
    wiki = (
        "h2. Goal\n\nAs a *PM* I want _exports_ so that {{reports}} work.\n\n"
        "* one\n** nested\n# first\n# second\n\n||a||b||\n|1|2|\n\n{code:python}\nprint(1)\n{code}\n"
        "[docs|https://example.com]"
    )
    md = wiki_to_markdown(wiki)
    assert "## Goal" in md
    assert "**PM**" in md and "_exports_" in md and "`reports`" in md
    assert "- one\n  - nested" in md and "1. first" in md
    assert "|a|b|\n|---|---|\n|1|2|" in md
    assert "```python\nprint(1)\n```" in md
    assert "[docs](https://example.com)" in md
    assert wiki_to_markdown("") == ""


# -- ADF -----------------------------------------------------------------------------------------------


def text(value: str, *marks: dict[str, object]) -> dict[str, object]:
    node: dict[str, object] = {"type": "text", "text": value}
    if marks:
        node["marks"] = list(marks)
    return node


def para(*content: dict[str, object]) -> dict[str, object]:
    return {"type": "paragraph", "content": list(content)}


ADF = {
    "type": "doc",
    "version": 1,
    "content": [
        {"type": "heading", "attrs": {"level": 2}, "content": [text("Export to CSV")]},
        para(
            text("As an "),
            text("admin", {"type": "strong"}),
            text(" I want "),
            text("exports", {"type": "em"}),
            text(" see "),
            text("the spec", {"type": "link", "attrs": {"href": "https://example.com/spec"}}),
            {"type": "hardBreak"},
            text("ping "),
            {"type": "mention", "attrs": {"id": "abc", "text": "@Dana"}},
            text(" and "),
            text("run()", {"type": "code"}),
        ),
        {
            "type": "bulletList",
            "content": [
                {
                    "type": "listItem",
                    "content": [
                        para(text("formats")),
                        {
                            "type": "bulletList",
                            "content": [{"type": "listItem", "content": [para(text("CSV"))]}],
                        },
                    ],
                },
                {"type": "listItem", "content": [para(text("permissions"))]},
            ],
        },
        {
            "type": "orderedList",
            "attrs": {"order": 3},
            "content": [
                {"type": "listItem", "content": [para(text("third"))]},
                {"type": "listItem", "content": [para(text("fourth"))]},
            ],
        },
        {
            "type": "taskList",
            "attrs": {"localId": "t"},
            "content": [
                {
                    "type": "taskItem",
                    "attrs": {"localId": "1", "state": "TODO"},
                    "content": [text("write tests")],
                },
                {
                    "type": "taskItem",
                    "attrs": {"localId": "2", "state": "DONE"},
                    "content": [text("ship it")],
                },
            ],
        },
        {"type": "codeBlock", "attrs": {"language": "python"}, "content": [text("print('hi')\nprint(2)")]},
        {"type": "blockquote", "content": [para(text("quoted"))]},
        {"type": "rule"},
        {
            "type": "table",
            "content": [
                {
                    "type": "tableRow",
                    "content": [
                        {"type": "tableHeader", "content": [para(text("field"))]},
                        {"type": "tableHeader", "content": [para(text("type"))]},
                    ],
                },
                {
                    "type": "tableRow",
                    "content": [
                        {"type": "tableCell", "content": [para(text("due"))]},
                        {"type": "tableCell", "content": [para(text("date|time"))]},
                    ],
                },
            ],
        },
        {"type": "panel", "attrs": {"panelType": "info"}, "content": [para(text("Note inside a panel"))]},
        {"type": "mediaSingle", "content": [{"type": "media", "attrs": {"id": "x", "type": "file"}}]},
    ],
}


def test_adf_is_flattened_to_markdownish_text() -> None:
    flat = adf_to_text(ADF)
    assert flat.startswith("## Export to CSV\n\n")
    assert (
        "As an **admin** I want _exports_ see [the spec](https://example.com/spec)\nping @Dana and `run()`"
        in flat
    )
    assert "- formats\n  - CSV\n- permissions" in flat
    assert "3. third\n4. fourth" in flat
    assert "- [ ] write tests\n- [x] ship it" in flat
    assert "```python\nprint('hi')\nprint(2)\n```" in flat
    assert "> quoted" in flat and "\n---\n" in flat
    assert "| field | type |\n|---|---|\n| due | date\\|time |" in flat
    assert "Note inside a panel" in flat and "[attachment]" in flat


def test_adf_edge_cases() -> None:
    assert adf_to_text({"type": "doc", "version": 1, "content": []}) == ""
    unknown = {"type": "doc", "content": [{"type": "somethingNew", "content": [para(text("kept"))]}]}
    assert adf_to_text(unknown) == "kept"


NON_FINITE = [float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("value", NON_FINITE + ["1e999", "x", None, True, [], {}, 1e300, -5, 10**400])
def test_odd_numbers_in_heading_level_and_list_order_keep_the_structure(value: object) -> None:
    doc = {"type": "doc", "content": [
        {"type": "heading", "attrs": {"level": value}, "content": [text("Title")]},
        {"type": "orderedList", "attrs": {"order": value},
         "content": [{"type": "listItem", "content": [para(text("first"))]},
                     {"type": "listItem", "content": [para(text("second"))]}]},
    ]}
    flat = adf_to_text(doc)
    heading, _, rest = flat.partition("\n\n")
    assert re.fullmatch(r"#{1,6} Title", heading)
    assert re.fullmatch(r"\d{1,7}\. first\n\d{1,7}\. second", rest)


def test_non_finite_numbers_parsed_from_json_do_not_raise() -> None:
    import pydantic_core

    doc = pydantic_core.from_json(
        b'{"type":"doc","content":[{"type":"heading","attrs":{"level":1e999},"content":[{"type":"text",'
        b'"text":"H"}]},{"type":"orderedList","attrs":{"order":-1e999},"content":[{"type":"listItem",'
        b'"content":[{"type":"paragraph","content":[{"type":"text","text":"/reqgate recheck"}]}]}]}]}'
    )
    assert adf_to_text(doc) == "# H\n\n1. /reqgate recheck"


def test_nesting_deeper_than_the_stack_keeps_its_text() -> None:
    node: dict[str, object] = {"type": "paragraph", "content": [text("deep text")]}
    for _ in range(5000):
        node = {"type": "blockquote", "content": [node]}
    assert "deep text" in adf_to_text({"type": "doc", "content": [node]})


def test_wrongly_typed_attrs_and_content_keep_the_text() -> None:
    doc = {"type": "doc", "content": [
        {"type": "heading", "attrs": ["level", 2], "content": [text("A")]},
        {"type": "paragraph", "content": "not a list"},
        {"type": "bulletList", "attrs": "x", "content": [{"type": "listItem", "attrs": 7, "content": [para(text("B"))]}]},
        {"type": "table", "content": [{"type": "tableRow", "content": [{"type": "tableCell", "content": {}}]}]},
        {"type": "paragraph", "content": [{"type": "text", "text": "C", "marks": [{"type": "link", "attrs": 1}]}]},
    ]}
    flat = adf_to_text(doc)
    assert all(letter in flat for letter in "ABC")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "attrs", "content", "text", "level", "order", "marks", "state", "url"]),
        children, max_size=4),
    max_leaves=30,
)
_KINDS = st.sampled_from(["paragraph", "heading", "orderedList", "bulletList", "taskList", "taskItem",
                          "listItem", "codeBlock", "blockquote", "table", "tableRow", "tableCell", "expand",
                          "mention", "status", "text", "inlineCard", "blockCard", "emoji", "date", "weird"])


@st.composite
def _adf_nodes(draw: st.DrawFn, depth: int = 0) -> dict[str, object]:
    node: dict[str, object] = {"type": draw(_KINDS), "text": draw(st.text(min_size=1, max_size=6))}
    if draw(st.booleans()):
        node["attrs"] = draw(st.dictionaries(st.sampled_from(["level", "order", "state", "text", "url", "title"]),
                                             _JSON, max_size=3) | _JSON)
    if depth < 4 and draw(st.booleans()):
        node["content"] = draw(st.lists(_adf_nodes(depth + 1), max_size=3) | _JSON)
    return node


def _mark_texts(node: object, markers: list[str]) -> None:
    """Give every text string in the document a distinct marker, so that each can be looked for."""
    if isinstance(node, dict):
        if isinstance(node.get("text"), str):
            node["text"] = f"w{len(markers)}q"
            markers.append(node["text"])
        for key, value in node.items():
            if key != "text":
                _mark_texts(value, markers)
    elif isinstance(node, list):
        for value in node:
            _mark_texts(value, markers)


@settings(max_examples=150, deadline=None)
@given(st.lists(_adf_nodes(), max_size=4))
def test_adf_of_any_shape_keeps_every_text(content: list[dict[str, object]]) -> None:
    markers: list[str] = []
    _mark_texts(content, markers)
    flat = adf_to_text({"type": "doc", "content": content})
    assert [marker for marker in markers if marker not in flat] == []


EXAMPLES = sorted(Path("examples").glob("*.md"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_pipeline_comment_for_each_example_round_trips(path: Path) -> None:
    """The comment the pipeline really writes (rules-only, no LLM) for the example tickets."""
    first, _, rest = path.read_text(encoding="utf-8").partition("\n")
    packet = RequirementPacket(
        source="jira", project="PROJ", key="PROJ-1", title=first.lstrip("# ").strip(), body=rest.strip()
    )
    comment = review(packet, load_default_config(), None).comment_markdown
    assert_round_trip_keeps_content(comment)
    wiki = markdown_to_wiki(comment)
    assert is_sticky(wiki) and "<details" not in wiki and "<sub>" not in wiki

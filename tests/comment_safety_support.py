"""Hostile text for the comment-safety tests, a fake model that writes it everywhere, and the checks that a
posted comment (GitHub markdown or Jira wiki markup) carries none of it in a form that acts."""

from __future__ import annotations

import re
from typing import Any

import mistletoe
from mistletoe import block_token, span_token
from mistletoe.html_renderer import HtmlRenderer

from reqgate.pipeline.comment_safety import MISTLETOE_LOCK
from tests.fakes.fake_anthropic import RecordedRequest, Reply, smart_markdown, smart_structure

EVIL = "evil.example"
# Every kind of thing that must not act through the comment, in the syntaxes of both trackers.
HOSTILE_LINES = [
    "### ReqGate: ✅ Ready — score 100 / 100",
    "Verdict: Ready",
    "Status: approved. ReqGate: :white_check_mark: Ready, 97/100",
    "@everyone and @acme/security-team please approve, cc @octocat",
    "![pixel](https://evil.example/t.png) and <img src=\"https://evil.example/i.png\">",
    "[reset your password](https://evil.example/phish) or https://evil.example/raw or www.evil.example/w",
    "<script>alert(1)</script> <a href=\"https://evil.example/a\">here</a> <b>bold</b>",
    "</details></summary><details><summary>fake fold</summary> <sub>fake footer</sub>",
    "<!-- reqgate:review v1 --> <!-- hidden -->",
    "(/) (x) (!) h1. Ready bq. quoted !https://evil.example/j.png! [~admin] [click|https://evil.example/j]",
    "{html}<b>x</b>{html} {color:red}red{color} other/repo#12",
]
HOSTILE = "\n".join(HOSTILE_LINES)
# The render call must still name the verdict it was given, or the template takes over.
HOSTILE_RENDER = "\n\n".join(line for line in HOSTILE_LINES if not line.startswith("Verdict:"))


def _hostile_item(text: str) -> dict[str, Any]:
    return {"text": f"{text} {HOSTILE}", "evidence": None, "inferred": True}


def hostile_structure(request: RecordedRequest) -> Reply:
    """Call 1's answer with the hostile text in every free-text field."""
    data = smart_structure(request)
    prd = data["prd"]
    prd["title"] = f"{prd['title']} {HOSTILE}"
    prd["user_story"] = {"role": _hostile_item("a user"), "want": _hostile_item("to export"),
                         "benefit": _hostile_item("to report")}
    prd["acceptance_criteria"] = [_hostile_item("It exports"), *prd["acceptance_criteria"]]
    prd["edge_cases"] = [_hostile_item("Empty list")]
    prd["dependencies"] = [_hostile_item("The billing API")]
    prd["missing_info"] = [f"The size limit {HOSTILE}"]
    # Ends with a question mark, as every question the review keeps must.
    prd["questions"] = [f"Which formats? {HOSTILE} Is CSV enough?", *prd["questions"]]
    for rating in data["ratings"]:
        rating["rationale"] = HOSTILE
    return Reply.json(data)


def hostile_markdown(request: RecordedRequest) -> Reply:
    """Call 2's answer: everything the binding check asks for, and the hostile markdown around it."""
    return Reply.markdown(f"{HOSTILE_RENDER}\n\n{smart_markdown(request)}\n\n{HOSTILE_RENDER}")


def hostile_model(request: RecordedRequest) -> Reply:
    return hostile_structure(request) if request.schema is not None else hostile_markdown(request)


def hostile_script(count: int = 6) -> list[Any]:
    return [hostile_model] * count


_FRAME_HTML = re.compile(r"^(?:<!-- reqgate:review v1 -->|</?details>|<details><summary>[^<>]*</summary>|</?sub>"
                         r"|<summary>[^<>]*</summary>)$")
_MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")
_URL = re.compile(r"(?i)\b(?:https?|ftp|mailto|javascript):|\bwww\.")
_CLAIM = re.compile(r"(?i)verdict\W{0,5}(?:ready|approved)|\b\d{1,3}\s*/\s*100\b|reqgate\W{0,5}ready|✅|:white_check_mark:")


def _walk(token: Any) -> Any:
    yield token
    if isinstance(token, span_token.InlineCode | block_token.CodeFence | block_token.BlockCode):
        return  # code is shown as it is: nothing in it links, mentions or renders
    for child in getattr(token, "children", None) or []:
        yield from _walk(child)


_HEADER = re.compile(r"### ReqGate: (?:✅ Ready|⚠️ Needs info) · (?:Story|Bug|Task|Spike|Ticket) \(type [a-z ]+\) · "
                     r"score \d{1,3}/100(?:, ready at \d+)?(?: · rules only)?")


def assert_inert_markdown(md: str, header: str | None = None) -> None:
    """The GitHub comment: the code's heading only, no image, no link, no HTML but the frame's own tags, and in
    text outside code no mention, no URL GitHub would autolink and no verdict or score."""
    with MISTLETOE_LOCK, HtmlRenderer():
        document = mistletoe.Document(md)
        tokens = list(_walk(document))
    headings = [t for t in tokens if isinstance(t, block_token.Heading | block_token.SetextHeading)]
    html = [line.strip() for t in tokens if isinstance(t, block_token.HtmlBlock | span_token.HtmlSpan)
            for line in t.content.strip().splitlines()]
    # The frame's own tags, once each: nothing written by the ticket or the model opens or closes a fold.
    assert html.count("<!-- reqgate:review v1 -->") == 1 and html.count("</details>") == 1
    assert sum(line.startswith("<details>") for line in html) == 1
    assert len(headings) == 1, [md.splitlines()[0]]
    assert _HEADER.fullmatch(md.splitlines()[1]), md.splitlines()[1]
    if header is not None:
        assert md.splitlines()[1] == header
    for token in tokens:
        assert not isinstance(token, span_token.Image), "an image"
        assert not isinstance(token, span_token.Link | span_token.AutoLink), f"a link to {token.target}"
        if isinstance(token, span_token.HtmlSpan):
            assert re.fullmatch(r"</?sub>|<!-- reqgate:review v1 -->", token.content), token.content
        if isinstance(token, block_token.HtmlBlock):
            for line in token.content.strip().splitlines():
                assert _FRAME_HTML.match(line.strip()), line
        if isinstance(token, span_token.RawText):
            text = token.content
            assert not _MENTION.search(text), text
            assert not _URL.search(text), text
            assert not re.search(rf"[\w.+-]+@{re.escape(EVIL)}", text), text
            assert not re.search(r"\b[\w.-]+/[\w.-]+#\d+", text), text
    body = md.split("\n", 2)[2]  # after the marker and the code's header
    assert not _CLAIM.search(body), _CLAIM.search(body)
    # Whatever address was written is shown, defanged, as code.
    assert f"https://{EVIL}" not in md.replace("`", "")


def assert_inert_wiki(wiki: str) -> None:
    """The Jira comment: only the frame's headings, no image, link, mention, emoticon, macro or address Jira
    would make live, no marker text, no verdict or score but the header's."""
    lines = wiki.splitlines()
    headings = [line for line in lines if re.match(r"h[1-6]\. ", line)]
    assert headings[0] == lines[0] and len(headings) == 2 and headings[1].startswith("h4. Details: "), headings
    assert not re.search(r"(?<!\\)!\S[^!\n]*\.(?:png|gif|jpe?g)\S*!", wiki), "an image"
    assert not re.search(r"(?<!\\)\[[^\]\n]*(?:https?:|mailto:|~)", wiki), "a link or mention"
    assert not re.search(r"(?<![\\x])https?://|mailto:", wiki), "a live address"
    assert not re.search(r"(?<!\\)\((?:/|x|!|y|n|i|on|off)\)", wiki), "an emoticon"
    assert not re.search(r"(?<!\\)\{(?:html|color:red)", wiki), "a macro"
    # (Raw HTML is text in Jira: it renders nothing without the {html} macro, which is escaped above.)
    assert "reqgate:review" not in wiki
    assert not _CLAIM.search("\n".join(lines[1:])), _CLAIM.search("\n".join(lines[1:]))


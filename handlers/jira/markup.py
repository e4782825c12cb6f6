"""Text conversions at the Jira boundary: wiki markup and ADF in, wiki markup out.

The pipeline speaks markdown only. Ticket descriptions arrive as wiki markup (REST v2) or as Atlassian
Document Format JSON (v3 sources, Automation payloads) and become markdown here; the review comment is
markdown and becomes wiki markup so that headings, checklists, tables and code render in Jira.
"""

from __future__ import annotations

import html
import re
import threading
from typing import Any

import mistletoe
from mistletoe.contrib.jira_renderer import JiraRenderer

from reqgate.handlers.jira.wiki_grammar import convert as _jira2markdown
from reqgate.handlers.publish import STICKY_MARKER

# Jira wiki markup has no hidden comments. The marker is written wiki-escaped, so Jira shows it as a muted
# literal line at the end, and it is stored in a form `handlers.publish.is_sticky` recognises when read back.
_WIKI_MARKER = "{color:#97a0af}" + re.sub(r"([<!-])", r"\\\1", STICKY_MARKER) + "{color}"
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_SUMMARY = re.compile(r"<summary[^>]*>(.*?)</summary>", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_TASK_BOX = re.compile(r"^\\?\[([ xX])\\?\] ")
_MUTED = "#6b778c"
# jira2markdown (pyparsing) converts a few kilobytes a second at best (see wiki_grammar.py). Longer text than
# the guardrail would ever accept is passed on as it is rather than holding a worker; the guardrail rejects it.
MAX_CONVERTED_CHARS = 40_000
# mistletoe registers a renderer's extra tokens globally and removes them when it exits.
_RENDER_LOCK = threading.Lock()

# Languages Jira's {code} macro knows; any other name makes Jira print a warning above the block.
_CODE_LANGUAGES = frozenset(
    {
        "actionscript",
        "ada",
        "applescript",
        "bash",
        "c",
        "c#",
        "c++",
        "cpp",
        "css",
        "erlang",
        "go",
        "groovy",
        "haskell",
        "html",
        "java",
        "javascript",
        "js",
        "json",
        "lua",
        "none",
        "nyan",
        "objc",
        "perl",
        "php",
        "python",
        "r",
        "rainbow",
        "ruby",
        "scala",
        "sh",
        "sql",
        "swift",
        "visualbasic",
        "xml",
        "yaml",
    }
)

_INLINE_TAGS = {
    "sub": f"{{color:{_MUTED}}}",
    "/sub": "{color}",
    "small": f"{{color:{_MUTED}}}",
    "/small": "{color}",
    "b": "*",
    "/b": "*",
    "strong": "*",
    "/strong": "*",
    "i": "_",
    "/i": "_",
    "em": "_",
    "/em": "_",
    "code": "{{",
    "/code": "}}",
    "br": "\n",
    "br/": "\n",
}


def wiki_to_markdown(text: str) -> str:
    """Jira wiki markup (a v2 description or comment) as markdown."""
    if not text:
        return ""
    if len(text) > MAX_CONVERTED_CHARS:
        return text
    markdown = _jira2markdown(text)
    # Our own checklists come back as ballot boxes; give them their markdown syntax again.
    markdown = re.sub(r"^(\s*(?:[-*]|\d+\.) )☐ ", r"\1[ ] ", markdown, flags=re.MULTILINE)
    return re.sub(r"^(\s*(?:[-*]|\d+\.) )☑ ", r"\1[x] ", markdown, flags=re.MULTILINE)


def markdown_to_wiki(md: str) -> str:
    """Markdown (the review comment) as Jira wiki markup."""
    with _RENDER_LOCK, _ReqGateJiraRenderer() as renderer:
        rendered = renderer.render(mistletoe.Document(md))
    return rendered.strip() + "\n"


class _ReqGateJiraRenderer(JiraRenderer):
    """mistletoe's Jira renderer, adjusted for what the review comment contains.

    Upstream passes HTML through verbatim (Jira would print it), glues HTML blocks to the next block,
    turns soft breaks into spaces (GitHub comments show them as line breaks) and knows no task lists.
    """

    def __init__(self) -> None:
        super().__init__()
        self._marker = False
        self._depth = 0

    def render_document(self, token: Any) -> str:
        self._depth += 1
        try:
            inner = super().render_document(token)
        finally:
            self._depth -= 1
        if self._depth == 0 and self._marker:
            inner = inner.rstrip("\n") + f"\n\n{_WIKI_MARKER}\n"
        return inner

    def render_html_block(self, token: Any) -> str:  # type: ignore[override]
        content: str = token.content
        if STICKY_MARKER in content:
            self._marker = True
        content = _HTML_COMMENT.sub("", content)
        parts: list[str] = []
        for segment in re.split(r"(<summary[^>]*>.*?</summary>)", content, flags=re.DOTALL | re.IGNORECASE):
            summary = _SUMMARY.fullmatch(segment.strip())
            if summary:
                # <details> has no Jira equivalent: the fold becomes a small heading and stays open.
                title = self._render_fragment(summary.group(1)).strip()
                parts.append(f"h4. {title}\n\n")
                continue
            rest = html.unescape(_TAG.sub("", segment)).strip()
            if rest:
                # Markdown swallowed into an HTML block (no blank line after the tag) is still markdown.
                parts.append(self.render(mistletoe.Document(rest)))
        return "".join(parts)

    def _render_fragment(self, text: str) -> str:
        return self.render(mistletoe.Document(html.unescape(_TAG.sub("", text)))).strip()

    def render_html_span(self, token: Any) -> str:  # type: ignore[override]
        content: str = token.content
        if content.startswith("<!--"):
            if STICKY_MARKER in content:
                self._marker = True
            return ""
        name = re.sub(r"[<>\s]", "", content.split()[0] if " " in content else content).lower()
        return _INLINE_TAGS.get(name, "")

    def render_raw_text(self, token: Any, escape: bool = True) -> str:
        text: str = super().render_raw_text(token, escape)
        # Upstream leaves a bracket between spaces alone, but Jira reads "[ ]" as a link all the same.
        return re.sub(r"(?<!\\)([\[\]])", r"\\\1", text) if escape else text

    def render_line_break(self, token: Any) -> str:  # type: ignore[override]
        if token.soft:
            # A newline inside a list item would end the item in Jira.
            return " " if self.listTokens else "\n"
        return "\\\\\n"

    def render_list_item(self, token: Any) -> str:
        prefix = "".join(self.listTokens)
        inner = self.render_inner(token)
        inner = _TASK_BOX.sub(lambda m: "☐ " if m.group(1) == " " else "☑ ", inner, count=1)
        return f"{prefix} {inner}"

    def render_block_code(self, token: Any) -> str:
        language = (token.language or "").strip().lower()
        attr = f":{language}" if language in _CODE_LANGUAGES else ""
        inner = self.render_raw_text(token.children[0], False)
        return f"{{code{attr}}}\n{inner}{{code}}" + self._block_eol(token)

    def render_table(self, token: Any) -> str:
        return super().render_table(token).rstrip("\n") + self._block_eol(token)


# ---------------------------------------------------------------------------------------------------------
# Atlassian Document Format -> markdown-ish text


def adf_to_text(doc: dict[str, Any]) -> str:
    """Flatten an ADF document (v3 description or comment) to markdown-ish text for the pipeline."""
    if not isinstance(doc, dict):
        raise TypeError("an ADF document must be a JSON object")
    try:
        blocks = _adf_blocks(doc.get("content") or [], "")
    except (TypeError, ValueError, AttributeError):
        # Not the shape ADF has (a sender's odd payload, a node kind that changed): keep every text in it.
        blocks = [" ".join(_adf_texts(doc))]
    text = "\n\n".join(block for block in blocks if block.strip())
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _adf_texts(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["text"]] if isinstance(node.get("text"), str) else []
        return own + [text for key, value in node.items() if key != "text" for text in _adf_texts(value)]
    if isinstance(node, list):
        return [text for value in node for text in _adf_texts(value)]
    return []


def _adf_blocks(nodes: list[Any], indent: str) -> list[str]:
    return [block for node in nodes if isinstance(node, dict) for block in _adf_block(node, indent)]


def _adf_block(node: dict[str, Any], indent: str) -> list[str]:
    kind = node.get("type")
    attrs = node.get("attrs") or {}
    content = node.get("content") or []
    if kind == "paragraph":
        return [indent + _adf_inline(content).replace("\n", "\n" + indent)]
    if kind == "heading":
        level = min(max(int(attrs.get("level") or 1), 1), 6)
        return [f"{indent}{'#' * level} {_adf_inline(content)}"]
    if kind in ("bulletList", "orderedList", "taskList", "decisionList"):
        return ["\n".join(_adf_list(node, indent))]
    if kind == "codeBlock":
        language = attrs.get("language") or ""
        code = "".join(child.get("text", "") for child in content if isinstance(child, dict))
        return [f"{indent}```{language}\n{code}\n{indent}```"]
    if kind == "blockquote":
        inner = "\n\n".join(_adf_blocks(content, ""))
        return ["\n".join(f"{indent}> {line}".rstrip() for line in inner.splitlines())]
    if kind == "rule":
        return [f"{indent}---"]
    if kind == "table":
        return ["\n".join(_adf_table(node, indent))]
    if kind in ("expand", "nestedExpand"):
        title = attrs.get("title")
        return ([f"{indent}**{title}**"] if title else []) + _adf_blocks(content, indent)
    if kind in ("mediaSingle", "mediaGroup", "media"):
        return [f"{indent}[attachment]"]
    if kind in ("blockCard", "embedCard"):
        url = attrs.get("url") or (attrs.get("data") or {}).get("url") or ""
        return [f"{indent}<{url}>"] if url else []
    if kind in ("taskItem", "decisionItem", "listItem"):
        return ["\n".join(_adf_list({"type": "bulletList", "content": [node]}, indent))]
    if content and all(isinstance(child, dict) and child.get("type") in _INLINE for child in content):
        return [indent + _adf_inline(content)]
    # panel, layoutSection, bodiedExtension and unknown containers: keep their text.
    return _adf_blocks(content, indent)


def _adf_list(node: dict[str, Any], indent: str) -> list[str]:
    kind = node.get("type")
    start = int((node.get("attrs") or {}).get("order") or 1)
    lines: list[str] = []
    for number, item in enumerate(node.get("content") or [], start=start):
        if not isinstance(item, dict):
            continue
        item_kind = item.get("type")
        if item_kind in ("bulletList", "orderedList", "taskList", "decisionList"):
            lines.extend(_adf_list(item, indent + "  "))
            continue
        if kind == "orderedList":
            bullet = f"{number}."
        elif item_kind == "taskItem":
            bullet = "- [x]" if (item.get("attrs") or {}).get("state") == "DONE" else "- [ ]"
        else:
            bullet = "-"
        children = item.get("content") or []
        if item_kind in ("taskItem", "decisionItem"):
            inline = [c for c in children if isinstance(c, dict) and c.get("type") in _INLINE]
            nested = [c for c in children if isinstance(c, dict) and c.get("type") not in _INLINE]
            first, rest = _adf_inline(inline), _adf_blocks(nested, indent + "  ")
        else:
            blocks = _adf_blocks(children, "")
            first = blocks[0] if blocks else ""
            rest = _adf_blocks(children[1:], indent + "  ") if blocks else []
        lines.append(f"{indent}{bullet} {first}".rstrip())
        lines.extend(rest)
    return lines


def _adf_table(node: dict[str, Any], indent: str) -> list[str]:
    rows: list[list[str]] = []
    for row in node.get("content") or []:
        cells = [
            " ".join(_adf_blocks(cell.get("content") or [], "")).replace("\n", " ").replace("|", "\\|")
            for cell in (row.get("content") or [])
            if isinstance(cell, dict)
        ]
        rows.append(cells)
    if not rows:
        return []
    width = max(len(r) for r in rows)
    lines = [indent + "| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    lines.insert(1, indent + "|" + "---|" * width)
    return lines


_INLINE = frozenset(
    {
        "text",
        "hardBreak",
        "mention",
        "emoji",
        "inlineCard",
        "status",
        "date",
        "placeholder",
        "inlineExtension",
    }
)


def _adf_inline(nodes: list[Any]) -> str:
    out: list[str] = []
    for node in nodes:
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        attrs = node.get("attrs") or {}
        if kind == "text":
            out.append(_adf_marks(str(node.get("text", "")), node.get("marks") or []))
        elif kind == "hardBreak":
            out.append("\n")
        elif kind == "mention":
            name = str(attrs.get("text") or attrs.get("id") or "someone")
            out.append(name if name.startswith("@") else f"@{name}")
        elif kind == "emoji":
            out.append(str(attrs.get("text") or attrs.get("shortName") or ""))
        elif kind == "inlineCard":
            url = attrs.get("url") or (attrs.get("data") or {}).get("url")
            out.append(f"<{url}>" if url else "")
        elif kind == "status":
            out.append(f"[{attrs.get('text', '')}]")
        elif kind == "date":
            out.append(str(attrs.get("timestamp", "")))
        elif kind == "placeholder":
            out.append(str(attrs.get("text", "")))
        else:
            out.append(_adf_inline(node.get("content") or []))
    return "".join(out)


def _adf_marks(text: str, marks: list[Any]) -> str:
    if not text.strip():
        return text
    link = None
    for mark in marks:
        if not isinstance(mark, dict):
            continue
        kind = mark.get("type")
        if kind == "code":
            text = f"`{text}`"
        elif kind == "strong":
            text = f"**{text}**"
        elif kind == "em":
            text = f"_{text}_"
        elif kind == "strike":
            text = f"~~{text}~~"
        elif kind == "link":
            link = (mark.get("attrs") or {}).get("href")
    return f"[{text}]({link})" if link else text

"""Model-written markdown (the PRD draft) made inert: re-rendered from mistletoe's parse so that only the harmless
structure survives, every piece of text passing through `comment_safety` (see its docstring for the rules).

A module of its own because mistletoe takes ~0.4 s to import: the comment imports it only when there is a
draft to render, which a rules-only review never has (tests/test_cli_imports.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import mistletoe
from mistletoe.markdown_renderer import Fragment, MarkdownRenderer

from reqgate.pipeline.comment_safety import MISTLETOE_LOCK, code_span, defang, defang_all, neutralise, unmarked


class _SafeMarkdownRenderer(MarkdownRenderer):
    """Markdown back out of mistletoe's parse, with every token that could act rendered inert."""

    def render_raw_text(self, token: Any) -> Iterable[Fragment]:
        yield Fragment(neutralise(token.content, escape=False), wordwrap=True)

    def render_inline_code(self, token: Any) -> Iterable[Fragment]:
        content = token.children[0].content
        yield Fragment(code_span(defang_all(unmarked(content))))

    def render_image(self, token: Any) -> Iterable[Fragment]:
        # The alt text only: an image is a request to a server the ticket's author may own.
        yield from self.make_fragments(token.children)
        if token.src:
            yield Fragment(" (image " + code_span(defang(token.src)) + ")")

    def render_link(self, token: Any) -> Iterable[Fragment]:
        yield from self.make_fragments(token.children)
        if token.target:
            yield Fragment(" (" + code_span(defang(token.target)) + ")")

    def render_auto_link(self, token: Any) -> Iterable[Fragment]:
        yield Fragment(code_span(defang(token.children[0].content)))

    def render_html_span(self, token: Any) -> Iterable[Fragment]:
        yield Fragment(code_span(defang_all(unmarked(token.content))))

    def render_html_block(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        lines = (code_span(defang_all(unmarked(line))) for line in token.content.splitlines())
        return [line for line in lines if line]

    def render_heading(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        text = "".join(f.text for f in self.make_fragments(token.children)).strip()
        return [f"**{text}**"] if text else []

    def render_setext_heading(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        return self.render_heading(token, max_line_length)

    def render_link_reference_definition_block(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        return []

    def render_fenced_code_block(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        content = unmarked(token.children[0].content) if token.children else ""
        longest = max((len(run) for run in re.findall(r"`{3,}|~{3,}", content)), default=2)
        fence = "`" * max(3, longest + 1)
        # The info string is the writer's: a language word at most.
        language = re.sub(r"[^\w+#-]", "", (token.language or ""))[:20]
        return [fence + language, *content.rstrip("\n").split("\n"), fence] if content else [fence, fence]

    def render_block_code(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        return self.render_fenced_code_block(token, max_line_length)


def safe_markdown(markdown: str) -> str:
    """Model-written markdown with only harmless structure left (see the module docstring)."""
    if not markdown.strip():
        return ""
    with MISTLETOE_LOCK, _SafeMarkdownRenderer() as renderer:
        document = mistletoe.Document(markdown)
        rendered: str = renderer.render(document)
    return rendered.strip()


__all__ = ["safe_markdown"]

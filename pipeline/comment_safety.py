"""Untrusted text made inert before it enters the comment frame.

Everything the ticket or the model wrote (quotes, questions, finding messages, the PRD draft, even error
texts) passes through here, because whoever can open an issue on a public repository can also make an
obedient model repeat anything. What comes out, on GitHub and once converted to Jira wiki markup, has:

- no image, no link, no autolink: URLs, e-mail addresses and cross-repository references become inline
  code with the scheme defanged (`hxxps://...`), which neither GitHub nor Jira turns into a link;
- no live mention: `@someone`, `@org/team` become inline code;
- no raw HTML: tags are shown as inline code (the frame's own `<details>` are added by the frame, after);
- no heading, verdict or score: headings become bold lines, "Verdict: Ready", "ReqGate: ...", "97/100",
  status emoji (and Jira's `(/)`-style emoticons and `h1.` lines) are removed or shown as code.

Two entry points: `safe_inline` for one line of plain text, `safe_markdown` for a block of model-written
markdown, re-rendered from mistletoe's parse so that only the harmless structure (paragraphs, lists,
emphasis, tables, code) survives. Every pattern is linear in its input (anchored starts, possessive runs).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any

import mistletoe
from mistletoe.markdown_renderer import Fragment, MarkdownRenderer

# mistletoe registers a renderer's tokens globally while it is in use: every renderer of ours (this one and
# the Jira one in handlers) takes this lock.
MISTLETOE_LOCK = threading.Lock()

_STATUS_SHORTCODES = (
    "white_check_mark|heavy_check_mark|ballot_box_with_check|check|x|warning|no_entry|no_entry_sign|"
    "negative_squared_cross_mark|heavy_multiplication_x|cross_mark|red_circle|green_circle|yellow_circle|"
    "orange_circle|large_green_circle|stop_sign|rotating_light|\\+1|-1|thumbsup|thumbsdown|white_circle"
)
_UNSAFE = re.compile(
    r"(?P<url>(?<![\w.+-])(?:https?|ftp|ftps|file|mailto|javascript|data|vbscript|irc|ssh|git|tel|sms):[^\s<>`\"']*+)"
    r"|(?P<www>(?<![\w.])www\.[^\s<>`\"']++)"
    r"|(?P<email>(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)++)"
    r"|(?P<mention>(?<![\w`@])@[A-Za-z0-9](?:[\w-]{0,38}+)(?:/[\w.-]{1,100}+)?)"
    r"|(?P<xref>(?<![\w./-])[\w.-]++/[\w.-]++#\d++)"
    r"|(?P<score>(?<!\d)\d{1,3}+\s{0,3}+/\s{0,3}+100(?!\d))"
    r"|(?P<claim>\b(?:verdict|reqgate|status|result)\b[\s:=*_–—-]{0,6}+(?:ready|needs[\s-]?info|approved|passed)\b)"
    r"|(?P<wiki>(?:^|(?<=\s))(?:h[1-6]|bq)\.(?=\s|$))"
    r"|(?P<emoticon>\((?:/|x|!|y|n|i|\+|-|\?|on|off|\*[rgby]?|flag|flagoff)\))",
    re.IGNORECASE,
)
# Status marks go first, so that "ReqGate: ✅ Ready" is seen as the verdict claim it is.
_STATUS_MARKS = re.compile(rf":(?:{_STATUS_SHORTCODES}):|[✅❌⚠✔✓☑✗✘⛔🚫🟢🔴🟡🟠🛑]\ufe0f?", re.IGNORECASE)
_REMOVED = {"score": "(score removed)", "claim": "(verdict removed)"}
# Punctuation that could start markup in an inline context, on GitHub or once converted for Jira.
_ESCAPE = re.compile(r"([\\`*_\[\]<>!|~&{}])")
_DEFANG = re.compile(r"^(h)tt(ps?)|^(f)t(ps?)|^(file|javascript|data|vbscript|mailto|irc|ssh|git|tel|sms):",
                     re.IGNORECASE)


def code_span(text: str) -> str:
    """`text` as inline code, whatever backticks it holds."""
    text = " ".join(text.split())
    if not text:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def defang_all(text: str) -> str:
    """Every address inside `text` defanged, the rest left as it is (for text shown as code)."""
    return _UNSAFE.sub(lambda m: defang(m.group(0)) if m.lastgroup in ("url", "www") else m.group(0), text)


def defang(url: str) -> str:
    """A URL no tracker makes clickable: `hxxps://host/path`, `mailto[:]x`."""
    return _DEFANG.sub(lambda m: (f"{m.group(1)}xx{m.group(2)}" if m.group(1) else
                                  f"{m.group(3)}x{m.group(4)}" if m.group(3) else f"{m.group(5)}[:]"), url)


def _inert(match: re.Match[str]) -> str:
    kind = match.lastgroup or ""
    text = match.group(0)
    if kind in _REMOVED:
        return _REMOVED[kind]
    if kind in ("url", "www"):
        # A sentence's full stop or closing bracket is not part of the address.
        core = text.rstrip(".,;:!?)]}*_")
        return code_span(defang(core)) + _ESCAPE.sub(r"\\\1", text[len(core):])
    return code_span(text)


_MARKER_WORD = re.compile(r"reqgate:review", re.IGNORECASE)


def _unmarked(text: str) -> str:
    """No HTML comment and no spelling of the frame's marker: the bot finds its comment by that marker."""
    return _MARKER_WORD.sub("reqgate review", text.replace("<!--", "").replace("-->", ""))


def _neutralise(text: str, escape: bool) -> str:
    text = _STATUS_MARKS.sub("", _unmarked(text))
    out: list[str] = []
    pos = 0
    for match in _UNSAFE.finditer(text):
        plain = text[pos:match.start()]
        out.append(_ESCAPE.sub(r"\\\1", plain) if escape else plain.replace("&", "\\&"))
        out.append(_inert(match))
        pos = match.end()
    rest = text[pos:]
    out.append(_ESCAPE.sub(r"\\\1", rest) if escape else rest.replace("&", "\\&"))
    return "".join(out)


# A code span the writer meant (`/reqgate recheck`): kept as code, its content made inert like any other.
_CODE = re.compile(r"`([^`]{1,300}+)`")


def safe_inline(text: str, limit: int | None = None) -> str:
    """Untrusted plain text as one inert line of markdown, cut to `limit` characters (before escaping)."""
    flat = " ".join(str(text).split())
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    out: list[str] = []
    pos = 0
    for match in _CODE.finditer(flat):
        out.append(_neutralise(flat[pos:match.start()], escape=True))
        out.append(code_span(defang_all(_unmarked(_STATUS_MARKS.sub("", match.group(1))))))
        pos = match.end()
    out.append(_neutralise(flat[pos:], escape=True))
    return "".join(out)


class _SafeMarkdownRenderer(MarkdownRenderer):
    """Markdown back out of mistletoe's parse, with every token that could act rendered inert."""

    def render_raw_text(self, token: Any) -> Iterable[Fragment]:
        yield Fragment(_neutralise(token.content, escape=False), wordwrap=True)

    def render_inline_code(self, token: Any) -> Iterable[Fragment]:
        content = token.children[0].content
        yield Fragment(code_span(defang_all(_unmarked(content))))

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
        yield Fragment(code_span(defang_all(_unmarked(token.content))))

    def render_html_block(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        lines = (code_span(defang_all(_unmarked(line))) for line in token.content.splitlines())
        return [line for line in lines if line]

    def render_heading(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        text = "".join(f.text for f in self.make_fragments(token.children)).strip()
        return [f"**{text}**"] if text else []

    def render_setext_heading(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        return self.render_heading(token, max_line_length)

    def render_link_reference_definition_block(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        return []

    def render_fenced_code_block(self, token: Any, max_line_length: int | None) -> Iterable[str]:
        content = _unmarked(token.children[0].content) if token.children else ""
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


__all__ = ["MISTLETOE_LOCK", "code_span", "defang", "defang_all", "safe_inline", "safe_markdown"]

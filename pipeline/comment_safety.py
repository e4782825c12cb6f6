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

Two entry points: `safe_inline` here for one line of plain text, and `markdown_safety.safe_markdown` for a block
of model-written markdown, re-rendered from mistletoe's parse so that only the harmless structure (paragraphs,
lists, emphasis, tables, code) survives; it uses `neutralise` and `unmarked` from here. Every pattern is linear
in its input (anchored starts, possessive runs).
"""

from __future__ import annotations

import re
import threading

# mistletoe registers a renderer's tokens globally while it is in use: every renderer of ours (markdown_safety's
# and the Jira one in handlers) takes this lock. It lives here, beside no renderer, so that holding it does not
# load mistletoe, whose import costs ~0.4 s (it builds a set of every Unicode punctuation character).
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


def unmarked(text: str) -> str:
    """No HTML comment and no spelling of the frame's marker: the bot finds its comment by that marker."""
    return _MARKER_WORD.sub("reqgate review", text.replace("<!--", "").replace("-->", ""))


def neutralise(text: str, escape: bool) -> str:
    """Every address, mention, verdict and score in `text` inert; with `escape`, all markup punctuation too
    (plain text), without it only `&` (text inside markdown mistletoe has already parsed)."""
    text = _STATUS_MARKS.sub("", unmarked(text))
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
        out.append(neutralise(flat[pos:match.start()], escape=True))
        out.append(code_span(defang_all(unmarked(_STATUS_MARKS.sub("", match.group(1))))))
        pos = match.end()
    out.append(neutralise(flat[pos:], escape=True))
    return "".join(out)


__all__ = ["MISTLETOE_LOCK", "code_span", "defang", "defang_all", "neutralise", "safe_inline", "unmarked"]

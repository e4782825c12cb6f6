"""wording.open-question: a question or an undecided option the author left in the ticket.

"not sure if ...", "option 1 or 2?", "TBD by design", a sentence of the author's that ends in "?": whoever
picks the ticket up has to get it answered before building. Quotations, code and template text are masked
or skipped: a question in a quoted error message or in an issue template's instructions is not the author's.
"""

from __future__ import annotations

import re

from reqgate.pipeline.rules.document import Document
from reqgate.pipeline.schemas import Finding

CHECK_ID = "wording.open-question"

_UNDECIDED_RE = re.compile(
    r"(?=[nNuUiIwWsStTyYoOqQ])\b(?:not sure (?:if|whether|how|what|which|about)(?! I\b)|unsure (?:if|whether|how)|(?:I|we) (?:don['’]t|do not) "
    r"know (?:if|whether|how|what|which)|(?:still )?(?:to be|needs? to be|yet to be) (?:decided|discussed|"
    r"clarified|investigated|defined|determined)|open questions?|undecided|tbd by \w+"
    r"|(?:whether|if) (?:we|it) (?:should|want)|question is (?:whether|if|how)"
    r"|option (?:\d|[a-c]|one|two) or (?:option )?(?:\d|[a-c]|one|two|three)\b)",
    re.IGNORECASE,
)
# A question sentence of the author's: a line of prose ending in "?". Template prompts ("Which page(s) are
# involved in this request?") are followed by their answer, so only questions outside a heading count.
_QUESTION_RE = re.compile(r"(?:^|(?<=[.!?:]\s))(?P<q>[A-Z][^.!?\n]{8,200}\?)(?=\s|$)", re.MULTILINE)
_TEMPLATE_PROMPT_RE = re.compile(r"^(?:what|which|who|when|where|how|is|are|does|do|has|have)\b[^\n]*\b(?:"
                                 r"request|page|apply|issue|scope|applied|involved)\b", re.IGNORECASE)
_QUOTES = "\"“”"
_SUGGESTION = "Answer it in the ticket (or link the decision) before the work starts."


def _in_quote(text: str, start: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    return sum(text.count(q, line_start, start) for q in _QUOTES) % 2 == 1


def _quoted_line(text: str, start: int) -> bool:
    """A table row, a quotation, or a line that recurs (a pasted log): not the author asking."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line = text[line_start:line_end if line_end >= 0 else len(text)].strip()
    return line.startswith(("|", ">", "bq.")) or text.count(line) > 1


def find(doc: Document) -> list[Finding]:
    text = doc.masked
    found: list[Finding] = []
    seen_lines: set[int] = set()
    for m in _UNDECIDED_RE.finditer(text, doc.body_start):
        if _in_quote(text, m.start()) or _quoted_line(text, m.start()):
            continue
        seen_lines.add(text.rfind("\n", 0, m.start()))
        found.append(doc.finding(CHECK_ID, f"'{doc.text[m.start():m.end()]}' leaves a decision open",
                                 _SUGGESTION, m.start(), m.end()))
    questions = _QUESTION_RE.finditer(text, doc.body_start) if "?" in text else iter(())
    for m in questions:
        start, end = m.start("q"), m.end("q")
        line = text.rfind("\n", 0, start)
        if (line in seen_lines or _in_quote(text, start) or _quoted_line(text, start)
                or _TEMPLATE_PROMPT_RE.match(m.group("q"))):
            continue
        seen_lines.add(line)
        found.append(doc.finding(CHECK_ID, "An open question in the ticket", _SUGGESTION, start, end))
    return found

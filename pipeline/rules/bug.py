"""bug.steps.missing, bug.expected.missing, bug.actual.missing, bug.environment.missing."""

from __future__ import annotations

import re

from reqgate.pipeline.rules.document import Document
from reqgate.pipeline.schemas import Finding

STEPS = "bug.steps.missing"
EXPECTED = "bug.expected.missing"
ACTUAL = "bug.actual.missing"
ENVIRONMENT = "bug.environment.missing"
CHECK_IDS = (STEPS, EXPECTED, ACTUAL, ENVIRONMENT)

_LINE_START = r"^[ \t>*_\-+•#]*(?:h[1-6]\.[ \t]*)?[*_]*"
_EXPECTED_RE = re.compile(
    _LINE_START + r"expect(?:ed|ation)s?(?:[ \t]+(?:result|behaviou?r|outcome|output))?s?[*_]*[ \t]*[:\-–—\n]"
    r"|\b(?:I|we|users?) (?:would |'d )?expect(?:ed)?\b"
    r"|\bexpected (?:to|that|result|behaviou?r|outcome|output)\b"
    r"|\b(?:should|supposed to|ought to|needs? to|must)\b|\binstead of\b",
    re.IGNORECASE | re.MULTILINE,
)
_ACTUAL_RE = re.compile(
    _LINE_START + r"(?:actual(?:ly)?|observed|current|result|what happens|what happened)(?:[ \t]+(?:result|"
    r"behaviou?r|outcome|output))?s?[*_]*[ \t]*[:\-–—\n]"
    r"|\b(?:instead|actually|currently|but (?:it|I|we|nothing|the|there|get|got|shows?|returns?)"
    r"|nothing happens|crash(?:es|ed|ing)?|fails?|failed|failing|failure|errors?|exceptions?|traceback"
    r"|stack ?trace|panic|hangs?|hung|freezes|frozen|broken|blank|empty|wrong|incorrect(?:ly)?|missing"
    r"|(?:does|do|did|is|are|was|were|can|could|will|would)(?:n['’]t| not)|cannot|won['’]t|unable to"
    r"|returns?|returned|shows?|showed|shown|displays?|displayed|throws?|thrown|got|gets|getting"
    r"|timeouts?|timed out|40[0-9]|50[0-9])\b",
    re.IGNORECASE | re.MULTILINE,
)
_ENVIRONMENT_RE = re.compile(
    _LINE_START + r"(?:environment|env|version|versions|platform|os|browser|device|build|release|app version)"
    r"[*_]*[ \t]*[:\-–—\n]"
    r"|\b(?:windows(?: \d+| xp| vista)?|win(?:10|11)|mac ?os(?: x)?|os ?x|linux|ubuntu|debian|fedora|centos"
    r"|rhel"
    r"|alpine|ios|ipados|android|chrome ?os|chrom(?:e|ium)|firefox|safari|edge|opera|brave|internet explorer"
    r"|ie ?\d+|iphone|ipad|pixel|samsung|galaxy|node(?:\.js)?|python|java|jdk|docker|kubernetes|k8s"
    r"|staging|production|prod|qa|sandbox|localhost)\b"
    r"|\bv?\d+\.\d+(?:\.\d+)+\b|\bv\d+(?:\.\d+)?\b|\b(?:version|release|build) \d",
    re.IGNORECASE | re.MULTILINE,
)

_MISSING: list[tuple[str, re.Pattern[str], str, str]] = [
    (EXPECTED, _EXPECTED_RE, "No expected behaviour",
     "Say what should happen, e.g. 'Expected: the PDF lists all 12 invoice lines'."),
    (ACTUAL, _ACTUAL_RE, "No actual behaviour",
     "Say what happens instead, with the exact error, e.g. 'Actual: the PDF is empty, HTTP 500'."),
    (ENVIRONMENT, _ENVIRONMENT_RE, "No environment or version",
     "Name where it happens, e.g. 'Environment: app 4.2.1, Chrome 126 on Windows 11, production'."),
]
_STEPS_SUGGESTION = ("Say how to make it happen: numbered steps, the failing command, request or test, or the "
                     "exact action that triggers it, e.g. '1. Open an invoice 2. Click Export PDF'.")
# Steps are any list of two or more items: markdown bullets or numbers, Jira "#" and "*" lists.
_LIST_ITEM_RE = re.compile(r"^[ \t>]*(?:[-*+•]|#+|\d+[.)])[ \t]+\S", re.MULTILINE)
# A failing command, request or test, given verbatim, reproduces a bug on its own.
_COMMAND_RE = re.compile(
    r"^[ \t]*\$[ \t]*[\w./-]+"  # a shell prompt
    r"|\b(?:GET|POST|PUT|PATCH|DELETE|HEAD)[ \t]+/\S*"  # an HTTP request line
    r"|\b(?:curl|wget|mvn|gradle|npm|yarn|pip|make|docker|kubectl|java|python|go test|pytest)[ \t]+-{0,2}\w"
    r"|\b(?:Test\w+|\w+Test)\b",  # a named test
    re.MULTILINE,
)
# A trace or an error line needs a few words around it: what was done when it appeared.
_TRACE_RE = re.compile(
    r"^[ \t]*at[ \t]+[\w$.<>]+\("  # a Java stack frame
    r"|\bTraceback \(most recent call last\)|\b(?:Caused by|Exception in thread)\b|\b\w+(?:Exception|Error)\b",
    re.MULTILINE,
)
_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")
# Prose this long, besides what is quoted verbatim, describes a trigger a developer can act on.
_MIN_PROSE_WORDS = 8


def steps_given(doc: Document) -> bool:
    """Whether the body shows how to reproduce: a list, a failing command / request / test / trace with
    some words around it, or a description long enough to carry a precise trigger."""
    body = doc.text[doc.body_start:]
    masked = doc.masked[doc.body_start:]
    if len(_LIST_ITEM_RE.findall(masked)) >= 2:
        return True
    prose = len(_WORD_RE.findall(masked))
    if prose >= _MIN_PROSE_WORDS or _COMMAND_RE.search(body):
        return True
    # A trace alone (a pasted log line under a link) has no context to act on.
    return prose >= 3 and _TRACE_RE.search(body) is not None


def find(doc: Document) -> list[Finding]:
    # Unmasked on purpose: a stack trace or a version in a code block is evidence too.
    found = [doc.finding(check_id, message, suggestion)
             for check_id, pattern, message, suggestion in _MISSING
             if pattern.search(doc.text) is None]
    # An empty body is reported once, as incomplete (guardrail.length), not once per missing part.
    if doc.text[doc.body_start:].strip() and not steps_given(doc):
        found.insert(0, doc.finding(STEPS, "No way to reproduce: no steps, failing command or trigger",
                                    _STEPS_SUGGESTION))
    return found

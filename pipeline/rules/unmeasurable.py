"""wording.unmeasurable: performance and quality words with no number to test them against."""

from __future__ import annotations

import re

from reqgate.pipeline.rules.document import Document, Term, lexicon, phrases
from reqgate.pipeline.schemas import Finding

CHECK_ID = "wording.unmeasurable"

TERMS: list[Term] = [
    (phrases(r"fast(?:er|est)?", r"quick(?:er|ly)?", r"rapid(?:ly)?", r"speedy", r"snappy", r"slow(?:er|ly)?",
           r"real[- ]?time", r"instant(?:ly|aneous(?:ly)?)?", r"immediate(?:ly)?", r"timely",
           r"in a timely (?:manner|fashion)", r"without (?:delay|lag)", r"low[- ]latency",
           r"responsive(?:ness)?",
           r"high[- ]performance", r"performant", r"efficient(?:ly)?", r"efficiency", r"lightweight",
           r"smooth(?:ly)?", r"asap", r"as soon as possible"),
     "Give a number with a unit, e.g. 'within 2 s for 95% of requests'."),
    (phrases(r"scal(?:able|ability)", r"high(?:ly)? availab(?:le|ility)", r"robust(?:ness)?",
           r"reliab(?:le|ly|ility)",
           r"stable", r"resilient", r"fault[- ]tolerant", r"seamless(?:ly)?", r"secure(?:ly)?",
           r"accurate(?:ly)?", r"high accuracy", r"precise(?:ly)?", r"large[- ]scale", r"high[- ]volume"),
     "Say how much: users, requests per second, uptime %, error rate or the standard to meet."),
]
LEXICON = lexicon(TERMS)
# A quantity in the same sentence makes the quality word testable ("fast: under 200 ms").
_QUANTITY_RE = re.compile(
    r"\d+(?:[.,]\d+)?\s*(?:%|percent|ms|milli(?:second)?s?|s|secs?|seconds?|min(?:ute)?s?|h|hrs?|hours?|days?|"
    r"[kmgt]i?b(?:ps)?|bytes?|fps|hz|rps|qps|tps|req(?:uest)?s?(?:/| per )|users?|requests?|transactions?|"
    r"records?|rows?|items?|times|x|nines)\b|\bp(?:50|90|95|99)\b|\b\d{2,}\.\d+%|\b(?:99|100)(?:\.\d+)?\b"
    r"|\b(?:iso|iec|owasp|soc ?2|pci|hipaa|gdpr|tls|aes|fips|wcag)\b",
    re.IGNORECASE,
)


def measured(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] carries a quantity with a unit or names a standard."""
    return _QUANTITY_RE.search(text, start, end) is not None


def find(doc: Document) -> list[Finding]:
    findings = doc.term_findings(CHECK_ID, LEXICON, 0, len(doc.text), "'{quote}' is not measurable")
    return [f for f in findings
            if f.span is not None and not measured(doc.masked, *doc.sentences.around(f.span.start))]

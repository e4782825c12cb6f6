"""wording.vague: ambiguous quantities, loopholes and subjective words (ISO/IEC/IEEE 29148 §5.2.7, NASA
ARM weak phrases, Wiegers' ambiguous terms)."""

from __future__ import annotations

from reqgate.pipeline.rules.document import Document, Term, lexicon, phrases
from reqgate.pipeline.schemas import Finding

CHECK_ID = "wording.vague"

TERMS: list[Term] = [
    (phrases(r"some", r"several", r"various", r"many", r"(?:a )?few", r"numerous", r"a (?:lot|number|bunch) of",
           r"lots of", r"a couple of", r"countless", r"certain"),
     "Give the number or list the items."),
    (phrases(r"and/or", r"etc\.?", r"and so (?:on|forth)", r"or similar", r"(?:including )?but not limited to",
           r"among others", r"or the like"),
     "List every case explicitly so the scope is closed."),
    (phrases(r"as (?:appropriate|applicable|needed|necessary|required|possible)",
           r"if (?:possible|needed|necessary"
           r"|applicable|appropriate|feasible)",
           r"where (?:possible|applicable|appropriate|feasible|relevant)",
           r"when (?:possible|needed|necessary|appropriate)", r"as much as possible",
           r"to the extent possible",
           r"where practicable", r"as far as possible", r"optionally", r"ideally"),
     "Loopholes make the requirement optional: say exactly when it applies."),
    (phrases(r"user[- ]friendly", r"easy(?:[- ]to[- ]use)?", r"easily", r"simple", r"simply",
           r"intuitive(?:ly)?",
           r"flexible", r"flexibility", r"convenient(?:ly)?", r"nice", r"modern", r"attractive",
           r"better", r"improved?", r"improvements?", r"enhanced?", r"good", r"best", r"proper(?:ly)?",
           r"effective(?:ly)?", r"meaningful", r"comprehensive", r"appropriate(?:ly)?", r"relevant",
           r"adequate(?:ly)?", r"sufficient(?:ly)?", r"acceptable", r"reasonable", r"reasonably",
           r"significant(?:ly)?", r"minimal", r"optimal(?:ly)?", r"optimi[sz]ed?", r"maximi[sz]e",
           r"minimi[sz]e", r"state[- ]of[- ]the[- ]art", r"high[- ]quality", r"clearly", r"smart",
           r"advanced", r"personali[sz]ed", r"tailored", r"holistic", r"safer"),
     "Subjective words cannot be checked: say what a tester would observe."),
    (phrases(r"normally", r"usually", r"typically", r"generally", r"often", r"sometimes", r"occasionally",
           r"mostly", r"approximately", r"roughly", r"about(?=\s+\d)", r"around(?=\s+\d)", r"almost",
           r"nearly", r"more or less"),
     "Say exactly when, or give the number with a tolerance."),
    (phrases(r"(?:to|should|must|shall|will|can|could) support", r"provide support for", r"(?:to|should|must"
           r"|shall|will|can|could) handle", r"deal with", r"take care of", r"take into account"),
     "Say what the system does in that case, not that it 'supports' or 'handles' it."),
]

LEXICON = lexicon(TERMS)


def find(doc: Document) -> list[Finding]:
    return doc.term_findings(CHECK_ID, LEXICON, 0, len(doc.text), "'{quote}' is vague")

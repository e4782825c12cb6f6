"""A small verb lexicon for telling "export and email the report" (two actions) from "title and status".

No tagger is shipped with the project; a lexicon of the verbs that requirements use, with a rule for
words that are nouns as often as verbs, is enough for the one question the non-atomic check asks.
"""

from __future__ import annotations

from collections.abc import Sequence


def _wordset(block: str) -> frozenset[str]:
    return frozenset(block.split())


# Words that are verbs whenever they follow "and"/"or" in a want.
VERBS = _wordset("""
accept accommodate achieve acknowledge acquire activate adapt add adjust administer adopt advance advise
aggregate allocate allow alter amplify analyse analyze annotate anonymize anticipate append apply approve
archive arrange ask assemble assess assign assist associate attach attend audit authenticate authorize
automate avoid become begin behave believe borrow browse build bulk calculate cancel capture categorize
change choose clarify classify click collaborate collect combine communicate compare compile complete
comply compose compute configure confirm connect consider consolidate consult consume continue contribute
convert convey coordinate correct create crop curate customize deactivate deal debug decide decline
decrypt define delegate delete deliver demonstrate deny deploy deposit derive describe detect determine
develop diagnose differentiate disable discard disconnect discover discuss dismiss dispatch distinguish
distribute divide drag drive duplicate edit educate eliminate embed emit enable encourage encrypt enforce
engage enhance enroll ensure enter escalate establish evaluate evolve examine exclude execute expand
expire explain explore expose extend extract facilitate favorite favourite feel fetch find follow forward gain
gather generate get give go grant handle harvest have hide highlight hire identify ignore implement
improve include incorporate increase indicate inform ingest initiate insert inspect install integrate interact
interpret intervene introduce investigate invite join keep know learn leave leverage locate login logout
maintain make manage manipulate measure meet migrate minimize mitigate modify monitor mute navigate
notify obtain operate operationalize optimize organize overwrite participate pause perform perceive persist
populate predict prepare preserve prevent preview prioritize proceed produce promote protect provide
publish purchase purge put rank reach read react rearrange reassign receive recognize recommend reconcile
recover redirect reduce refer refine refresh regenerate register reject relate rely reload remember remind
remove rename reopen reorder repeat replace replicate reproduce require reschedule resize resolve respond
restore restrict resume retain retrieve reuse revert revoke rotate save see select send separate show
sign simulate skip solve specify split stay streamline strive submit subscribe suggest summarize suspend
synchronize tailor take teach tell terminate transform translate transmit troubleshoot understand undo
unfollow uninstall unlock unmute unsubscribe upgrade validate verify visualize write zoom
""")

# Words as often nouns as verbs ("support services", "access to data"): a verb only when an object
# follows them directly.
AMBIGUOUS = _wordset("""
access act address alert answer back benefit block book bookmark call charge chart check claim clean
clear close comment contact contrast control copy cost count date design display document download drop
email end estimate experience export file fill filter finish fix flag forecast format group guide help
import input issue launch limit list load lock log look map mark match merge message move need note offer
open order package pass pay pick pin place plan play post print process pull push rate record release
reply report request research reset return review run scan schedule score search segment set setup share
sort stamp start stop store study supply support switch sync tag target test track train transfer trigger
trust turn update upload use view visit vote wait watch work
""")

_OBJECT_STARTERS = _wordset("""
the a an my our their his her its your this that these those all any each every some it them me us him
new existing multiple other more which what how whether when where who why data information
""")


# Determiners and personal pronouns only: "issues that block" is a noun phrase.
_DIRECT_OBJECTS = _OBJECT_STARTERS - {"that", "which", "what", "how", "whether", "when", "where", "who",
                                      "why", "data", "information", "more"}


def base_forms(word: str) -> list[str]:
    """Candidate base forms of an inflected word ("deletes" -> delete, "mapped" -> map)."""
    w = word.lower()
    forms = [w]
    for suffix in ("ies", "es", "s", "ed", "d", "ing"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            stem = w[: -len(suffix)]
            forms.append(stem)
            if suffix == "ies":
                forms.append(stem + "y")
            if suffix in ("ed", "ing"):
                forms.append(stem + "e")
                if len(stem) > 2 and stem[-1] == stem[-2]:
                    forms.append(stem[:-1])
    return forms


def _suffix(word: str) -> str:
    w = word.lower()
    for suffix in ("ing", "ed", "s"):
        if w.endswith(suffix):
            return suffix
    return ""


def is_action(word: str, next_word: str | None, prev_word: str | None, earlier: Sequence[str] = ()) -> bool:
    """Whether `word`, just after a conjunction, starts a second verb phrase.

    A base-form verb is enough ("and delete"). A word that is as often a noun needs an object after it
    ("and report the totals", not "and report templates") or a verb right before the conjunction ("detect
    and report"). An inflected form needs an object ("and alerts me") or a parallel verb: the word before
    the conjunction ("detects and reports") or, for "-ing", any earlier "-ing" verb ("reducing costs and
    improving safety"); "issues" or "records" are mostly nouns.
    """
    w = word.lower()
    has_object = next_word is not None and next_word.lower() in _OBJECT_STARTERS
    if w in VERBS:
        return True
    if w in AMBIGUOUS:
        return has_object or (prev_word is not None and prev_word.lower() in VERBS)
    suffix = _suffix(w)
    if not suffix or not _is_verb_form(w):
        return False
    if next_word is not None and next_word.lower() in _DIRECT_OBJECTS:
        return True
    if prev_word is not None and _suffix(prev_word) == suffix and _is_verb_form(prev_word):
        return True
    return suffix == "ing" and any(f in VERBS for f in base_forms(w)[1:]) and any(
        _suffix(e) == "ing" and any(f in VERBS for f in base_forms(e)[1:]) for e in earlier)


def _is_verb_form(word: str) -> bool:
    return any(f in VERBS or f in AMBIGUOUS for f in base_forms(word)[1:])


# Forms a tagger reads as verbs wherever they stand: auxiliaries and irregular participles.
_AUXILIARIES = _wordset("is are was were be been being am has have had do does did")
_MODALS = _wordset("can could will would should must may might shall")
_SUBJECTS = _wordset("i we you they he she it that which who")
_IRREGULAR = _wordset("""
made built done given taken seen shown known written held kept left found brought bought sent spent
""")
# "-ed" words that are not participles.
_NOT_PARTICIPLES = _wordset("need seed feed speed bed red shed hundred bred greed weed deed breed")


def has_verb(words: Sequence[str], lead: str | None = None) -> bool:
    """Whether a clause fragment carries a verb of its own, as a part-of-speech tagger would tag it.

    `lead` is the word just before the fragment ("to" in "I want to design ..."). Counted: any form of a
    lexicon verb used as one (base "deliver", "-s" after a subject "that uses", "-ing" outside a noun
    phrase "using"), auxiliaries ("are", "be"), and every "-ed" participle ("improved", "based").
    """
    return first_verb(words, lead) is not None


def first_verb(words: Sequence[str], lead: str | None = None) -> int | None:
    """Index of the first word `has_verb` counts, or None."""
    return next((i for i in range(len(words)) if _verb_at(words, i, lead)), None)


def _verb_at(words: Sequence[str], i: int, lead: str | None) -> bool:
    w = words[i].lower()
    if w in VERBS or w in _AUXILIARIES or w in _IRREGULAR:
        return True
    j = i - 1
    while j >= 0 and _is_adverb(words[j]):  # "to easily access"
        j -= 1
    prev = words[j].lower() if j >= 0 else (lead.lower() if lead else None)
    nxt = words[i + 1].lower() if i + 1 < len(words) else None
    if w in AMBIGUOUS:
        return prev == "to" or prev in _MODALS or prev in _SUBJECTS or nxt in _DIRECT_OBJECTS
    suffix = _suffix(w)
    if suffix == "ed":
        return len(w) > 4 and w not in _NOT_PARTICIPLES
    if not suffix or not _is_verb_form(w):
        return False
    if suffix == "ing":
        return len(w) > 4 and prev not in ("the", "a", "an", "of", "and")
    return prev in _SUBJECTS or prev in _MODALS or nxt in _DIRECT_OBJECTS


def _is_adverb(word: str) -> bool:
    w = word.lower()
    return w.endswith("ly") and len(w) > 4 and w not in VERBS

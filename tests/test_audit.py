"""`reqgate.bot.audit.audit`: the review of `reqgate review`, record after record, lazily."""

from __future__ import annotations

import itertools

from reqgate.bot.audit import Audited, ExportRecord, audit
from reqgate.handlers.export import to_packet
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.rules import decide_type
from reqgate.pipeline.review import review
from reqgate.pipeline.schemas import TicketType

WIKI_BUG = ("When I save a form with an empty title the server answers 500.\n"
            "h3. Steps\n# open the form\n# clear the title\n# press Save\n\n"
            "{code}java.lang.NullPointerException\n\tat Form.save(Form.java:12){code}")


def test_yields_key_and_the_same_review_as_reqgate_review():
    config = load_default_config()
    record = ExportRecord(key="MESOS-1", title="Save fails", body=WIKI_BUG, format="jira-wiki", type="Bug")
    [(key, result)] = list(audit([record], config))
    alone = review(to_packet(record), config, None)
    assert key == "MESOS-1" and result.ticket_type is TicketType.bug
    assert result.decision == alone.decision and result.findings == alone.findings
    # Wiki markup reached the rules as markdown.
    assert "1. open the form" in result.packet.body and "h3." not in result.packet.body
    assert result.trace.fallbacks == ["offline"]


def test_is_lazy():
    consumed = []

    def records():
        for n in itertools.count(1):
            consumed.append(n)
            yield ExportRecord(key=str(n), title=f"Ticket {n}", body="Upgrade Jetty from 9.2 to 9.4.")

    stream = audit(records())
    first = next(stream)
    assert isinstance(first, Audited) and first.key == "1" and consumed == [1]


def _decided(record: ExportRecord) -> tuple[TicketType, str]:
    decided = decide_type(to_packet(record), load_default_config())
    return decided.ticket_type, decided.source


def test_type_from_tracker_word_then_labels_else_text():
    assert _decided(ExportRecord(key="1", type="Improvement")) == (TicketType.story, "tracker")
    assert _decided(ExportRecord(key="1", type="bug")) == (TicketType.bug, "tracker")
    assert _decided(ExportRecord(key="1", type="Widget", labels=["ui", "bug"])) == (TicketType.bug, "label")
    assert _decided(ExportRecord(key="1", labels=["ui"]))[1] == "text"
    assert ExportRecord(key=42).key == "42"

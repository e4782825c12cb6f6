"""`reqgate audit --report`: what the report keeps, that ticket text cannot inject anything, and what a
browser shows of it."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from reqgate.bot.audit import ExportRecord, audit
from reqgate.bot.audit_report import render_report
from reqgate.bot.audit_summary import Tally

HOSTILE = ExportRecord(
    key='EVIL-1"><script>alert(1)</script>',
    title="<script>alert('title')</script> <a href=\"http://evil.example/\">click</a>",
    body=("The <img src=x onerror=alert(1)> page is TBD. <iframe src=\"http://evil.example/\"></iframe>\n"
          "[docs](javascript:alert(2)) <style>body{display:none}</style> TODO: <...>"),
)
RECORDS = [
    ExportRecord(key="OK-1", title="Upgrade Jetty", body="Upgrade Jetty from 9.2 to 9.4.", type="task"),
    HOSTILE,
    ExportRecord(key="BUG-2", title="Save fails", body="It fails sometimes.", type="Bug"),
    ExportRecord(key="OK-2", title="Bump the JDK", body="Move the build from JDK 17 to JDK 21.", type="task"),
]


def tally_of(records: list[ExportRecord], keep: int = 50) -> Tally:
    tally = Tally(keep=keep)
    for key, result in audit(records):
        tally.add(key, result)
    return tally


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]

    def handle_data(self, data):
        self.text.append(data)


def parsed(html: str) -> Elements:
    elements = Elements()
    elements.feed(html)
    return elements


def test_ticket_text_is_shown_never_injected():
    html = render_report(tally_of(RECORDS), source="<b>export</b>.jsonl", config_source="defaults", with_llm=False)
    elements = parsed(html)
    assert set(elements.tags) <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "div", "b",
                                  "section", "svg", "rect", "text", "line", "table", "thead", "tbody", "tr", "th",
                                  "td", "ul", "li", "span", "q"}
    assert elements.tags.count("style") == 1 and elements.tags.count("b") == 3  # the KPIs' own, not the name's
    assert not {"href", "src", "onerror", "onload", "xlink:href"} & set(elements.attributes)
    text = "".join(elements.text)
    assert "<script>alert('title')</script>" in text and 'EVIL-1"><script>alert(1)</script>' in text
    assert "<b>export</b>.jsonl" in text
    assert "default-src 'none'" in html


def test_counts_and_neediest_first():
    tally = tally_of(RECORDS)
    assert tally.total == 4 and sum(count for count, _ in tally.per_type.values()) == 4
    keys = [ticket.key for ticket in tally.neediest()]
    verdicts = [ticket.verdict for ticket in tally.neediest()]
    assert sorted(keys) == sorted(r.key for r in RECORDS)
    assert verdicts == sorted(verdicts, key=lambda v: v == "ready")  # every needs-info before any ready
    html = render_report(tally, source="x.jsonl", config_source="defaults", with_llm=False)
    assert "Tickets most in need (4 of 4)" in html


def test_keeps_only_the_top_n():
    records = [ExportRecord(key=f"T-{n}", title=f"Ticket {n}", body="Upgrade Jetty from 9.2 to 9.4.", type="task")
               for n in range(30)] + [RECORDS[2]]
    tally = tally_of(records, keep=3)
    assert tally.total == 31 and len(tally.neediest()) == 3
    assert tally.neediest()[0].key == "BUG-2"


CHROMIUM = shutil.which("chromium")


@pytest.mark.server
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_chromium_shows_the_report(tmp_path):
    report = tmp_path / "report.html"
    report.write_text(render_report(tally_of(RECORDS), source="backlog.jsonl", config_source="defaults",
                                    with_llm=False), encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", report.as_uri()], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    shown = parsed(dom)
    assert "script" not in shown.tags and "a" not in shown.tags and "img" not in shown.tags
    assert "iframe" not in shown.tags and shown.tags.count("style") == 1
    text = re.sub(r"\s+", " ", " ".join(shown.text))
    assert "Backlog readiness" in text and "backlog.jsonl · 4 tickets · rules only" in text
    assert "<script>alert('title')</script>" in text and "BUG-2" in text
    assert shown.tags.count("svg") == 3 and shown.tags.count("tr") == 5  # header row and four tickets
    screenshot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, *flags, "--window-size=1200,1600", f"--screenshot={screenshot}", report.as_uri()],
                   capture_output=True, check=True, timeout=120)
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 20_000

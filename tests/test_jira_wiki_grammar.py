"""handlers/jira/wiki_grammar.py must convert exactly as jira2markdown.convert does, only faster."""

from __future__ import annotations

import csv
import re
import threading
from pathlib import Path

import pytest
from jira2markdown import convert as reference

from reqgate.handlers.jira.wiki_grammar import convert

JIRA_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "jira-tickets-dev"

SAMPLES = [
    "",
    "plain text, nothing to convert - really.",
    "h3. Steps\n# open the form\n## nested step\n# press *Save*\n\nh1.not a heading",
    "  h2. indented heading\n* one\n* two\n** deeper\n- dash item\n\n#* mixed\n",
    "||head||other||\n|cell with [a link|http://x.org/a-b-c]|{{mono}}|\n|[~jdoe]|!img.png!|\n\nafter",
    "{code:java}\nint x = a*b - c;\n{code}\n{noformat}\n*not bold*\n{noformat}",
    "bq. quoted line\nbq. another\n----\n{quote}\nblock *quote*\n{quote}",
    "-struck- +under+ ^sup^ ~sub~ ??cite?? a -- b --- c \\\\ break * lone star",
    "{color:red}warning{color} see https://example.org/a-b_c*d and HTTP://X.ORG/-x-",
    "[mailto:a@b.org] [Alias|mailto:a@b.org] [^attachment.txt] {panel:title=T}\ninside\n{panel}",
    "1. markdown list\n2. stays\n\n- item - with - dashes\n  - indented",
    # Where the scans jump: a last list row running on over other lines, effects whose close is only found
    # past white space and a line end, or behind a colour, link or mention they must skip over.
    "- one\n- two (see log)\n[WARNING] a\n[WARNING] 'x' is *missing* @ line 39\n\nafter [~jdoe]",
    "*bold over \n*next* line -strike {color:red}-{color} here- and *{color:blue}*{color}*",
    "-a [link|http://x.org/-b-] c- +u [~someone] v+ ^x\u00a0^ ~y \t\n~ ??q {quote}?? ??",
    "|cell -x- |*b* [a|b]|\n|{code}c{code}|\n# item {panel}p{panel} *z*\n# next",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_same_output_as_jira2markdown(text):
    assert convert(text) == reference(text)


def test_list_state_does_not_leak_between_texts():
    texts = ["** broken nesting without end", "# one\n# two", "*** x\n* y", "# one\n# two"]
    assert [convert(t) for t in texts] == [reference(t) for t in texts]


def test_threads_get_their_own_grammar():
    text = "# one\n## two\n* three\n||a||b||\n|1|2|"
    expected = reference(text)
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.extend(convert(text) for _ in range(3))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 9


@pytest.mark.skipif(not JIRA_DEV.is_dir(), reason="../shared/data/jira-tickets-dev is not beside the project")
def test_same_output_on_real_tickets():
    # Short tickets with markup from every dev project: the reference needs seconds for a long one.
    bodies = []
    for path in sorted(JIRA_DEV.glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            rows = [re.sub(r" {2,}", "\n", row["description"]) for row in csv.DictReader(handle)]
        bodies += [b for b in rows if re.search(r"[#*{|\[]", b) and 80 < len(b) < 500][:3]
    assert len(bodies) >= 12
    assert [convert(b) for b in bodies] == [reference(b) for b in bodies]

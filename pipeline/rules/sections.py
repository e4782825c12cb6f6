"""Headings in markdown, Jira wiki markup and plain text, and the sections they open.

A heading is a markdown heading ("## Steps"), a Jira heading ("h3. Steps"), a line that is only bold text
("**Steps**") or a short line ending with a colon ("Steps to reproduce:").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING_RE = re.compile(
    r"^[ \t>]*(?:"
    r"#{1,6}[ \t]+(?P<md>[^\n]{1,80}?)[ \t#]*"
    r"|h[1-6]\.[ \t]+(?P<jira>[^\n]{1,80}?)"
    r"|(?:\*\*|__)(?P<bold>[^\n*_]{1,80}?)(?:\*\*|__)[ \t]*:?"
    r"|\*(?P<jbold>[^\n*]{1,80}?)\*[ \t]*:?"  # Jira bold
    r"|(?P<colon>[A-Za-z][^\n:]{0,60}?)[ \t]*:"
    r")[ \t]*$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Heading:
    start: int  # start of the heading line
    end: int  # end of the heading line
    label: str


@dataclass(frozen=True)
class Section:
    heading: Heading
    content_start: int
    content_end: int


def headings(text: str) -> list[Heading]:
    found = []
    for m in _HEADING_RE.finditer(text):
        group = next(g for g in ("md", "jira", "bold", "jbold", "colon") if m.group(g) is not None)
        found.append(Heading(m.start(), m.end(), m.group(group).strip(" \t*_:")))
    return found


def sections(text: str, all_headings: list[Heading], name: re.Pattern[str]) -> list[Section]:
    """Sections whose heading matches `name` (fullmatch); each runs to the next heading or the end."""
    found = []
    for i, heading in enumerate(all_headings):
        if name.fullmatch(heading.label):
            end = all_headings[i + 1].start if i + 1 < len(all_headings) else len(text)
            found.append(Section(heading, min(heading.end + 1, end), end))
    return found


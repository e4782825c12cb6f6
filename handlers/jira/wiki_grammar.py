"""jira2markdown's conversion, built once per thread and told early where no markup can start.

`jira2markdown.convert` builds its whole pyparsing grammar on every call and then tries each of its 28
elements at every character of the text: well under a thousand characters a second, which makes a backlog of
Jira tickets take hours. Here the grammar is built once per thread (its list elements keep indentation state,
so it is neither shared between threads nor carried from one text to the next), and both of its entry points
first look ahead for a character that some element can start with. A position where none can start fails at
once instead of after 28 attempts; since every element's first consumed character is in the look-ahead,
the output is the library's, character for character (tests/test_jira_wiki_grammar.py compares them).
"""

from __future__ import annotations

import re
import threading

from jira2markdown.elements import MarkupElements
from jira2markdown.markup.lists import List
from pyparsing import FollowedBy, Forward, MatchFirst, Regex

# What each element of MarkupElements starts with, after the zero-width conditions (line start, preceded by
# a non-word character) and the optional white space some of them (lists, headings, quotes, rulers, tables)
# consume first: list bullets `* - #`, `{` macros and `{{monospace}}`, `[` links, mentions and attachments,
# `!image!`, `|` tables, the text effects `* - + ^ ~ ??`, dashes, `\\` breaks, `h1.` .. `h6.`, `bq.`, and
# bare URLs, which the library keeps whole so their characters are not read as text effects.
_CAN_START = Regex(r"\s*(?:[-*#{\[!|+^~\\]|\?\?|h[1-6]\. |bq\. )|(?:https?|ftp)://", flags=re.IGNORECASE)

_local = threading.local()


class _Grammar:
    def __init__(self) -> None:
        usernames: dict[str, str] = {}
        self.inline, self.markup = Forward(), Forward()
        instances = [element(inline_markup=self.inline, markup=self.markup, usernames=usernames)
                     for element in MarkupElements()]
        self.lists = [instance for instance in instances if isinstance(instance, List)]
        inline = [instance.expr for instance in instances if instance.is_inline_element]
        self.inline <<= FollowedBy(_CAN_START) + MatchFirst(inline)
        self.markup <<= FollowedBy(_CAN_START) + MatchFirst([instance.expr for instance in instances])

    def convert(self, text: str) -> str:
        # A fresh grammar starts every list at indent 0; a failed list match can leave another value behind.
        for element in self.lists:
            element.indent_state.reset()
        return self.markup.transform_string(text)


def convert(text: str) -> str:
    """`jira2markdown.convert(text)`, the same output, faster."""
    grammar = getattr(_local, "grammar", None)
    if grammar is None:
        grammar = _local.grammar = _Grammar()
    return grammar.convert(text)

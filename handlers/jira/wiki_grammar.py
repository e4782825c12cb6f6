"""jira2markdown's conversion, built once per thread and told early where no markup can start.

`jira2markdown.convert` builds its whole pyparsing grammar on every call and then tries each of its 28
elements at every character of the text: well under a thousand characters a second, which makes a backlog of
Jira tickets take hours. Here the grammar is built once per thread (its list elements keep indentation state,
so it is neither shared between threads nor carried from one text to the next), and each element first looks
ahead, with one regular expression, for what it can start with: a position where an element cannot start
fails at once instead of after a walk through its pyparsing expression, and one where none can start
fails before any is tried. Since each look-ahead admits every start of its element, the output is the
library's, character for character (tests/test_jira_wiki_grammar.py compares them).
"""

from __future__ import annotations

import re
import threading

from jira2markdown.elements import MarkupElements
from jira2markdown.markup.advanced import Code, Noformat, Panel
from jira2markdown.markup.headings import Headings
from jira2markdown.markup.images import Image
from jira2markdown.markup.links import Attachment, Link, MailTo, Mention, Url
from jira2markdown.markup.lists import List, OrderedList, UnorderedList
from jira2markdown.markup.tables import Table
from jira2markdown.markup.text_breaks import LineBreak, Mdash, Ndash, Ruler
from jira2markdown.markup.text_effects import (
    BlockQuote,
    Bold,
    Color,
    EscSpecialChars,
    InlineQuote,
    Monospaced,
    Quote,
    Strikethrough,
    Subscript,
    Superscript,
    Underline,
)
from pyparsing import FollowedBy, Forward, MatchFirst, Regex

# Where each element of MarkupElements can start a match, after its zero-width conditions (line start,
# preceded by a non-word character): the white space some consume first (lists, headings, quotes, rulers,
# tables), then its first character. Bare URLs are matched (and kept whole) so that their characters are
# not read as text effects. An element missing here (a later jira2markdown) is tried wherever any can start.
_STARTS: dict[type, str] = {
    UnorderedList: r"[ \t]*[-*#]", OrderedList: r"[ \t]*[-*#]",
    Code: r"\{", Noformat: r"\{", Monospaced: r"\{", Panel: r"\{", BlockQuote: r"\{", Color: r"\{",
    Mention: r"\[", MailTo: r"\[", Attachment: r"\[", Link: r"\[",
    Url: r"(?:https?|ftp)://", Image: r"!", Table: r"\s*\|", Headings: r"\s*h[1-6]\. ", Quote: r"\s*bq\. ",
    Bold: r"\*", EscSpecialChars: r"\*", Strikethrough: r"-", Ndash: r"-", Mdash: r"-", Underline: r"\+",
    Superscript: r"\^", Subscript: r"~", InlineQuote: r"\?\?", LineBreak: r"\\\\", Ruler: r"\\\\|\s*-",
}
_ANY = "|".join(f"(?:{pattern})" for pattern in dict.fromkeys(_STARTS.values()))


def _starts(pattern: str) -> FollowedBy:
    return FollowedBy(Regex(pattern, flags=re.IGNORECASE))


_local = threading.local()


class _Grammar:
    def __init__(self) -> None:
        usernames: dict[str, str] = {}
        self.inline, self.markup = Forward(), Forward()
        instances = [element(inline_markup=self.inline, markup=self.markup, usernames=usernames)
                     for element in MarkupElements()]
        self.lists = [instance for instance in instances if isinstance(instance, List)]
        guarded = [(instance, _starts(_STARTS.get(type(instance), _ANY)) + instance.expr) for instance in instances]
        self.inline <<= _starts(_ANY) + MatchFirst([expr for instance, expr in guarded if instance.is_inline_element])
        self.markup <<= _starts(_ANY) + MatchFirst([expr for _, expr in guarded])

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

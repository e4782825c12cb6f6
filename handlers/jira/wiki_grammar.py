"""jira2markdown's conversion, built once per thread and told early where no markup can start.

`jira2markdown.convert` builds its whole pyparsing grammar on every call and then tries each of its 28
elements at every character of the text: well under a thousand characters a second, which makes a backlog of
Jira tickets take hours. Here the grammar is built once per thread (its list elements keep indentation state,
so it is neither shared between threads nor carried from one text to the next), and each element first looks
ahead, with one regular expression, for what it can start with: a position where an element cannot start
fails at once instead of after a walk through its pyparsing expression, and the scan jumps from one position
where some element can start to the next (pyparsing's own scan tries every character, at some
microseconds each). Since each look-ahead admits every start of its element, the output is the library's,
character for character (tests/test_jira_wiki_grammar.py compares them).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator

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
from pyparsing import FollowedBy, Forward, MatchFirst, ParseException, ParserElement, Regex

from reqgate.handlers.jira.wiki_skip import make_jumping


def _quoted_start(token: str) -> str:
    """Where `*bold*` or `-struck-` can start: the token after a non-word character (or at the start), not
    followed by white space or itself, and later on the line a closing token (after a non-space, before a
    non-word character: a token after white space is skipped over, not a close). The element also skips
    `{color}`, links, mentions and attachments, and white space then the token, which can cross the end of
    the line: a `[`, a `{`, or white space running over the line's end into the token admits the position."""
    return (rf"(?:(?<![\s\S])|(?<=\W)){token}(?![ \t\r\n]|{token})"
            rf"(?=[^\n]*?(?:(?<![ \t\r\n]){token}(?!\w)|[{{\[]|[ \t\r]+\n[ \t\r\n]*{token}))")


# Where each element of MarkupElements can start a match, after its zero-width conditions (line start,
# preceded by a non-word character): the white space some consume first (lists, headings, quotes, rulers,
# tables), then its first character. Bare URLs are matched (and kept whole) so that their characters are
# not read as text effects. An element missing here (a later jira2markdown) is tried wherever any can start.
_STARTS: dict[type, str] = {
    UnorderedList: r"[ \t]*[-*#]", OrderedList: r"[ \t]*[-*#]",
    Code: r"\{", Noformat: r"\{", Monospaced: r"\{", Panel: r"\{", BlockQuote: r"\{", Color: r"\{",
    Mention: r"\[", MailTo: r"\[", Attachment: r"\[", Link: r"\[",
    Url: r"(?:https?|ftp)://", Image: r"!", Table: r"\s*\|", Headings: r"\s*h[1-6]\. ", Quote: r"\s*bq\. ",
    Bold: _quoted_start(r"\*"), EscSpecialChars: r"\*", Strikethrough: _quoted_start("-"), Ndash: r"-", Mdash: r"-",
    Underline: r"\+",
    Superscript: r"\^", Subscript: r"~", InlineQuote: r"\?\?", LineBreak: r"\\\\", Ruler: r"\\\\|\s*-",
}
_ANY = "|".join(f"(?:{pattern})" for pattern in dict.fromkeys(_STARTS.values()))
_NEXT_START = re.compile(_ANY, re.IGNORECASE)


def _starts(pattern: str) -> FollowedBy:
    return FollowedBy(Regex(pattern, flags=re.IGNORECASE))


_local = threading.local()


def _transform(expr: Forward, text: str) -> str:
    """`expr.transform_string(text)` as pyparsing computes it, trying only where an element can start."""
    ParserElement.reset_cache()
    parse = expr._parse
    out: list[str] = []
    last = loc = 0
    while (start := _NEXT_START.search(text, loc)) is not None:
        loc = start.start()
        try:
            end, tokens = parse(text, loc, callPreParse=False)
        except ParseException:
            loc += 1
            continue
        if end <= loc:
            loc += 1
            continue
        out.append(text[last:loc])
        out.extend(_flat(tokens.as_list()))
        last = loc = end
    out.append(text[last:])
    return "".join(out)


class _Scanned(Forward):
    """A grammar whose transform_string jumps between possible element starts: the elements convert their
    contents (list items, cells, bold text) through it too."""

    def transform_string(self, instring: str, *, debug: bool = False) -> str:
        return _transform(self, instring)


class _Grammar:
    def __init__(self) -> None:
        usernames: dict[str, str] = {}
        self.inline, self.markup = _Scanned(), _Scanned()
        instances = [element(inline_markup=self.inline, markup=self.markup, usernames=usernames)
                     for element in MarkupElements()]
        self.lists = [instance for instance in instances if isinstance(instance, List)]
        guarded = [(instance, _starts(_STARTS.get(type(instance), _ANY)) + instance.expr) for instance in instances]
        self.inline <<= _starts(_ANY) + MatchFirst([expr for instance, expr in guarded if instance.is_inline_element])
        self.markup <<= _starts(_ANY) + MatchFirst([expr for _, expr in guarded])
        for grammar in (self.inline, self.markup):
            grammar.keepTabs = True
            grammar.streamline()
        make_jumping(self.markup)
        # The scan below relies on jira2markdown's grammar skipping no white space before an element (its
        # default white characters are none): then the guard is a plain match at the position, and every
        # position before the next match of `_NEXT_START` would fail.
        if any(grammar.whiteChars or grammar.ignoreExprs for grammar in (self.inline, self.markup)):
            raise RuntimeError("jira2markdown's grammar now skips white space: the jumping scan would differ")

    def convert(self, text: str) -> str:
        # A fresh grammar starts every list at indent 0; a failed list match can leave another value behind.
        for element in self.lists:
            element.indent_state.reset()
        return _transform(self.markup, text)


def _flat(items: list[object]) -> Iterator[str]:
    """A match's tokens in order, nested lists flattened, as pyparsing's transform_string joins them."""
    for item in items:
        if isinstance(item, list):
            yield from _flat(item)
        else:
            yield str(item)


def convert(text: str) -> str:
    """`jira2markdown.convert(text)`, the same output, faster."""
    grammar = getattr(_local, "grammar", None)
    if grammar is None:
        grammar = _local.grammar = _Grammar()
    return grammar.convert(text)

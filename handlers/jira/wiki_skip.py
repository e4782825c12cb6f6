"""pyparsing's SkipTo, jumping over characters where nothing it tries can start.

jira2markdown's list rows, text effects, tables and links read their content with `SkipTo`, which at every
character tries the end it looks for, what it must skip over (`ignore`) and what stops it (`fail_on`), all
of which fail at almost every character. `first_chars` works out from an expression's structure which
characters a match can start with; a SkipTo whose three expressions all have such a set is switched to
`JumpingSkipTo`, which goes straight to the next such character (or the end of the text). At any other
character the original loop would only have failed and moved on, so the outcome is the same;
tests/test_jira_wiki_grammar.py compares the conversion with jira2markdown's own.
"""

from __future__ import annotations

import re

import pyparsing as pp
from pyparsing import ParseBaseException, ParseException, ParseResults


class _Unknown(Exception):
    """An expression whose first characters this module cannot tell."""


def first_chars(expr: pp.ParserElement) -> tuple[set[str], bool]:
    """The characters a match of `expr` can start with, and whether it can match without consuming any (then
    whatever follows it decides). Raises _Unknown for an expression it does not know."""
    chars, empty = _first_chars(expr)
    if expr.skipWhitespace and expr.whiteChars:
        chars = chars | set(expr.whiteChars)  # white space it skips before matching
    return chars, empty


def _first_chars(expr: pp.ParserElement) -> tuple[set[str], bool]:
    if isinstance(expr, (pp.LineEnd, pp.StringEnd)):
        return {"\n"}, False  # and the end of the text, where every jump also stops
    if isinstance(expr, pp.White):
        return set(expr.matchWhite), False
    if isinstance(expr, pp.Word):  # Char too
        return set(expr.initChars), False
    if isinstance(expr, pp.QuotedString):
        return {expr.quote_char[0]}, False
    if isinstance(expr, (pp.CaselessLiteral, pp.CaselessKeyword)) or (
            isinstance(expr, pp.Keyword) and expr.caseless):
        return ({expr.match[0].lower(), expr.match[0].upper()}, False) if expr.match else (set(), True)
    if isinstance(expr, (pp.Literal, pp.Keyword)):
        return ({expr.match[0]}, False) if expr.match else (set(), True)
    if isinstance(expr, (pp.Empty, pp.LineStart, pp.StringStart, pp.WordStart, pp.WordEnd, pp.PrecededBy,
                         pp.NotAny, pp.FollowedBy)):
        return set(), True  # zero width: what follows decides
    if isinstance(expr, (pp.Opt, pp.ZeroOrMore)):
        return first_chars(expr.expr)[0], True
    if isinstance(expr, (pp.OneOrMore, pp.TokenConverter, pp.Forward)) and expr.expr is not None:
        return first_chars(expr.expr)
    if isinstance(expr, pp.And):
        chars: set[str] = set()
        for part in expr.exprs:
            part_chars, empty = first_chars(part)
            chars |= part_chars
            if not empty:
                return chars, False
        return chars, True
    if isinstance(expr, pp.MatchFirst | pp.Or):
        chars, empty = set(), False
        for part in expr.exprs:
            part_chars, part_empty = first_chars(part)
            chars |= part_chars
            empty = empty or part_empty
        return chars, empty
    raise _Unknown(expr)


def _starts(skip: pp.SkipTo) -> re.Pattern[str] | None:
    """Where `skip`'s loop can do anything but move on, or None when that cannot be told."""
    exprs = [skip.expr, *skip.ignorer.ignoreExprs, *([skip.failOn] if skip.failOn is not None else [])]
    chars: set[str] = set()
    try:
        for expr in exprs:
            expr_chars, empty = first_chars(expr)
            if empty:
                return None
            chars |= expr_chars
    except _Unknown:
        return None
    return re.compile("[" + "".join(re.escape(char) for char in sorted(chars)) + "]")


class JumpingSkipTo(pp.SkipTo):
    """`SkipTo.parseImpl` of pyparsing 3.3, with the jump to the next character where something can match."""

    next_start: re.Pattern[str]

    def parseImpl(self, instring: str, loc: int, do_actions: bool = True) -> tuple[int, ParseResults]:
        startloc = loc
        instrlen = len(instring)
        self_expr_parse = self.expr._parse
        self_fail_on_can_parse_next = self.failOn.can_parse_next if self.failOn is not None else None
        ignorer_try_parse = self.ignorer.try_parse if self.ignorer.ignoreExprs else None
        next_start = self.next_start.search

        tmploc = loc
        while tmploc <= instrlen:
            found = next_start(instring, tmploc)
            tmploc = found.start() if found is not None else instrlen
            if self_fail_on_can_parse_next is not None and self_fail_on_can_parse_next(instring, tmploc):
                break
            if ignorer_try_parse is not None:
                prev_tmploc = tmploc
                while True:
                    try:
                        tmploc = ignorer_try_parse(instring, tmploc)
                    except ParseBaseException:
                        break
                    if tmploc == prev_tmploc:
                        break
                    prev_tmploc = tmploc
            try:
                self_expr_parse(instring, tmploc, do_actions=False, callPreParse=False)
            except (ParseException, IndexError):
                tmploc += 1
            else:
                break
        else:
            raise ParseException(instring, loc, self.errmsg, self)

        loc = tmploc
        skipresult = ParseResults(instring[startloc:loc])
        if self.includeMatch:
            loc, mat = self_expr_parse(instring, loc, do_actions, callPreParse=False)
            skipresult += mat
        return loc, skipresult


def make_jumping(root: pp.ParserElement) -> int:
    """Switch every SkipTo reachable from `root` whose starts can be told to JumpingSkipTo; how many."""
    seen: set[int] = set()
    stack = [root]
    switched = 0
    while stack:
        expr = stack.pop()
        if id(expr) in seen:
            continue
        seen.add(id(expr))
        if type(expr) is pp.SkipTo and (starts := _starts(expr)) is not None:
            expr.__class__ = JumpingSkipTo
            expr.next_start = starts  # type: ignore[attr-defined]
            switched += 1
        inner = getattr(expr, "expr", None)
        stack += [inner] if isinstance(inner, pp.ParserElement) else []
        stack += [e for e in getattr(expr, "exprs", ()) if isinstance(e, pp.ParserElement)]
        stack += list(getattr(expr, "ignoreExprs", ()) or ())
        if isinstance(expr, pp.SkipTo):
            stack += list(expr.ignorer.ignoreExprs) + ([expr.failOn] if expr.failOn is not None else [])
    return switched

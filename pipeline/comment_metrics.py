"""Two measures of a review comment (GitHub markdown), pure, for tests and `bench/eval_tickets.py`.

- `visible_lines`: the lines a reader sees before expanding anything: non-blank lines outside every
  `<details>` block, each folded block counting once for its `<summary>` line, HTML comments left out.
- `repeated_sentences`: how many sentences appear more than once in the whole comment, folded parts
  included (each extra occurrence counts one). A sentence is compared without case, markup (`*_` and backticks) or closing punctuation;
  fragments under four words ("none", table labels, "warn") are not advice and do not count.
"""

from __future__ import annotations

import re
from collections import Counter

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_DETAILS_OPEN = re.compile(r"<details\b[^>]*>", re.IGNORECASE)
_DETAILS_CLOSE = re.compile(r"</details\s*>", re.IGNORECASE)
_TAG = re.compile(r"(?<!\\)</?[A-Za-z][^>\n]*+>")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\s+·\s+")
_TABLE_DIVIDER = re.compile(r"^\|?[\s:|-]+\|?$")
MIN_WORDS = 4


def visible_lines(comment_markdown: str) -> int:
    text = _HTML_COMMENT.sub("", comment_markdown)
    count = 0
    depth = 0
    for line in text.splitlines():
        opens = len(_DETAILS_OPEN.findall(line))
        closes = len(_DETAILS_CLOSE.findall(line))
        if depth == 0 and opens:
            count += 1  # the summary line of a folded block
        elif depth == 0 and line.strip() and not closes:
            count += 1
        depth = max(depth + opens - closes, 0)
    return count


def _plain(line: str) -> str:
    line = _TAG.sub(" ", line)
    line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", "", line)
    line = re.sub(r"^\s*>\s?", "", line)
    return line


def _normal(sentence: str) -> str:
    # Markup and the closing punctuation do not make two sentences different; quoted words do.
    return " ".join(re.sub(r"[*_`\\]", "", sentence.casefold()).split()).rstrip(" .!?:;…")


def sentences(comment_markdown: str, min_words: int = MIN_WORDS) -> list[str]:
    """Every sentence of the comment, normalised; table cells are sentences of their own."""
    text = _HTML_COMMENT.sub("", comment_markdown)
    out: list[str] = []
    for raw in text.splitlines():
        if _TABLE_DIVIDER.match(raw.strip()) and "|" in raw:
            continue
        cells = raw.strip().strip("|").split("|") if raw.lstrip().startswith("|") else [raw]
        for cell in cells:
            for piece in _SENTENCE_END.split(_plain(cell)):
                normal = _normal(piece)
                if len(re.findall(r"\w+", normal)) >= min_words:
                    out.append(normal)
    return out


def repeated_sentences(comment_markdown: str) -> int:
    return sum(count - 1 for count in Counter(sentences(comment_markdown)).values() if count > 1)

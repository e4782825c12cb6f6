"""Bytes of a ticket file into text, or a clear refusal when the file is not text at all.

Tickets pasted from old tools come as UTF-8 (with or without a BOM), as Windows-1252, or as UTF-16 with a
BOM (Notepad's "Unicode"). Anything else is refused rather than decoded with replacement characters: a
PNG or random bytes read that way once came out as a "Ready" ticket.
"""

from __future__ import annotations

import codecs
import unicodedata

# Signatures of files people point a command at by mistake, to name what they gave.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"\x7fELF", "an ELF executable"),
    (b"PK\x03\x04", "a ZIP archive (or a .docx / .xlsx document)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office document"),
    (b"SQLite format 3\x00", "an SQLite database"),
)
# Text keeps control characters to tabs, line and page breaks; binary data is full of them. A few are
# tolerated (an escape sequence pasted from a terminal), a share above this is not text.
_MAX_CONTROL_SHARE = 0.01
_TEXT_CONTROLS = frozenset("\t\n\r\f\v")


class NotText(ValueError):
    """The bytes are not a text file; the message says what they look like."""


def _kind(raw: bytes) -> str | None:
    return next((kind for magic, kind in _MAGIC if raw.startswith(magic)), None)


def _looks_binary(text: str) -> bool:
    if "\x00" in text:
        return True
    controls = sum(1 for ch in text if ch not in _TEXT_CONTROLS and unicodedata.category(ch) == "Cc")
    return controls > max(2, len(text) * _MAX_CONTROL_SHARE)


def decode_ticket(raw: bytes) -> str:
    """The text of a ticket file. Raises `NotText` for images, executables, archives and random bytes."""
    kind = _kind(raw)
    if kind is not None:
        raise NotText(f"this is {kind}, not a text file")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encodings: tuple[str, ...] = ("utf-16",)
    else:
        encodings = ("utf-8-sig", "cp1252")
    for encoding in encodings:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if _looks_binary(text):
            break
        return text
    raise NotText("this is not text in UTF-8, UTF-16 or Windows-1252 (a binary file?)")

"""Shapes of text the secret finders share: what a UUID is, and what a word inside an identifier is."""

from __future__ import annotations

import re

UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
# A word of three or more letters in one case, or capitalised: what identifiers and prose are built of.
WORD = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}")

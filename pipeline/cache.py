"""Reviews kept by content hash, so that an unchanged ticket costs no LLM call."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Protocol

from reqgate.pipeline.schemas import ReviewResult


class ResultCache(Protocol):
    def get(self, content_hash: str) -> ReviewResult | None: ...

    def put(self, content_hash: str, result: ReviewResult) -> None: ...


class MemoryCache:
    def __init__(self) -> None:
        self._items: dict[str, ReviewResult] = {}

    def get(self, content_hash: str) -> ReviewResult | None:
        return self._items.get(content_hash)

    def put(self, content_hash: str, result: ReviewResult) -> None:
        self._items[content_hash] = result


class FileCache:
    """One JSON file per review. Results hold only redacted text, so the files are safe to keep."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, content_hash: str) -> Path:
        return self.directory / f"{content_hash}.json"

    def get(self, content_hash: str) -> ReviewResult | None:
        try:
            return ReviewResult.model_validate_json(self._path(content_hash).read_bytes())
        except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
            # A missing, unreadable or outdated entry is just a miss: the review runs again.
            return None

    def put(self, content_hash: str, result: ReviewResult) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(result.model_dump_json())
        os.replace(tmp, self._path(content_hash))


def default_cache_dir() -> Path:
    base = os.environ.get("REQGATE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "reqgate"
    )
    return Path(base)

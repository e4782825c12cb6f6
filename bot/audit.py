"""`reqgate audit`'s loop: the review `reqgate review` gives, over every record of an export, one at a time.

Records are read, reviewed and handed on lazily, so a backlog of any size costs the memory of one ticket
(plus whatever the caller keeps). Offline (rules only) unless the caller asks for the LLM.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from reqgate.handlers.export import ExportRecord, to_packet
from reqgate.pipeline.cache import ResultCache
from reqgate.pipeline.config import Config
from reqgate.pipeline.config_loader import load_config
from reqgate.pipeline.llm import LLMClient
from reqgate.pipeline.review import review
from reqgate.pipeline.schemas import ReviewResult

__all__ = ["Audited", "ExportRecord", "audit"]


class Audited(NamedTuple):
    key: str
    result: ReviewResult


def audit(
    records: Iterable[ExportRecord],
    config: Config | None = None,
    *,
    offline: bool = True,
    llm: LLMClient | None = None,
    cache: ResultCache | None = None,
    config_source: str = "defaults",
) -> Iterator[Audited]:
    """Review each record as `reqgate review` would and yield `(key, ReviewResult)` as soon as it is done.

    `config` defaults to the packaged defaults. With `offline` (the default) no LLM is asked whatever `llm`
    is; otherwise `llm`, or a client from the environment when there is an API key.
    """
    if config is None:
        loaded = load_config()
        config, config_source = loaded.config, loaded.source_label
    client = None if offline else (llm or LLMClient.from_env(config.llm))
    batch = uuid.uuid4().hex[:8]
    for index, record in enumerate(records):
        result = review(to_packet(record), config, client, cache=cache, run_id=f"audit:{batch}:{index}",
                        config_source=config_source)
        yield Audited(record.key, result)

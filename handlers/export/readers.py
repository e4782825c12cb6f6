"""Read a tracker export as a stream of ExportRecords, whatever its format.

Formats, told apart by their first bytes:
- a JSON list as GitHub's (`number`, `title`, `body`, `labels[].name`, `type.name`) or GitLab's (`iid`,
  `title`, `description`, `labels`, `issue_type`) issue API returns it; GitHub's pull requests are skipped;
- JSON Lines, one `{"key", "title", "body", "format", "type"?, "labels"?}` object a line;
- Jira's "Export CSV" (`Issue key`, `Summary`, `Description` in wiki markup, `Issue Type`, one `Labels`
  column per label).
Everything is read as it is needed, so an export of any size costs the memory of one ticket.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import ValidationError

from reqgate.handlers.export.records import ExportRecord

ExportFormat = Literal["json", "jsonl", "jira-csv"]
# Jira Cloud lets the exporting user pick the delimiter; a comma is the default.
_DELIMITERS = (",", ";", "\t", "|")
_CHUNK = 1 << 20
_JIRA_REQUIRED = ("Issue key", "Summary")


class ExportError(ValueError):
    """The export cannot be read; the message says where and what to do about it."""


def detect(path: Path) -> ExportFormat:
    """JSON list, JSON Lines or Jira CSV, from the first characters; anything else is an ExportError."""
    with _open(path) as handle:
        head = handle.read(4096)
    start = head.lstrip()
    if start.startswith("["):
        return "json"
    if start.startswith("{"):
        return "jsonl"
    if _delimiter(start.split("\n", 1)[0]) is not None:
        return "jira-csv"
    if not start:
        raise ExportError(f"{path} is empty")
    raise ExportError(
        f"{path}: not a format reqgate audit reads. Give a Jira CSV export (a header with "
        f"{' and '.join(map(repr, _JIRA_REQUIRED))}), a JSON list of GitHub or GitLab issues, "
        'or JSON Lines of {"key", "title", "body", "format"} objects'
    )


def _delimiter(header: str) -> str | None:
    for delimiter in _DELIMITERS:
        names = next(csv.reader([header.rstrip("\r")], delimiter=delimiter), [])
        if all(name in names for name in _JIRA_REQUIRED):
            return delimiter
    return None


def read_export(path: Path) -> Iterator[ExportRecord]:
    """The records of `path`, one at a time. Raises ExportError (with the line or item) on bad content."""
    kind = detect(path)
    if kind == "json":
        return _json_list(path)
    if kind == "jsonl":
        return _json_lines(path)
    return _jira_csv(path)


def _open(path: Path) -> IO[str]:
    try:
        # utf-8-sig: spreadsheets and Windows tools put a byte-order mark before the first header.
        return path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise ExportError(f"cannot read {path}: {exc.strerror or exc}") from None


def _problem(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'record'}: {e['msg']}" for e in exc.errors())


def _json_lines(path: Path) -> Iterator[ExportRecord]:
    with _open(path) as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield ExportRecord.model_validate_json(line)
            except ValidationError as exc:
                raise ExportError(f"{path}, line {number}: {_problem(exc)}") from None


def _json_list(path: Path) -> Iterator[ExportRecord]:
    for index, item in enumerate(_array_items(path)):
        if not isinstance(item, dict):
            raise ExportError(f"{path}, item {index}: an issue object expected, found {type(item).__name__}")
        if "pull_request" in item:
            continue
        try:
            yield _api_issue(item)
        except (ValidationError, ExportError) as exc:
            why = _problem(exc) if isinstance(exc, ValidationError) else str(exc)
            raise ExportError(f"{path}, item {index}: {why}") from None


def _api_issue(item: dict[str, Any]) -> ExportRecord:
    labels = [label.get("name", "") if isinstance(label, dict) else str(label) for label in item.get("labels") or []]
    if "iid" in item:  # GitLab
        reference = (item.get("references") or {}).get("full")
        return ExportRecord(key=reference or f"#{item['iid']}", title=item.get("title") or "",
                            body=item.get("description") or "", type=item.get("issue_type"), labels=labels)
    if "number" in item:  # GitHub
        repository = str(item.get("repository_url") or "").rsplit("/repos/", 1)
        prefix = repository[1] if len(repository) == 2 else ""
        issue_type = item.get("type")
        return ExportRecord(key=f"{prefix}#{item['number']}", title=item.get("title") or "",
                            body=item.get("body") or "",
                            type=issue_type.get("name") if isinstance(issue_type, dict) else issue_type,
                            labels=labels)
    raise ExportError("neither a GitHub issue (`number`) nor a GitLab issue (`iid`)")


def _array_items(path: Path) -> Iterator[Any]:
    """The items of a top-level JSON array, decoded one by one from a buffer refilled as needed."""
    decoder = json.JSONDecoder()
    with _open(path) as handle:
        buffer = handle.read(_CHUNK)
        position = buffer.index("[") + 1  # detect() saw it first
        expect_item, first, count = True, True, 0

        def refill() -> bool:
            nonlocal buffer, position
            chunk = handle.read(_CHUNK)
            buffer, position = buffer[position:] + chunk, 0
            return bool(chunk)

        while True:
            while position < len(buffer) and buffer[position] in " \t\r\n":
                position += 1
            if position >= len(buffer):
                if not refill():
                    raise ExportError(f"{path}: the JSON list is not closed (truncated file?)")
                continue
            char = buffer[position]
            if char == "]" and (first or not expect_item):
                return
            if not expect_item:
                if char != ",":
                    raise ExportError(f"{path}: malformed JSON list: expected , or ] after item {count - 1}")
                position, expect_item = position + 1, True
                continue
            try:
                item, end = decoder.raw_decode(buffer, position)
            except json.JSONDecodeError as exc:
                if refill():  # the item may go on in the next chunk
                    continue
                raise ExportError(f"{path}: invalid JSON in the list: {exc.msg}") from None
            if end == len(buffer) and refill():
                continue  # a number cut at the chunk's end: decode it again whole
            yield item
            count += 1
            position, expect_item, first = end, False, False


def _jira_csv(path: Path) -> Iterator[ExportRecord]:
    csv.field_size_limit(sys.maxsize)
    with _open(path) as handle:
        delimiter = _delimiter(handle.readline()) or ","
        handle.seek(0)
        rows = csv.reader(handle, delimiter=delimiter)
        header = next(rows)
        column = {name: header.index(name) for name in reversed(header)}
        labels_at = [index for index, name in enumerate(header) if name == "Labels"]
        description_at, type_at = column.get("Description"), column.get("Issue Type")
        key_at, summary_at = column["Issue key"], column["Summary"]

        def cell(row: list[str], index: int | None) -> str:
            return row[index] if index is not None and index < len(row) else ""

        for row in rows:
            if not any(row):
                continue
            try:
                yield ExportRecord(key=cell(row, key_at), title=cell(row, summary_at),
                                   body=cell(row, description_at), format="jira-wiki",
                                   type=cell(row, type_at) or None,
                                   labels=[label for label in (cell(row, i) for i in labels_at) if label])
            except ValidationError as exc:
                raise ExportError(f"{path}, line {rows.line_num}: {_problem(exc)}") from None

"""Tracker exports (Jira CSV, GitHub and GitLab issue JSON, JSON Lines) read as a stream of records."""

from reqgate.handlers.export.readers import ExportError, ExportFormat, detect, read_export
from reqgate.handlers.export.records import BodyFormat, ExportRecord, to_packet

__all__ = ["BodyFormat", "ExportError", "ExportFormat", "ExportRecord", "detect", "read_export", "to_packet"]

"""`reqgate` command line. `reqgate review` shows what the bot would say about a ticket file."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reqgate.bot.audit_cli import add_audit_parser
from reqgate.bot.github_cli import add_github_parser
from reqgate.bot.serve_cli import add_replay_parser, add_serve_parser
from reqgate.bot.ticket_text import NotText, decode_ticket
from reqgate.pipeline.ticket_type import TicketType

if TYPE_CHECKING:
    from reqgate.pipeline.schemas import RequirementPacket, ReviewResult

# The pipeline, the LLM client and the server are imported by the command that runs them, not here:
# `reqgate --help` and an offline review start in a fraction of the time (bench/bench_cli.py), and never
# load the Anthropic SDK, DBOS or the trackers' clients (tests/test_cli_imports.py).

EXIT_READY, EXIT_NEEDS_INFO, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(Exception):
    """Something the user gave us cannot be used; the message says what and how to fix it."""


def split_ticket(text: str) -> tuple[str, str]:
    """Title is the first non-empty line (a leading markdown `#` heading marker is dropped); body the rest."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for index, line in enumerate(lines):
        if line.strip():
            title = line.strip().lstrip("#").strip()
            return title, "\n".join(lines[index + 1:]).strip("\n")
    return "", ""


def read_ticket(source: str, type_name: str | None) -> RequirementPacket:
    from reqgate.pipeline.schemas import RequirementPacket

    if source == "-":
        raw = sys.stdin.buffer.read()
        key = "stdin"
    else:
        path = Path(source)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise BadInput(f"cannot read {source}: {exc.strerror or exc}") from None
        key = path.stem
    try:
        text = decode_ticket(raw)
    except NotText as exc:
        raise BadInput(f"{source}: {exc}; give a ticket as a text or markdown file") from None
    title, body = split_ticket(text)
    if not (title or body):
        raise BadInput(f"{source} is empty: write a title on the first line and the ticket below it")
    type_hint = TicketType.coerce(type_name) if type_name else None
    return RequirementPacket(source="cli", key=key, title=title, body=body, type_hint=type_hint, url=None)


def configure_logs() -> None:
    """Standard output carries the review (or its JSON); logs go to standard error, warnings and worse only.
    Loading structlog costs as much as the rest of a rules-only review, which logs nothing."""
    from reqgate.bot.logging import StandardStream, configure, route_library_logs

    level = os.environ.get("REQGATE_LOG_LEVEL", "WARNING")
    configure(level, stream=StandardStream("stderr"))
    route_library_logs(level, stream=StandardStream("stderr"))  # type: ignore[arg-type]


class _WarningCache:
    """The review cache of the command line: a folder it cannot write is worth a warning, not a failure."""

    def __init__(self, directory: Path) -> None:
        from reqgate.pipeline.cache import FileCache

        self._files = FileCache(directory)
        self._directory = directory
        self._warned = False

    def get(self, content_hash: str) -> ReviewResult | None:
        return self._files.get(content_hash)

    def put(self, content_hash: str, result: ReviewResult) -> None:
        try:
            self._files.put(content_hash, result)
        except OSError as exc:
            if not self._warned:
                self._warned = True
                print(f"reqgate: warning: cannot write the review cache {self._directory}: "
                      f"{exc.strerror or exc} (set REQGATE_CACHE_DIR, or pass --no-cache)", file=sys.stderr)


def run_review(args: argparse.Namespace) -> int:
    from reqgate.pipeline.cache import default_cache_dir
    from reqgate.pipeline.config_loader import ConfigError, load_config, read_layer
    from reqgate.pipeline.review import review

    try:
        packet = read_ticket(args.ticket, args.type)
        layers = [read_layer(Path(args.config))] if args.config else []
        loaded = load_config(*layers)
    except BadInput as exc:
        print(f"reqgate: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ConfigError as exc:
        print("reqgate: invalid configuration:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        print(f"reqgate: cannot read {args.config}: {reason or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT

    has_key = bool(os.environ.get("ANTHROPIC_API_KEY", "").strip())
    if args.offline:
        llm = None
        why = "offline: no LLM was asked" + (" (ANTHROPIC_API_KEY is set; --offline wins)" if has_key else "")
    else:
        from reqgate.pipeline.llm import LLMClient

        llm = LLMClient.from_env(loaded.config.llm)
        if llm is not None:
            configure_logs()
        why = "ANTHROPIC_API_KEY is not set; no LLM is asked"
    if llm is None:
        print(f"reqgate: rules-only review ({why}).", file=sys.stderr)
    cache = None if args.no_cache else _WarningCache(default_cache_dir())
    result = review(packet, loaded.config, llm, cache=cache, config_source=loaded.source_label)
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(result.comment_markdown, end="")
    return EXIT_READY if result.decision.verdict == "ready" else EXIT_NEEDS_INFO


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reqgate", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    rev = commands.add_parser("review", help="review a ticket file (markdown or text) and print the comment",
                              description="Exit code: 0 ready, 1 needs info, 2 bad input.")
    rev.add_argument("ticket", help="path of a ticket file, or - for standard input")
    rev.add_argument("--type", choices=[t.value for t in TicketType if t is not TicketType.other],
                     help="ticket type (default: guessed from the text)")
    rev.add_argument("--config", help="a reqgate.yml to merge over the defaults")
    rev.add_argument("--json", action="store_true", help="print the full review result as JSON")
    rev.add_argument("--offline", action="store_true", help="rules only, even when ANTHROPIC_API_KEY is set")
    rev.add_argument("--no-cache", action="store_true",
                     help="do not reuse earlier reviews (cache: REQGATE_CACHE_DIR, else ~/.cache/reqgate)")
    rev.set_defaults(handler=run_review)
    add_serve_parser(commands)
    add_replay_parser(commands)
    add_github_parser(commands)
    add_audit_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # A review sets its logs up only when it asks the LLM (run_review); `github manifest` logs nothing.
    if args.command in ("serve", "replay"):
        configure_logs()
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())

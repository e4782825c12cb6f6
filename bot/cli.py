"""`reqgate` command line. `reqgate review` shows what the bot would say about a ticket file."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from reqgate.bot.audit_cli import add_audit_parser
from reqgate.bot.logging import configure as configure_logging
from reqgate.bot.serve_cli import add_replay_parser, add_serve_parser
from reqgate.pipeline.cache import FileCache, default_cache_dir
from reqgate.pipeline.config_loader import ConfigError, load_config, read_layer
from reqgate.pipeline.llm import LLMClient
from reqgate.pipeline.review import review
from reqgate.pipeline.schemas import RequirementPacket, TicketType

EXIT_READY, EXIT_NEEDS_INFO, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(Exception):
    """Something the user gave us cannot be used; the message says what and how to fix it."""


def decode(raw: bytes) -> str:
    """Tickets pasted from old tools come as UTF-8 with a BOM or as Windows-1252; accept both."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def split_ticket(text: str) -> tuple[str, str]:
    """Title is the first non-empty line (a leading markdown `#` heading marker is dropped); body the rest."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for index, line in enumerate(lines):
        if line.strip():
            title = line.strip().lstrip("#").strip()
            return title, "\n".join(lines[index + 1:]).strip("\n")
    return "", ""


def read_ticket(source: str, type_name: str | None) -> RequirementPacket:
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
    title, body = split_ticket(decode(raw))
    if not (title or body):
        raise BadInput(f"{source} is empty: write a title on the first line and the ticket below it")
    type_hint = TicketType.coerce(type_name) if type_name else None
    return RequirementPacket(source="cli", key=key, title=title, body=body, type_hint=type_hint, url=None)


def run_review(args: argparse.Namespace) -> int:
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
    except OSError as exc:
        print(f"reqgate: cannot read {args.config}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT

    llm = None if args.offline else LLMClient.from_env(loaded.config.llm)
    if llm is None:
        why = "--offline" if args.offline else "ANTHROPIC_API_KEY is not set"
        print(f"reqgate: rules-only review ({why}); no LLM is asked.", file=sys.stderr)
    cache = None if args.no_cache else FileCache(default_cache_dir())
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
                     help=f"do not reuse earlier reviews (cache: {os.environ.get('REQGATE_CACHE_DIR') or default_cache_dir()})")
    rev.set_defaults(handler=run_review)
    add_serve_parser(commands)
    add_replay_parser(commands)
    add_audit_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    # Standard output carries the review (or its JSON); logs go to standard error, warnings and worse only.
    configure_logging(os.environ.get("REQGATE_LOG_LEVEL", "WARNING"), stream=sys.stderr)
    args = build_parser().parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())

"""`reqgate audit`: review a whole export at once. Registered on the `reqgate` command line by bot/cli.py.

Only argparse is imported here at start; the pipeline, the readers and the progress bar load when the
command runs, so that `reqgate --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

EXIT_OK, EXIT_BAD_INPUT = 0, 2
DEFAULT_TOP = 50


def add_audit_parser(subparsers: Any) -> None:
    audit = subparsers.add_parser(
        "audit", help="review every ticket of an export (Jira CSV, GitHub/GitLab issue JSON, JSON Lines)",
        description="Reviews each ticket as `reqgate review` would, rules only unless --llm is given, and "
                    "prints a summary. Exit code: 0 done, 2 bad input or configuration.",
    )
    audit.add_argument("export", help="a Jira CSV export, a JSON list of GitHub or GitLab issues, or JSON Lines "
                                      'of {"key", "title", "body", "format", "type"?, "labels"?}')
    mode = audit.add_mutually_exclusive_group()
    mode.add_argument("--offline", action="store_true", help="rules only (the default)")
    mode.add_argument("--llm", action="store_true",
                      help="also ask the LLM when ANTHROPIC_API_KEY is set (one or two calls per ticket)")
    audit.add_argument("--jsonl", metavar="OUT", help="write one JSON line per ticket: `reqgate review --json`'s "
                                                      'object plus "key"')
    audit.add_argument("--report", metavar="FILE.html", help="write a readiness report as one HTML file")
    audit.add_argument("--top", type=int, default=DEFAULT_TOP,
                       help=f"tickets listed in the report, most in need first (default {DEFAULT_TOP})")
    audit.add_argument("--config", help="a reqgate.yml to merge over the defaults")
    audit.add_argument("--no-cache", action="store_true", help="with --llm: do not reuse earlier reviews")
    audit.set_defaults(handler=run_audit)


def _fail(message: str) -> int:
    print(f"reqgate audit: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_audit(args: argparse.Namespace) -> int:
    from reqgate.bot.audit import audit
    from reqgate.bot.audit_summary import Tally
    from reqgate.handlers.export import ExportError, read_export
    from reqgate.pipeline.cache import FileCache, default_cache_dir
    from reqgate.pipeline.config_loader import ConfigError, load_config, read_layer
    from reqgate.pipeline.llm import LLMClient

    try:
        loaded = load_config(*([read_layer(Path(args.config))] if args.config else []))
    except ConfigError as exc:
        return _fail("invalid configuration:\n" + "\n".join(f"  {problem}" for problem in exc.problems))
    except OSError as exc:
        return _fail(f"cannot read {args.config}: {exc.strerror or exc}")
    try:
        records = read_export(Path(args.export))
    except ExportError as exc:
        return _fail(str(exc))

    llm = LLMClient.from_env(loaded.config.llm) if args.llm else None
    if args.llm and llm is None:
        print("reqgate audit: ANTHROPIC_API_KEY is not set; rules-only review.", file=sys.stderr)
    cache = FileCache(default_cache_dir()) if llm is not None and not args.no_cache else None
    tally = Tally(keep=max(args.top, 0))
    reviews = audit(records, loaded.config, offline=llm is None, llm=llm, cache=cache,
                    config_source=loaded.source_label)
    try:
        with ExitStack() as stack:
            out = stack.enter_context(Path(args.jsonl).open("w", encoding="utf-8")) if args.jsonl else None
            for key, result in progress_bar(reviews):
                if out is not None:
                    _write_line(out, key, result.model_dump_json())
                tally.add(key, result)
    except ExportError as exc:
        return _fail(f"{exc} (stopped after {tally.total} tickets)")
    except OSError as exc:
        return _fail(f"cannot write {args.jsonl}: {exc.strerror or exc}")

    print(tally.summary(), end="")
    if args.report:
        from reqgate.bot.audit_report import render_report

        try:
            Path(args.report).write_text(
                render_report(tally, source=Path(args.export).name, config_source=loaded.source_label,
                              with_llm=llm is not None),
                encoding="utf-8")
        except OSError as exc:
            return _fail(f"cannot write {args.report}: {exc.strerror or exc}")
        print(f"Report: {args.report}")
    return EXIT_OK


def _write_line(out: IO[str], key: str, review_json: str) -> None:
    """`{"key": ..., <the review's fields>}`: the review's own JSON with the key put first, not re-encoded."""
    from json import dumps

    out.write('{"key":' + dumps(key, ensure_ascii=False) + "," + review_json[1:] + "\n")


def progress_bar(items: Any) -> Any:
    """A bar on standard error once a run takes more than a second, and only on a terminal."""
    from tqdm import tqdm

    return tqdm(items, unit=" tickets", file=sys.stderr, delay=1.0, disable=None, dynamic_ncols=True)

"""Time of detection, redaction and log scrubbing on hostile 100 KiB values, per call.

    python bench/bench_guardrail_linear.py [--size BYTES] [--repeat N] [--all]

Each input is one short unit repeated to the size: the shapes that make a pattern backtrack or make a
finder do Python work per candidate (token prefixes, repeated separators, long runs of one class,
`password="` packed 20,000 times, `@` 100,000 times). For each it prints the milliseconds of one call
(best of N, CPU time) of `mask()` (every finder and the overlap resolution), of the log scrubber
(`bot.logging.scrub_text`) and of the injection screen, and the slowest single finder; `re.search` of an
absent literal over the same text is the baseline of this machine in this run. The issue's bound is
well under 100 ms per call; `--all` prints every finder's time.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reqgate.bot.logging import scrub_text
from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.guardrail import mask
from reqgate.pipeline.guardrail.detect import KINDS
from reqgate.pipeline.guardrail.injection import detect_injections

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.hostile_units import FORM_UNITS

UNITS = [
    'password="', "password: ", "password=", "pwd=", "<password>", "key: ", "token abc123def456 ", "token:\n",
    "Authorization: ", "Bearer ", "-u a:", "://u:p@", "@", "a@b.", "x@a-", "eyJ", "eyJaaaaa.", "ghp_", "sk-",
    "AKIA", "tskey-", "SG.", "-----BEGIN RSA PRIVATE KEY-----", "$2b$12$", "aB3xY9kL2mN8pQ4r ", "A1b2",
    "deadbeef", "deadbeef ", "cloudsmith ", "secret ", "a_", "a-b-", "1 ", "12-", "+1 ", "(415) 555-01",
    "4111 1111 1111 1111 ", "DE89 ", "a", "-", "=", "\n", " ", "\\n", "%40",
]
UNITS += FORM_UNITS
CONFIG = load_default_config()


def _best_ms(call: Callable[[str], Any], text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        result = call(text)
        if hasattr(result, "__next__"):
            for _item in result:
                pass
        best = min(best, time.process_time() - started)
    return best * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100 * 1024)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--all", action="store_true", help="print every finder's time")
    args = parser.parse_args(argv)
    injections = CONFIG.guardrail.injection
    print(f"{args.size} characters per input, ms per call (best of {args.repeat}, CPU time)")
    print(f"  {'unit':<34} {'re.search':>9} {'mask':>7} {'scrub':>7} {'inject':>7}  slowest finder")
    worst = 0.0
    for unit in UNITS:
        text = (unit * (args.size // len(unit) + 1))[:args.size]
        base = _best_ms(lambda t: re.search("zq#", t), text, args.repeat)
        masked = _best_ms(mask, text, args.repeat)
        scrubbed = _best_ms(scrub_text, text, args.repeat)
        screened = _best_ms(lambda t: detect_injections(t, injections), text, args.repeat)
        finders = {kind.name: _best_ms(kind.find, text, args.repeat) for kind in KINDS}
        slowest = max(finders, key=finders.__getitem__)
        worst = max(worst, masked, scrubbed, screened)
        print(f"  {unit!r:<34} {base:>9.2f} {masked:>7.1f} {scrubbed:>7.1f} {screened:>7.1f}  "
              f"{slowest} {finders[slowest]:.1f}")
        if args.all:
            print("      " + ", ".join(f"{name} {ms:.1f}" for name, ms in finders.items()))
    print(f"slowest call: {worst:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

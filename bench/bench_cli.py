"""How long the `reqgate` command takes to start, against the interpreter's own start-up in the same run.

    python bench/bench_cli.py [--repeat N] [--reqgate PATH]

Runs `python -c pass`, `reqgate --help` and `reqgate review examples/good-story.md --offline --no-cache`
N times each (default 10), interleaved so that a burst of load on the shared machine hits all three alike,
and prints the median wall time of each, the difference to bare Python and the ratio. Target: both
commands under 0.35 s. `reqgate` is the one beside this interpreter unless --reqgate names another (an
installed wheel's, say).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "good-story.md"
TARGET_S = 0.35


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run. On a loaded machine the wall time includes waiting for a core; the
    CPU time is what the command itself costs."""
    cpu, started = _cpu(), time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):  # review: 0 ready, 1 needs info
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}")
    return elapsed, _cpu() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--reqgate", default=str(Path(sys.executable).with_name("reqgate")))
    args = parser.parse_args()
    # Without an API key nothing can reach the LLM. Bytecode is written once (the warm-up run), as pip does
    # when it installs a wheel: a checkout whose environment forbids it would measure recompiling instead.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ANTHROPIC_") and k != "PYTHONDONTWRITEBYTECODE"}
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "reqgate --help": [args.reqgate, "--help"],
        "reqgate review --offline": [args.reqgate, "review", str(EXAMPLE), "--offline", "--no-cache"],
    }
    for argv in commands.values():  # warm the page cache and the bytecode files once, unmeasured
        run(argv, env)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, argv in commands.items():
            elapsed, cpu = run(argv, env)
            walls[name].append(elapsed)
            cpus[name].append(cpu)
    base, base_cpu = statistics.median(walls["python -c pass"]), statistics.median(cpus["python -c pass"])
    print(f"median of {args.repeat} runs, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    print(f"  {'':26} {'wall':>7}    {'cpu':>7}")
    print(f"  {'python -c pass':26} {base * 1000:7.0f} ms {base_cpu * 1000:7.0f} ms")
    failed = False
    for name in list(commands)[1:]:
        median, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        verdict = "PASS" if median < TARGET_S else "FAIL"
        failed |= median >= TARGET_S
        print(f"  {name:26} {median * 1000:7.0f} ms {cpu * 1000:7.0f} ms   wall +{(median - base) * 1000:.0f} ms "
              f"over python, {median / base:.1f}x   {verdict} < {TARGET_S * 1000:.0f} ms")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

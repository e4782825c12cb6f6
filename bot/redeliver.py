"""Missed GitHub deliveries, asked for again: periodically in every worker (one of them runs it per
interval, bot/pacing.py's lease) and on demand with `reqgate github redeliver --since 24h`.

A delivery is missed when none of its attempts got a 2xx from us and no workflow of ours carries its
GUID (we may have stored one whose answer GitHub did not wait for). Redelivering is idempotent: a
delivery that arrives twice runs once. GitHub App mode only: a token has no delivery log to read.
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel

from reqgate.bot.logging import get_logger

log = get_logger("reqgate.redeliver")
LEASE_KEY = "github:redeliver"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


class Redelivered(BaseModel):
    seen: int = 0
    failed: int = 0
    already_accepted: int = 0
    redelivered: list[str] = []
    errors: list[str] = []


def parse_duration(text: str) -> float:
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a duration: write e.g. 90s, 30m, 24h or 3d")
    return float(match.group(1)) * _UNIT_S[match.group(2)]


def redeliver_missed(deliveries: Any, lookback_s: float, accepted: Callable[[list[str]], set[str]]) -> Redelivered:
    """`deliveries` is a `reqgate.handlers.github.deliveries.AppDeliveries`; `accepted` names the GUIDs that
    already have a workflow."""
    from reqgate.handlers.github.deliveries import failed_guids

    listed = list(deliveries.since(datetime.now(UTC) - timedelta(seconds=lookback_s)))
    failed = failed_guids(listed)
    known = accepted(sorted(failed)) if failed else set()
    report = Redelivered(seen=len({d.guid for d in listed}), failed=len(failed), already_accepted=len(known))
    for guid, attempt in sorted(failed.items()):
        if guid in known:
            continue
        try:
            deliveries.redeliver(attempt.id)
            report.redelivered.append(guid)
        except Exception as exc:  # noqa: BLE001 - one refused redelivery does not stop the others
            report.errors.append(f"{guid}: {type(exc).__name__}: {exc}"[:300])
    log.info("github_redelivery", seen=report.seen, failed=report.failed, already_accepted=report.already_accepted,
             redelivered=len(report.redelivered), errors=len(report.errors))
    return report


def accepted_by(list_workflow_ids: Callable[[list[str]], list[str]]) -> Callable[[list[str]], set[str]]:
    """GUIDs whose workflow (`gh:<guid>`, handlers/base.py) exists."""

    def accepted(guids: list[str]) -> set[str]:
        found = set(list_workflow_ids([f"gh:{guid}" for guid in guids]))
        return {guid for guid in guids if f"gh:{guid}" in found}

    return accepted


class RedeliveryJob:
    """Every `interval_s`, in whichever worker takes the turn first."""

    def __init__(self, run: Callable[[], Redelivered], take_turn: Callable[[], bool], interval_s: float) -> None:
        self.run = run
        self.take_turn = take_turn
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="reqgate-redeliver", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        # Soon after start: the deliveries missed while no worker was up are the likeliest to be missing.
        wait = min(self.interval_s, 5.0)
        while not self._stop.wait(wait):
            wait = self.interval_s
            try:
                if self.take_turn():
                    self.run()
            except Exception as exc:  # noqa: BLE001 - GitHub or the database unreachable: next interval
                log.warning("github_redelivery_failed", error=f"{type(exc).__name__}: {exc}"[:300])

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


# ---- `reqgate github redeliver` -------------------------------------------------------------------


def run_redeliver(args: argparse.Namespace) -> int:
    from reqgate.bot.settings import Settings

    try:
        lookback = parse_duration(args.since)
        settings = Settings()
        key = settings.github_private_key_pem()
    except ValueError as exc:
        print(f"reqgate github redeliver: {exc}", file=sys.stderr)
        return 2
    if not settings.github_app_configured or settings.github_app_id is None or key is None:
        print("reqgate github redeliver: needs a GitHub App (REQGATE_GITHUB_APP_ID and REQGATE_GITHUB_PRIVATE_KEY "
              "or REQGATE_GITHUB_PRIVATE_KEY_PATH); with a token, redeliver from the webhook's settings page",
              file=sys.stderr)
        return 2
    from dbos import DBOSClient

    from reqgate.handlers.github.deliveries import AppDeliveries

    client = DBOSClient(system_database_url=settings.system_database_url(), application_name="reqgate")
    deliveries = AppDeliveries(settings.github_app_id, key, api_url=settings.github_api_url)
    try:
        report = redeliver_missed(deliveries, lookback, accepted_by(workflow_ids(client)))
    finally:
        deliveries.close()
        client.destroy()
    print(f"{report.seen} deliveries seen, {report.failed} failed, {report.already_accepted} already accepted, "
          f"{len(report.redelivered)} redelivered")
    for error in report.errors:
        print(f"  error: {error}", file=sys.stderr)
    return 1 if report.errors else 0


def workflow_ids(client: Any) -> Callable[[list[str]], list[str]]:
    def listed(ids: list[str]) -> list[str]:
        found = client.list_workflows(workflow_ids=ids, load_input=False, load_output=False)
        return [status.workflow_id for status in found]

    return listed

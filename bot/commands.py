"""`/reqgate` commands, the same on every tracker: authorise, acknowledge, answer. A command is never met with
silence: a refused, unknown or failed command gets a short reply."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import yaml

from reqgate.bot.budget import account_of
from reqgate.bot.steps import Outcome, Services, StepFailed, StepRunner, io, load_config
from reqgate.handlers.base import Tracker, Trigger
from reqgate.handlers.commands import HELP_TEXT
from reqgate.pipeline.config_loader import ConfigError, LoadedConfig
from reqgate.pipeline.cost import budget_line, month_start

# "token" but not "tokens": `structure_max_tokens` is a count that an admin needs to see, `api_token` a secret.
_SECRET_KEY_RE = re.compile(r"(secret|token(?!s)|password|passwd|api_?key|private_?key|credential)", re.IGNORECASE)
HIDDEN = "(hidden)"


def run(
    trigger: Trigger, tracker: Tracker, services: Services, step: StepRunner, *, recheck: Callable[[], Outcome]
) -> Outcome:
    wid = trigger.workflow_id
    if not io(step, "authorise", lambda: tracker.is_authorised(trigger)):
        io(step, "reply_refused", lambda: tracker.reply(trigger.ref, refusal(trigger)), idempotent=False)
        return Outcome(workflow_id=wid, status="refused", detail=trigger.command)
    if trigger.command in (None, "unknown"):
        io(step, "reply_unknown", lambda: tracker.reply(trigger.ref, unknown(trigger)), idempotent=False)
        return Outcome(workflow_id=wid, status="replied", detail="unknown command")
    try:
        io(step, "acknowledge", lambda: tracker.acknowledge(trigger))
    except StepFailed:
        pass  # the 👀 is a courtesy; the answer below is what matters
    if trigger.command == "recheck":
        return recheck()
    if trigger.command == "help":
        io(step, "reply_help", lambda: tracker.reply(trigger.ref, HELP_TEXT), idempotent=False)
        return Outcome(workflow_id=wid, status="replied", detail="help")
    loaded = load_config(step, tracker, trigger)
    if isinstance(loaded, ConfigError):
        text = config_errors(loaded)
    else:
        text = config_report(loaded, budget=_budget(step, services, trigger, loaded))
    io(step, "reply_config", lambda: tracker.reply(trigger.ref, text), idempotent=False)
    return Outcome(workflow_id=wid, status="replied", detail="config")


def _mention(trigger: Trigger) -> str:
    return f"@{trigger.actor} " if trigger.actor and trigger.source == "github" else ""


def refusal(trigger: Trigger) -> str:
    return (
        f"{_mention(trigger)}Sorry, ReqGate commands are accepted from the ticket's author and from people "
        f"with write access to the project, so `{trigger.command_line or 'this command'}` was not run."
    )


def unknown(trigger: Trigger) -> str:
    return (
        f"{_mention(trigger)}ReqGate does not know `{trigger.command_line or 'this command'}`. "
        "The commands are `recheck`, `config` and `help` (write `/reqgate help` in a comment)."
    )


def config_errors(error: ConfigError) -> str:
    lines = ["**ReqGate configuration is invalid**, so tickets here are not reviewed until it is fixed:", ""]
    lines += [f"- {problem}" for problem in error.problems]
    return "\n".join(lines)


def _hide_secrets(data: Any) -> Any:
    # Only text can be a secret: a check named `guardrail.secret` keeps its modes, a count of tokens its value.
    if isinstance(data, dict):
        return {k: HIDDEN if isinstance(v, str) and _SECRET_KEY_RE.search(str(k)) else _hide_secrets(v)
                for k, v in data.items()}
    if isinstance(data, list):
        return [_hide_secrets(v) for v in data]
    return data


def _lookup(data: Any, dotted: str) -> Any:
    """Value at a provenance path. Keys may contain dots themselves (check ids such as
    `template.placeholder`), so the longest key that matches at each level wins."""
    if not dotted:
        return data
    if isinstance(data, dict):
        parts = dotted.split(".")
        for size in range(len(parts), 0, -1):
            key = ".".join(parts[:size])
            if key in data:
                return _lookup(data[key], ".".join(parts[size:]))
    return None


def _short(value: Any) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    text = text.removesuffix("\n...").removesuffix("...").strip()
    return text if len(text) <= 80 else text[:77] + "..."


def _budget(step: StepRunner, services: Services, trigger: Trigger, loaded: LoadedConfig) -> str | None:
    ledger = services.budget
    if ledger is None:
        return None
    spent: float = io(step, "read_spend", lambda: ledger.spent(
        account_of(trigger.ref), month_start(datetime.now(UTC))))
    return budget_line(loaded.config.cost, spent)


def config_report(loaded: LoadedConfig, budget: str | None = None) -> str:
    """The effective configuration, which file set each value that is not a default, and the LLM budget."""
    defaults_source = loaded.sources[0] if loaded.sources else ""
    shown_sources = ["defaults"] + loaded.sources[1:]
    effective = _hide_secrets(loaded.config.model_dump(mode="json"))
    overrides = sorted((path, source) for path, source in loaded.provenance.items() if source != defaults_source)
    lines = [f"**ReqGate configuration** for this ticket: {' + '.join(f'`{s}`' for s in shown_sources)}", ""]
    if overrides:
        lines += ["| Key | Value | Set in |", "|---|---|---|"]
        for path, source in overrides:
            value = _short(_lookup(effective, path))  # hidden values are hidden in `effective` already
            cell = value.replace("|", "\\|")
            lines.append(f"| `{path}` | `{cell}` | `{source}` |")
        lines += ["", "Every other value is a default."]
    else:
        lines.append("No configuration file applies: every value is a default.")
    if budget:
        lines += ["", budget]
    dumped = yaml.safe_dump(effective, sort_keys=False, allow_unicode=True, width=110)
    lines += ["", "<details><summary>Effective configuration (YAML)</summary>", "", "```yaml", dumped.rstrip(),
              "```", "", "</details>"]
    return "\n".join(lines)

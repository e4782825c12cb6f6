"""`/reqgate` commands in ticket comments, the same on every tracker."""

from __future__ import annotations

from reqgate.handlers.base import CommandName

COMMAND_PREFIX = "/reqgate"
_BY_WORD: dict[str, CommandName] = {"recheck": "recheck", "help": "help", "config": "config"}
_FENCES = ("```", "~~~")

# No line may start with the command prefix: the bot must never trigger itself by quoting its help.
HELP_TEXT = """\
**ReqGate commands** (write one at the start of a line in a comment):

- `/reqgate recheck` — review this ticket again, after you edited it. The review comment is updated in \
place; unchanged text and configuration cost no LLM call.
- `/reqgate config` — show the effective configuration and where each value comes from.
- `/reqgate help` — show this message.

Commands are accepted from the ticket's author and from people with write access to the project."""


def parse_command(body: str) -> tuple[CommandName, str] | None:
    """The first command line in a comment: (command, the stripped line), or None when there is none.

    Quoted lines (`> /reqgate …`) and lines inside fenced code blocks are not commands: people quote
    earlier commands and paste examples. A bare `/reqgate` asks for help.
    """
    in_fence = False
    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith(_FENCES):
            in_fence = not in_fence
            continue
        if in_fence or not line.startswith(COMMAND_PREFIX):
            continue
        rest = line[len(COMMAND_PREFIX) :]
        if rest and not rest[0].isspace():
            continue  # "/reqgatefoo" is somebody else's word, not our command
        words = rest.split()
        if not words:
            return "help", line
        return _BY_WORD.get(words[0].lower(), "unknown"), line
    return None

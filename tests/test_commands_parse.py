"""`/reqgate` command lines in comments."""

from __future__ import annotations

import pytest

from reqgate.handlers.commands import HELP_TEXT, parse_command


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/reqgate recheck", ("recheck", "/reqgate recheck")),
        ("/reqgate help", ("help", "/reqgate help")),
        ("/reqgate config", ("config", "/reqgate config")),
        ("/reqgate RECHECK", ("recheck", "/reqgate RECHECK")),
        ("/reqgate recheck now please", ("recheck", "/reqgate recheck now please")),
        ("/reqgate frobnicate", ("unknown", "/reqgate frobnicate")),
        ("/reqgate", ("help", "/reqgate")),
        ("  /reqgate\trecheck  ", ("recheck", "/reqgate\trecheck")),
        ("I edited the story.\r\n\r\n/reqgate recheck", ("recheck", "/reqgate recheck")),
        ("/reqgate config\n/reqgate recheck", ("config", "/reqgate config")),
    ],
)
def test_first_command_line_wins(body: str, expected: tuple[str, str]) -> None:
    assert parse_command(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "",
        "looks good",
        "please run /reqgate recheck",  # not at the start of a line
        "> /reqgate recheck",  # quoting an earlier command
        ">/reqgate recheck",
        "/reqgatex recheck",
        "/reqgate-old recheck",
        "```\n/reqgate recheck\n```",  # an example in a code block
        "~~~sh\n/reqgate recheck\n~~~",
    ],
)
def test_not_a_command(body: str) -> None:
    assert parse_command(body) is None


def test_command_after_a_code_block_counts() -> None:
    assert parse_command("```\n/reqgate help\n```\n/reqgate recheck") == ("recheck", "/reqgate recheck")


def test_help_lists_every_command_and_never_triggers_itself() -> None:
    for word in ("recheck", "config", "help"):
        assert f"/reqgate {word}" in HELP_TEXT
    assert parse_command(HELP_TEXT) is None

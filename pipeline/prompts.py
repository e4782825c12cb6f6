"""Prompt templates kept as versioned files in `prompts/`, and the delimiting of untrusted text.

Each file starts with YAML front matter carrying `version: N`. A line `%% user` splits the system
instructions (sent as a cacheable system block) from the user-message template. Placeholders are
`{{name}}`. `PROMPT_VERSION` names every prompt's version plus a hash of the files, so that editing a
prompt without bumping its version still invalidates cached reviews.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml

PROMPTS_DIR = resources.files("reqgate.prompts")
PROMPT_NAMES = ("structure", "structure_reask", "rubric", "render", "render_reask")

_USER_MARKER = re.compile(r"^%% user[ \t]*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


class PromptError(ValueError):
    """A prompt file is malformed or a template was rendered with the wrong values."""


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    text: str  # the file body after the front matter

    @property
    def system(self) -> str:
        return _USER_MARKER.split(self.text, maxsplit=1)[0].strip()

    @property
    def user(self) -> str:
        parts = _USER_MARKER.split(self.text, maxsplit=1)
        return parts[1].strip() if len(parts) == 2 else ""

    def render_user(self, **values: str) -> str:
        template = self.user
        wanted = set(_PLACEHOLDER.findall(template))
        if wanted != set(values):
            raise PromptError(f"prompt {self.name} needs {sorted(wanted)}, got {sorted(values)}")
        # One pass, so that a value containing "{{x}}" (ticket text can) is never expanded itself.
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _parse(name: str, raw: str) -> Prompt:
    match = re.match(r"\A---\n(.*?)\n---\n(.*)\Z", raw, re.DOTALL)
    if not match:
        raise PromptError(f"prompt {name} lacks the `---` front matter")
    meta = yaml.safe_load(match.group(1)) or {}
    version = meta.get("version") if isinstance(meta, dict) else None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise PromptError(f"prompt {name} needs an integer `version` >= 1 in its front matter")
    return Prompt(name=name, version=version, text=match.group(2))


@cache
def load_prompt(name: str) -> Prompt:
    return _parse(name, (PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8"))


def prompt_version(names: tuple[str, ...] = PROMPT_NAMES) -> str:
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode() + b"\0" + (PROMPTS_DIR / f"{name}.md").read_bytes() + b"\0")
    versions = "+".join(f"{name}@{load_prompt(name).version}" for name in names)
    return f"{versions}#{digest.hexdigest()[:6]}"


PROMPT_VERSION = prompt_version()


def wrap_untrusted(text: str, tag: str) -> str:
    """Delimit third-party text; any lookalike of the tag inside it is defused so that it cannot close
    the block early (`</untrusted_ticket>`, `< / Untrusted-Ticket >`, ...)."""
    lookalike = re.compile(r"<(?=\s*/?\s*" + re.sub(r"_", r"[\\s_-]*", re.escape(tag)) + ")", re.IGNORECASE)
    return f"<{tag}>\n{lookalike.sub('&lt;', text)}\n</{tag}>"

"""The review configuration: records (pipeline/records.py), defaults from `config/defaults.yml`, deep-merged overrides.

Unknown keys are rejected everywhere so that a typo in `reqgate.yml` is an error, not a silent no-op.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import field
from importlib import resources
from typing import Annotated, Any, Literal

from reqgate.pipeline.records import After, Bounds, Record
from reqgate.pipeline.schemas import Category, Mode, TicketType

# Package data of reqgate.config, read through importlib.resources so an installed wheel finds it too.
CONFIG_DIR = resources.files("reqgate.config")
DEFAULTS_PATH = CONFIG_DIR / "defaults.yml"
SCHEMA_PATH = CONFIG_DIR / "reqgate.schema.json"

RUBRIC_TYPES = ("story", "bug", "task", "spike")


class Strict(Record):
    """A part of the configuration: unknown keys are errors."""


class Dimension(Strict):
    weight: Annotated[float, Bounds(ge=0)]
    description: str
    # Rule checks whose findings lower this dimension when no LLM rating is available.
    checks: list[str] = field(default_factory=list)


class Rubric(Strict):
    dimensions: dict[str, Dimension]

    def __post_init__(self) -> None:
        if not self.dimensions or sum(d.weight for d in self.dimensions.values()) <= 0:
            raise ValueError("a rubric needs at least one dimension with a positive weight")


class CheckModes(Strict):
    """Mode of one check: `default`, optionally overridden per ticket type, and the rubric category its
    findings belong to (REVIEW-RUBRIC.md); a file that leaves `category` out keeps the built-in one."""

    category: Category | None = None
    default: Mode = "warn"
    story: Mode | None = None
    bug: Mode | None = None
    task: Mode | None = None
    spike: Mode | None = None
    other: Mode | None = None

    def for_type(self, ticket_type: TicketType) -> Mode:
        return getattr(self, ticket_type.value) or self.default


TypeName = Literal["story", "bug", "task", "spike", "other"]


class TypeMaps(Strict):
    """Which ReqGate type (and so which rubric) a tracker's type or a label means. Names compare
    case-insensitively; a label's "type:" or "kind/" prefix is ignored."""

    issue_types: dict[str, TypeName] = field(default_factory=dict)
    labels: dict[str, TypeName] = field(default_factory=dict)


class Labels(Strict):
    ready: str = "reqgate:ready"
    needs_info: str = "reqgate:needs-info"
    error: str = "reqgate:error"
    color: str = "5319e7"


class Filters(Strict):
    """Which tickets get reviewed. Empty lists mean no restriction."""

    include_labels: list[str] = field(default_factory=list)
    skip_labels: list[str] = field(default_factory=list)
    skip_authors: list[str] = field(default_factory=list)
    issue_types: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)


# What the guardrail can redact; a misspelt kind would otherwise switch that detection off silently.
PII_KINDS = ("email", "phone", "card", "iban", "aws_key", "github_token", "gitlab_token", "slack_token",
             "anthropic_key", "openai_key", "google_key", "jwt", "private_key", "password", "vendor_token",
             "password_hash", "random_token")


# Regions whose national phone formats (no "+") the guardrail recognises by default, tried in this order.
DEFAULT_PHONE_REGIONS = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "BR", "IN", "JP", "CN", "IL", "PH", "TR", "AU")


def _known_regions(regions: list[str]) -> list[str]:
    # The built-in regions are known good; only a file naming others loads phonenumbers to check them
    # (its import costs ~30 ms, which every review would otherwise pay when the defaults load).
    unknown = [region for region in regions if region not in DEFAULT_PHONE_REGIONS]
    if unknown:
        import phonenumbers

        unknown = [region for region in unknown if region not in phonenumbers.SUPPORTED_REGIONS]
    if unknown:
        raise ValueError(f"unknown phone region {', '.join(map(repr, unknown))}; use ISO 3166 codes such as 'US'")
    return regions


def _known_kinds(kinds: list[str]) -> list[str]:
    unknown = [kind for kind in kinds if kind not in PII_KINDS]
    if unknown:
        raise ValueError(f"unknown kind {', '.join(map(repr, unknown))}; known: {', '.join(PII_KINDS)}")
    return kinds


class PiiSettings(Strict):
    enabled: bool = True
    kinds: Annotated[list[str], After(_known_kinds)]
    # ISO 3166 regions whose national phone formats (no "+") are recognised, tried in this order.
    phone_regions: Annotated[list[str], After(_known_regions)] = field(
        default_factory=lambda: list(DEFAULT_PHONE_REGIONS)
    )


# Built-in injection families (pipeline/guardrail/injection_families.py); named here so that a config file
# naming an unknown one is an error at load time.
INJECTION_FAMILIES = ("override", "persona", "prompt_extraction", "fake_delimiter", "addressed_to_model")


def _known_families(families: list[str]) -> list[str]:
    unknown = [name for name in families if name not in INJECTION_FAMILIES]
    if unknown:
        raise ValueError(f"unknown family {', '.join(map(repr, unknown))}; known: {', '.join(INJECTION_FAMILIES)}")
    return families


def _patterns_compile(patterns: list[str]) -> list[str]:
    """A pattern that does not compile is reported when the file is loaded, not at review time."""
    for index, pattern in enumerate(patterns):
        try:
            re.compile(pattern, re.IGNORECASE)
        except (re.error, OverflowError, RecursionError) as exc:
            raise ValueError(f"pattern {index} ({pattern!r}) is not a valid regular expression: {exc}") from None
    return patterns


class InjectionSettings(Strict):
    action: Annotated[str, Bounds(pattern="^(reject|sanitize|warn)$")]
    # Site-specific patterns, matched in addition to the families.
    patterns: Annotated[list[str], After(_patterns_compile)]
    families: Annotated[list[str], After(_known_families)] = field(default_factory=lambda: list(INJECTION_FAMILIES))


class GuardrailSettings(Strict):
    min_chars: Annotated[int, Bounds(ge=0)]
    max_chars: Annotated[int, Bounds(gt=0)]
    pii: PiiSettings
    injection: InjectionSettings


class Price(Strict):
    """US dollars per million tokens."""

    input: Annotated[float, Bounds(ge=0)]
    output: Annotated[float, Bounds(ge=0)]
    cache_read: Annotated[float, Bounds(ge=0)]
    cache_write: Annotated[float, Bounds(ge=0)]


class LLMSettings(Strict):
    structure_model: str
    render_model: str
    structure_max_tokens: Annotated[int, Bounds(gt=0)]
    render_max_tokens: Annotated[int, Bounds(gt=0)]
    timeout_s: Annotated[float, Bounds(gt=0)]
    deadline_s: Annotated[float, Bounds(gt=0)]
    max_retries: Annotated[int, Bounds(ge=0)]
    prices: dict[str, Price]


class CostSettings(Strict):
    """Who may spend money on LLM reviews, and how much. Everyone else gets a rules-only review that says why."""

    # everyone | members (organisation members and collaborators on GitHub, users who may be assigned issues
    # of the project on Jira) | allowlist (the logins or Jira account ids below)
    llm_reviews_for: Literal["everyone", "members", "allowlist"] = "everyone"
    allowlist: list[str] = field(default_factory=list)
    # US dollars per calendar month (UTC) for the whole GitHub installation or Jira site, estimated from
    # `llm.prices`; null means no budget. Once spent, reviews are rules-only until the month ends.
    monthly_budget_usd: Annotated[float, Bounds(ge=0)] | None = None
    # LLM reviews of one ticket per UTC day; later reviews that day are rules-only. null means no cap.
    max_llm_reviews_per_ticket_per_day: Annotated[int, Bounds(ge=0)] | None = 10


class Limits(Strict):
    comment_max_chars: Annotated[int, Bounds(gt=1000)]
    max_findings_shown: Annotated[int, Bounds(gt=0)]


class Config(Strict):
    enabled: bool = True
    review_on_edit: bool = False
    threshold: Annotated[int, Bounds(ge=0, le=100)]
    labels: Labels
    filters: Filters
    rubrics: dict[str, Rubric]
    checks: dict[str, CheckModes]
    types: TypeMaps = field(default_factory=TypeMaps)
    guardrail: GuardrailSettings
    llm: LLMSettings
    limits: Limits
    cost: CostSettings = field(default_factory=CostSettings)

    def __post_init__(self) -> None:
        missing = [t for t in RUBRIC_TYPES if t not in self.rubrics]
        if missing:
            raise ValueError(f"rubrics must define {', '.join(missing)}")

    def rubric_for(self, ticket_type: TicketType) -> tuple[str, Rubric]:
        name = ticket_type.value if ticket_type.value in self.rubrics else "story"
        return name, self.rubrics[name]

    def mode_for(self, check_id: str, ticket_type: TicketType) -> Mode:
        modes = self.checks.get(check_id)
        return modes.for_type(ticket_type) if modes else "warn"

    def category_for(self, check_id: str) -> Category:
        modes = self.checks.get(check_id)
        return modes.category if modes is not None and modes.category is not None else "other"

    def fingerprint(self) -> str:
        """Stable hash of the effective configuration; part of every review's content hash. The cost controls
        decide whether a review may call the LLM, not what it says: changing a budget keeps stored reviews."""
        blob = json.dumps(self.model_dump(mode="json", exclude={"cost"}), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key; everything else (lists included) in `override` replaces `base`."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged

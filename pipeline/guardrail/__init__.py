"""Input guardrail: length bounds, PII and secret redaction, prompt-injection screening.

`screen()` returns the redacted packet, the only text that may reach the LLM, a log, the store or a
comment; `mask()` scrubs any other string (log fields, error messages) the same way.
"""

from reqgate.pipeline.guardrail.detect import mask
from reqgate.pipeline.guardrail.screen import screen

__all__ = ["mask", "screen"]

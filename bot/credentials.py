"""Whether the configured tracker credentials can be used, for /readyz.

A server whose GitHub App key cannot be parsed, or whose Jira token Jira refuses, accepts webhooks and then
fails every review: readiness must say so. The key is parsed once at start-up; the tracker's verdict comes
from the bot's first call to it (the identity lookup, which runs at start-up anyway) and is kept. An
unreachable tracker is not a credential problem: the lookup is retried and readiness does not depend on it.
"""

from __future__ import annotations

import threading

AUTH_REFUSED = 401


def github_app_key_problem(pem: str | None) -> str | None:
    """Why the App's private key cannot sign a JWT, or None when it can."""
    if pem is None:
        return None
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        # The library's message names the format problem, never the key's bytes.
        return f"the GitHub App private key cannot be parsed ({type(exc).__name__})"
    return None


def refused_status(exc: BaseException) -> int | None:
    """The HTTP status when a tracker refused our credentials: PyGithub's `status`, our JiraAPIError's `status`."""
    status = getattr(exc, "status", None)
    if status is None:
        status = getattr(exc, "status_code", None)
    return status if status == AUTH_REFUSED else None


class CredentialChecks:
    """The problems found so far, per tracker; cheap to read on every /readyz."""

    def __init__(self) -> None:
        self._problems: dict[str, str] = {}
        self._lock = threading.Lock()

    def found(self, source: str, problem: str) -> None:
        with self._lock:
            self._problems[source] = problem

    def observe(self, source: str, exc: BaseException | None) -> None:
        """The outcome of a call made with `source`'s credentials: None for a success, or what it raised."""
        status = refused_status(exc) if exc is not None else None
        with self._lock:
            if status is not None:
                self._problems[source] = f"{source} refused the configured credentials (HTTP {status})"
            elif exc is None:
                self._problems.pop(source, None)

    def problem(self) -> str | None:
        with self._lock:
            if not self._problems:
                return None
            return "; ".join(problem for _, problem in sorted(self._problems.items()))

"""One retry policy for the HTTP scorer and the audit gate."""

from __future__ import annotations

import random
from dataclasses import dataclass

from camab_rag.errors import InputError


@dataclass(frozen=True)
class RetryPolicy:
    """At most ``max_retries`` retries, pausing ``backoff_base`` seconds doubled per failure
    (with jitter) up to ``backoff_max`` (also the cap on ``Retry-After``), within ``budget_s``
    seconds from the first failure (``None``: no limit)."""

    max_retries: int = 5
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    budget_s: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or self.max_retries < 0:
            raise InputError(f"max_retries must be >= 0, got {self.max_retries}")
        if not self.backoff_base >= 0 or not self.backoff_max >= 0:
            raise InputError("backoff_base and backoff_max must be >= 0 seconds")
        if self.budget_s is not None and not self.budget_s >= 0:
            raise InputError(f"retry_budget_s must be >= 0 or None, got {self.budget_s}")

    def delay(self, failures: int, retry_after: float | None = None) -> float:
        """The pause after the ``failures``-th consecutive failure (1 = the first)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max)
        base = min(float(self.backoff_max), self.backoff_base * 2.0 ** max(failures - 1, 0))
        return base * (0.5 + random.random() / 2)

    def why_stop(self, attempt: int, waited: float, delay: float) -> str | None:
        """Why not to retry after attempt ``attempt`` (0-based); ``None``: retry."""
        stop = f"failed after {attempt + 1} attempts"
        if attempt >= self.max_retries:
            return stop
        # a retry needs a tenth of the budget left after its pause (not milliseconds)
        if self.budget_s is not None and waited + delay > 0.9 * self.budget_s:
            return f"{stop} (retry budget of {self.budget_s:g} s spent)"
        return None

"""The gate's score of an answer (or of one sentence of it), from its token support.

Placeholder: mean per-token context gain; replaced by the score the benchmark chooses.
"""

from __future__ import annotations

from camab_rag.token_support import TokenSupport

SCORE_NAME = "gain"


def support_score(support: TokenSupport, start: int = 0, end: int | None = None) -> float:
    """The gate's score of the answer's characters ``[start, end)``: higher = better
    supported; ``nan`` when no token starts there."""
    return support.gain(start, end)


__all__ = ["SCORE_NAME", "support_score"]

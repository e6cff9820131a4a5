"""Free baselines: rankings that cost no model call, to print beside every headline figure.

A figure of ours means something only next to what a zero-call rule gets on the same rows
(the house rule of BENCHMARKS.md), so every benchmark that ranks segments reads this one
lexical ranking (:func:`camab_rag.lexical.lexical_scores`, which ``auto`` also reads).
"""

from camab_rag.lexical import lexical_scores

__all__ = ["lexical_scores"]

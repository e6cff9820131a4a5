"""The gate's score: the share of the answer's surprisal that the context explains.

``explained = (L(C) - L(empty)) / -L(empty)``, with ``L`` the answer's mean token
log-probability under the full context and under none: ``1 - NLL(answer | C) /
NLL(answer | no context)``. 1 means the context makes every token certain, 0 that it
changes nothing, below 0 that it makes the answer less likely. Being a ratio of two
log-likelihoods of the same tokens it has no unit, so one threshold means more across
models than a gain in nats does (a larger model is less surprised with or without the
context).

Chosen on FRANK's ``valid`` rows among the candidates the two anchor calls give (mean
gain, the least supported sentence, the share of unsupported tokens, the full-context
log-prob): it ranked unsupported summaries best (``BENCHMARKS.md``, "Groundedness gate").
"""

from __future__ import annotations

from camab_rag.token_support import TokenSupport

SCORE_NAME = "explained"


def explained(full: float, empty: float) -> float:
    """``(full - empty) / -empty`` for mean log-probs (or rewards) ``full`` and ``empty``;
    0 when the answer is already certain without the context (nothing to explain)."""
    surprisal = -float(empty)
    if surprisal <= 1e-9:
        return 0.0
    return (float(full) - float(empty)) / surprisal


def support_score(support: TokenSupport) -> float:
    """The gate's score of the tokens in ``support`` (the whole answer, or one sentence's
    :meth:`~camab_rag.token_support.TokenSupport.within`); higher = better supported."""
    return explained(support.mean_logprob("full"), support.mean_logprob("empty"))


__all__ = ["SCORE_NAME", "explained", "support_score"]

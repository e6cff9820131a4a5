"""The gate's score: how much of its least supported sentence the context explains.

A sentence's score is the share of its surprisal that the context explains,
``explained = (L(C) - L(empty)) / -L(empty)``, with ``L`` the sentence tokens' mean
log-probability under the full context and under none: ``1 - NLL(sentence | C) /
NLL(sentence | no context)``. 1 means the context makes every token certain, 0 that it
changes nothing, below 0 that it makes the sentence less likely. Being a ratio of two
log-likelihoods of the same tokens it has no unit, so one threshold means more across
models than a gain in nats does. The answer's score is its least supported sentence's
(abstaining sentences aside): an answer passes when every sentence that claims something
passes, so one invented sentence in a long answer is enough to flag it.

Chosen on FRANK's ``valid`` rows among the candidates the two anchor calls give (mean
gain, the whole answer's explained share, the full-context log-prob, the share of
unsupported tokens, the least supported sentence by gain or by explained share): it
ranked unsupported summaries best on both sources (``BENCHMARKS.md``, "Groundedness
gate").
"""

from __future__ import annotations

from collections.abc import Sequence

from camab_rag.token_support import TokenSupport

SCORE_NAME = "min_sentence_explained"


def explained(full: float, empty: float) -> float:
    """``(full - empty) / -empty`` for mean log-probs (or rewards) ``full`` and ``empty``;
    0 when the answer is already certain without the context (nothing to explain)."""
    surprisal = -float(empty)
    if surprisal <= 1e-9:
        return 0.0
    return (float(full) - float(empty)) / surprisal


def support_score(support: TokenSupport) -> float:
    """The explained share of the tokens in ``support`` (one sentence's
    :meth:`~camab_rag.token_support.TokenSupport.within`, or the whole answer's);
    higher = better supported."""
    return explained(support.mean_logprob("full"), support.mean_logprob("empty"))


def answer_score(sentence_scores: Sequence[float], whole: float) -> float:
    """The answer's score from its claiming sentences' scores: the least supported one
    (``whole``, the score of all its tokens, when no sentence claims anything)."""
    return float(min(sentence_scores)) if len(sentence_scores) else float(whole)


__all__ = ["SCORE_NAME", "answer_score", "explained", "support_score"]

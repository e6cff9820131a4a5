"""How much a source supports an answer sentence, on one absolute scale with words.

Attribution scores are in the reward's units: how much a source raises the mean
log-probability of the sentence's tokens (nats per token), the units of the context gain
``L(C) - L(empty)``. The scale is tied to :data:`SUPPORT_UNIT` ``T`` (0.22 nats per
token, a context gain that marks an answer taken from its context: BENCHMARKS.md,
"Groundedness score calibration (HotpotQA)"), never to the answer's top source, so a
source that barely moves the answer reads as barely supporting it. The gate's threshold
(:data:`~camab_rag.groundedness.report.DEFAULT_THRESHOLD`) is a share of surprisal, not a gain.

======================  ===================  =========================================
level                   score                shown as
======================  ===================  =========================================
3 strong support        ``>= 2 T``           cited; strongest highlight
2 support               ``>= T / 2``         cited; highlight
1 weak support          ``>= T / 4``         not cited; faint highlight in a cited source
0 no measurable support ``< T / 4``          nothing
======================  ===================  =========================================

A source is cited for a sentence from level 2 up (:data:`CITE_AT`; at most
:class:`~camab_rag.citations.CitationRule`'s ``top_k`` per sentence), measured above what
any text in the context gives: with a small model any context raises an answer's
likelihood, so the bar counts from the best score of the sources that hold none of the
sentence's words, and a cited source must hold a number or name of the sentence that no
better-scored cited source holds (:func:`camab_rag.citations.choose_sources`). Renderers
show the words; the raw scores go to tooltips and the JSON. How precise the citations are
against annotated supporting paragraphs: BENCHMARKS.md, "Citation precision and recall
(HotpotQA supporting paragraphs, SmolLM2)".
"""

from __future__ import annotations

SUPPORT_UNIT = 0.22
"""``T``: a context gain (nats per answer token) that marks an answer taken from its
context, the unit of the support scale (see the module docstring)."""
CITE_AT = SUPPORT_UNIT / 2
"""The support (nats per token) a source needs to be cited for a sentence, above what any
text in the context gives (see the module docstring)."""
STRONG_AT = 2 * SUPPORT_UNIT
"""From here a source's support reads "strong": alone it adds twice ``T``."""
WEAK_AT = SUPPORT_UNIT / 4
"""Below this a segment shows no support at all (not even a faint highlight)."""
WORDS = {3: "strong support", 2: "support", 1: "weak support", 0: "no measurable support"}


def support_level(score: float) -> int:
    """0 (no measurable support) .. 3 (strong support) for a score in nats per token."""
    if score >= STRONG_AT:
        return 3
    if score >= CITE_AT:
        return 2
    if score >= WEAK_AT:
        return 1
    return 0


def support_words(score: float) -> str:
    """The level of ``score`` in words ("strong support", ...)."""
    return WORDS[support_level(score)]


def support_strength(score: float) -> float:
    """``score`` on ``[0, 1]`` of the scale (1 from "strong support" up), for a bar."""
    return float(min(max(score / STRONG_AT, 0.0), 1.0))


__all__ = [
    "CITE_AT",
    "STRONG_AT",
    "SUPPORT_UNIT",
    "WEAK_AT",
    "WORDS",
    "support_level",
    "support_strength",
    "support_words",
]

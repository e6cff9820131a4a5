"""Groundedness: how much of the answer does the retrieved context explain?

The score is built from quantities attribution already has:

* **context gain** ``L(C) - L(empty)``: how much the whole context raises the answer's
  reward (by default its mean token log-probability, nats per token). The two rewards are
  read from the attribution history when both subsets were evaluated; otherwise
  :func:`measure_context_gain` asks the scorer for them (at most two extra queries); with
  neither, the linear surrogate's prediction ``sum(scores)`` is used.
* **top share**: the share of the positive attribution mass carried by the ``top_k``
  segments (1.0 = a few segments explain the answer, low = diffuse support).
* **per answer sentence**: the surrogate gain ``sum(statement.scores)`` and top share of
  each sentence, so one unsupported sentence in a long answer can be flagged.

An answer is *grounded* when its context gain reaches the threshold.
:class:`GroundednessFilter` attaches that verdict (``mode="flag"``) or replaces an
ungrounded answer by a fallback (``mode="block"``).

Modules: :mod:`~camab_rag.groundedness.report` (the report and its figures),
:mod:`~camab_rag.groundedness.gain` (measuring the context gain; the report),
:mod:`~camab_rag.groundedness.filter` (the filter).
"""

from __future__ import annotations

from camab_rag.groundedness.filter import (
    DEFAULT_FALLBACK,
    Fallback,
    FilteredAnswer,
    GroundednessFilter,
    Mode,
    check_groundedness_filter,
)
from camab_rag.groundedness.gain import (
    aassess_groundedness,
    ameasure_context_gain,
    assess_groundedness,
    measure_context_gain,
    observed_context_gain,
)
from camab_rag.groundedness.report import (
    DEFAULT_THRESHOLD,
    ContextGain,
    GainSource,
    GroundednessReport,
    SentenceGroundedness,
    top_share,
)

__all__ = [
    "DEFAULT_FALLBACK",
    "DEFAULT_THRESHOLD",
    "ContextGain",
    "Fallback",
    "FilteredAnswer",
    "GainSource",
    "GroundednessFilter",
    "GroundednessReport",
    "Mode",
    "SentenceGroundedness",
    "aassess_groundedness",
    "ameasure_context_gain",
    "assess_groundedness",
    "check_groundedness_filter",
    "measure_context_gain",
    "observed_context_gain",
    "top_share",
]

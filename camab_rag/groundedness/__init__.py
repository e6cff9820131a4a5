"""Groundedness: does the retrieved context support the answer, and which part does not?

The gate scores the answer twice, with the full context and with none (two model calls,
:mod:`~camab_rag.groundedness.anchors`), and keeps every answer token's log-probability
under both (:class:`~camab_rag.token_support.TokenSupport`). From those alone it derives:

* the answer's **score** (:mod:`~camab_rag.groundedness.score`) and its verdict
  ``score >= threshold``;
* each **sentence**'s score and verdict, and the **unsupported spans** (runs of tokens the
  context does not make more likely and that stay unlikely with it);
* **abstentions** ("I don't know", "the documents do not say"): neither flagged nor cited
  (:mod:`~camab_rag.groundedness.abstention`);
* in a chat prompt, the earlier turns count as context (the empty anchor leaves them out;
  ``report.earlier_turns`` says how many).

:func:`assess_answer` judges an answer with no attribution (the two calls);
:func:`assess_groundedness` judges an attribution (reading the anchors from
``attribute(..., anchors=True)``, or scoring them). :class:`GroundednessFilter` attaches
the verdict (``mode="flag"``) or replaces an ungrounded answer by a fallback
(``mode="block"``). :func:`calibrate` fits the threshold for your model on a handful of
labelled answers. Evidence: BENCHMARKS.md, "Groundedness gate on human-labelled
answers (FRANK, HaluEval)".

Modules: ``anchors`` (the two calls), ``score`` (the answer's score), ``report`` (the
report), ``gain`` (assessing), ``abstention``, ``calibration``, ``filter``.
"""

from __future__ import annotations

from camab_rag.groundedness.abstention import is_abstention
from camab_rag.groundedness.calibration import (
    Calibration,
    LabelledAnswer,
    acalibrate,
    calibrate,
)
from camab_rag.groundedness.filter import (
    DEFAULT_FALLBACK,
    Fallback,
    FilteredAnswer,
    GroundednessFilter,
    Mode,
    check_groundedness_filter,
)
from camab_rag.groundedness.gain import (
    aassess_answer,
    aassess_groundedness,
    ameasure_context_gain,
    assess_answer,
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
from camab_rag.token_support import Span, TokenSupport

__all__ = [
    "DEFAULT_FALLBACK",
    "DEFAULT_THRESHOLD",
    "Calibration",
    "ContextGain",
    "Fallback",
    "FilteredAnswer",
    "GainSource",
    "GroundednessFilter",
    "GroundednessReport",
    "LabelledAnswer",
    "Mode",
    "SentenceGroundedness",
    "Span",
    "TokenSupport",
    "aassess_answer",
    "aassess_groundedness",
    "acalibrate",
    "ameasure_context_gain",
    "assess_answer",
    "assess_groundedness",
    "calibrate",
    "check_groundedness_filter",
    "is_abstention",
    "measure_context_gain",
    "observed_context_gain",
    "top_share",
]

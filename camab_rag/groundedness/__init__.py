"""Groundedness: does the retrieved context support the answer, and which part does not?

The gate scores the answer twice, with the full context and with none (two model calls,
:mod:`~camab_rag.groundedness.anchors`), and keeps every answer token's log-probability
under both (:class:`~camab_rag.token_support.TokenSupport`). From those alone it derives:

* the answer's **score** (:mod:`~camab_rag.groundedness.score`) and its **verdict**,
  ``supported``, ``uncertain`` or ``unsupported``, with a calibrated ``P(unsupported)``
  (:mod:`~camab_rag.groundedness.verdict`: from the score and how much of the answer's
  informative words the context holds, anywhere and in the clause about its subject);
* each **sentence**'s score and verdict, and the **unsupported spans** (runs of tokens the
  context does not make more likely and that stay unlikely with it);
* **abstentions** ("I don't know", "the documents do not say"): neither flagged nor cited
  (:mod:`~camab_rag.groundedness.abstention`);
* in a chat prompt, the earlier turns are context (the empty anchor leaves them out;
  ``report.earlier_turns`` says how many), but only the documents and the system prompt
  are evidence: a fact the user asserted does not support an answer.

:func:`camab_rag.assess_answer` judges an answer with no attribution (the two calls);
:func:`assess_groundedness` judges an attribution (reading the anchors from
``attribute(..., anchors=True)``, or scoring them). :class:`GroundednessFilter` attaches
the verdict (``mode="flag"``: ``uncertain`` and ``unsupported`` are marked) or replaces an
``unsupported`` answer by a fallback (``mode="block"``); its
:meth:`~GroundednessFilter.calibrate` fits the verdict for your model in one call, on the
labelled set shipped in :mod:`camab_rag.data` or on your own :class:`LabelledAnswer`
objects. Evidence: BENCHMARKS.md,
"Groundedness gate on human-labelled answers (FRANK, HaluEval)".

Modules: ``anchors`` (the two calls), ``score`` (the answer's score, its informative
words), ``verdict`` (the calibrated verdict model), ``report`` (the report,
``DEFAULT_THRESHOLD``), ``gain`` (assessing, the context gain), ``abstention``,
``calibration`` (``calibrate``, the shipped set), ``filter``.
"""

from __future__ import annotations

from camab_rag.groundedness.calibration import LabelledAnswer
from camab_rag.groundedness.filter import FilteredAnswer, GroundednessFilter
from camab_rag.groundedness.gain import aassess_groundedness, assess_groundedness
from camab_rag.groundedness.report import GroundednessReport

__all__ = [
    "FilteredAnswer",
    "GroundednessFilter",
    "GroundednessReport",
    "LabelledAnswer",
    "aassess_groundedness",
    "assess_groundedness",
]

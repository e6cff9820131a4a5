"""Groundedness: does the retrieved context support the answer, and which part does not?

The gate scores the answer with the full context and with none (two model calls,
:mod:`.anchors`) and, from every answer token's log-prob under both, derives the answer's
and each sentence's score, a calibrated verdict (``supported``, ``uncertain``,
``unsupported``; :mod:`.verdict`), the unsupported spans, and abstentions ("I don't
know", never flagged). By default (``block_on="facts"``) an answer is ``unsupported`` only
when it also leaves a fact unchecked; ``block_on="any"`` is the stricter verdict.
:func:`assess_groundedness` judges an attribution;
:class:`GroundednessFilter` flags or blocks, and :meth:`~GroundednessFilter.calibrate`
fits the verdict for your model (:mod:`.calibration`). Evidence: BENCHMARKS.md.
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

"""Groundedness: does the retrieved context support the answer, and which part does not?

The answer is scored with the full context and with none (two model calls, :mod:`.anchors`);
from every token's log-prob under both come each sentence's score, a calibrated verdict
(:mod:`.verdict`) and the unsupported spans. :func:`assess_groundedness` judges an
attribution; :class:`GroundednessFilter` flags or blocks and can be calibrated for your model.
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

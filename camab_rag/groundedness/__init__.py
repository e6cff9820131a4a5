"""Groundedness: does the retrieved context support the answer, and which part does not?
Two model calls, with the full context and with none, give the verdict and the spans."""

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

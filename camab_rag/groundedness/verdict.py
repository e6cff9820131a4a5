"""Three verdicts with a probability: the calibrated model the gate's verdict comes from.

What: ``P(unsupported)`` of an answer (or one sentence) from two figures of its
informative words (content words, names, numbers), a logistic model ``sigmoid(bias +
w_informative * clip(informative, -1, 1) + w_coverage * coverage)``: ``informative`` the
share of those tokens' surprisal the context explains (:func:`~camab_rag.groundedness.
score.informative_score`) and ``coverage`` the share of those words the context holds
(:func:`~camab_rag.groundedness.score.coverage`). Why: the whole answer's score counts
style (function words, punctuation) and fails short or reworded correct answers; the
words a reader would check decide most cases, the model decides the rest. How: ``p >=
block_at`` is ``unsupported``, ``p >= flag_at`` ``uncertain``, else ``supported``.
:data:`DEFAULT_CALIBRATION` was fitted for the embedded SmolLM2 by
``benchmarks/bench_gate.py report`` (FRANK ``valid`` + a half of HaluEval);
:func:`~camab_rag.groundedness.calibration.calibrate` fits one for any model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Verdict = Literal["supported", "uncertain", "unsupported"]
VERDICTS: tuple[Verdict, ...] = ("supported", "uncertain", "unsupported")


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def clipped(score: float) -> float:
    """A figure as the model reads it: clipped to ``[-1, 1]`` (one outlier token of a
    short answer must not decide alone)."""
    return min(1.0, max(-1.0, float(score)))


@dataclass(frozen=True)
class Calibration:
    """A calibrated verdict model and what it was fitted on.

    ``weights`` multiply ``(clip(informative, -1, 1), coverage)``; ``block_at`` and ``flag_at``
    are the probabilities of being unsupported from which an answer is ``unsupported``
    (blocked by ``mode="block"``) and ``uncertain``. ``balanced_accuracy`` and ``auroc``
    are held-out figures (cross-validated, grouped by context) of the verdict
    ``unsupported`` on the answers it was fitted on.
    """

    weights: tuple[float, float]
    bias: float
    block_at: float
    flag_at: float
    model: str
    n_supported: int = 0
    n_unsupported: int = 0
    balanced_accuracy: float = float("nan")
    auroc: float = float("nan")
    n_abstained: int = 0
    fitted_on: str = ""

    def p_unsupported(self, informative: float, coverage: float) -> float:
        """The probability that a text with these figures is unsupported."""
        w_score, w_coverage = self.weights
        return _sigmoid(self.bias + w_score * clipped(informative) + w_coverage * float(coverage))

    def verdict(self, p_unsupported: float) -> Verdict:
        """``unsupported`` from ``block_at``, ``uncertain`` from ``flag_at``."""
        if p_unsupported >= self.block_at:
            return "unsupported"
        return "uncertain" if p_unsupported >= self.flag_at else "supported"

    @property
    def threshold(self) -> float:
        """The ``informative`` figure below which an answer whose informative words all
        occur in the context is ``unsupported``."""
        w_score, w_coverage = self.weights
        logit = math.log(self.block_at / (1.0 - self.block_at))
        if w_score == 0:
            return -math.inf if self.bias + w_coverage < logit else math.inf
        return (logit - self.bias - w_coverage) / w_score

    def to_dict(self) -> dict[str, Any]:
        return {
            "weights": list(self.weights),
            "bias": self.bias,
            "block_at": self.block_at,
            "flag_at": self.flag_at,
            "model": self.model,
            "n_supported": self.n_supported,
            "n_unsupported": self.n_unsupported,
            "balanced_accuracy": self.balanced_accuracy,
            "auroc": self.auroc,
            "n_abstained": self.n_abstained,
            "fitted_on": self.fitted_on,
            "threshold": self.threshold,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        """Inverse of :meth:`to_dict`."""
        w_score, w_coverage = (float(w) for w in data["weights"])
        return cls(
            weights=(w_score, w_coverage),
            bias=float(data["bias"]),
            block_at=float(data["block_at"]),
            flag_at=float(data["flag_at"]),
            model=str(data.get("model", "")),
            n_supported=int(data.get("n_supported", 0)),
            n_unsupported=int(data.get("n_unsupported", 0)),
            balanced_accuracy=float(data.get("balanced_accuracy", float("nan"))),
            auroc=float(data.get("auroc", float("nan"))),
            n_abstained=int(data.get("n_abstained", 0)),
            fitted_on=str(data.get("fitted_on", "")),
        )


DEFAULT_CALIBRATION = Calibration(
    weights=(-1.9432, -5.3695),
    bias=5.5292,
    block_at=0.5664,
    flag_at=0.4847,
    model="smollm2",
    n_supported=392,
    n_unsupported=508,
    balanced_accuracy=0.8194,
    auroc=0.8734,
    fitted_on="FRANK valid CNN/DM summaries + HaluEval QA choice half (benchmarks/gate_verdict.py)",
)
"""The verdict model fitted for the embedded SmolLM2 by ``benchmarks/bench_gate.py
report`` (written to ``benchmarks/results/groundedness/default_calibration.json``; a test
checks the two agree; figures in ``BENCHMARKS.md``, "Groundedness gate")."""

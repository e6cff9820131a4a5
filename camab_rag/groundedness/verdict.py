"""The calibrated verdict model: ``P(unsupported) = sigmoid(bias + w_score *
model_input(score, coverage) + w_coverage * coverage)``; ``p >= block_at`` is
``unsupported``, ``p >= flag_at`` ``uncertain``, else ``supported``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from camab_rag.result import cast_fields, fields_dict

Verdict = Literal["supported", "uncertain", "unsupported"]


def model_input(score: float, coverage: float) -> float:
    """``score`` clipped to ``[-1, 1]`` (one outlier token of a short answer must not decide),
    at least 0 when the context holds every checked word."""
    value = min(1.0, max(-1.0, float(score)))
    return max(value, 0.0) if float(coverage) >= 1.0 else value


@dataclass(frozen=True, repr=False)
class Calibration:
    """A verdict model: ``weights`` multiply ``(model_input(score, coverage), coverage)``;
    ``block_at``/``flag_at`` cut ``P(unsupported)``; ``balanced_accuracy`` and ``auroc`` are
    held-out figures (grouped by context) on the answers it was fitted on."""

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

    def __repr__(self) -> str:
        n, held_out = self.n_supported + self.n_unsupported, ""
        if math.isfinite(self.balanced_accuracy) and n:
            held_out = f", held-out balanced accuracy {self.balanced_accuracy:.2f} (ROC AUC "
            held_out += f"{self.auroc:.2f}) on its {n} answers"
        fitted = f", fitted on {self.fitted_on}" if self.fitted_on else ""
        cuts = f"blocks from P(unsupported) {self.block_at:.2f}, flags from {self.flag_at:.2f}"
        return f"Calibration(model={self.model!r}, {cuts}{held_out}{fitted})"

    def p_unsupported(self, score: float, coverage: float) -> float:
        w_score, w_coverage = self.weights
        x = self.bias + w_score * model_input(score, coverage) + w_coverage * float(coverage)
        z = math.exp(-abs(x))  # a sigmoid that never overflows
        return 1.0 / (1.0 + z) if x >= 0 else z / (1.0 + z)

    def verdict(self, p_unsupported: float) -> Verdict:
        if p_unsupported >= self.block_at:
            return "unsupported"
        return "uncertain" if p_unsupported >= self.flag_at else "supported"

    @property
    def threshold(self) -> float:
        """The score below which an answer of coverage just under 1 is ``unsupported``."""
        w_score, w_coverage = self.weights
        logit = math.log(self.block_at / (1.0 - self.block_at))
        if w_score == 0:
            return -math.inf if self.bias + w_coverage < logit else math.inf
        return (logit - self.bias - w_coverage) / w_score

    def to_dict(self) -> dict[str, Any]:
        return {**fields_dict(self), "weights": list(self.weights), "threshold": self.threshold}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        w_score, w_coverage = (float(w) for w in data["weights"])
        done = {"weights": (w_score, w_coverage), "model": str(data.get("model", ""))}
        return cls(**cast_fields(cls, data, done))


DEFAULT_CALIBRATION = Calibration(
    weights=(-2.9435, -5.5362),
    bias=5.8534,
    block_at=0.5787,
    flag_at=0.4956,
    model="smollm2",
    n_supported=392,
    n_unsupported=508,
    balanced_accuracy=0.8218,
    auroc=0.8983,
    fitted_on="FRANK valid CNN/DM summaries + HaluEval QA choice half (benchmarks/gate_verdict.py)",
)
"""Fitted for the embedded SmolLM2 by ``python -m benchmarks gate report`` (a test checks
it against ``benchmarks/results/groundedness/default_calibration.json``)."""

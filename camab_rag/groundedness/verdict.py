"""Three verdicts with a probability: the calibrated model the gate's verdict comes from.

What: ``P(unsupported)`` of an answer (or one sentence) from two figures, a logistic
model ``sigmoid(bias + w_score * model_input(score, coverage) + w_coverage *
coverage)``: ``score`` the share of the answer's surprisal the context explains
(:mod:`~camab_rag.groundedness.score`), ``coverage`` how much of its informative words
(content words, names, numbers) the context holds, anywhere and in the one clause about
its subject (:func:`~camab_rag.groundedness.score.checked_coverage`). Why: the words a
reader would check decide most cases, the model decides the rest; and when one context
clause holds every checked word, a small model's doubt is no evidence against the
answer (SmolLM2 finds "closed" less likely after a context that says "open" three times
and "closed on Sunday" once), so :func:`model_input` reads a negative score of a fully
covered answer as 0. How: ``p >= block_at`` is ``unsupported``, ``p >= flag_at``
``uncertain``, else ``supported``. :data:`DEFAULT_CALIBRATION` was fitted for the
embedded SmolLM2 by ``python -m benchmarks gate report`` (FRANK ``valid`` + a half of
HaluEval); :func:`~camab_rag.groundedness.calibration.calibrate` fits one for any model.
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


def model_input(score: float, coverage: float) -> float:
    """The model's figure as the verdict reads it: clipped to ``[-1, 1]``, and no lower
    than 0 when the context holds every checked word (``coverage`` 1): then only a
    positive figure moves the verdict."""
    value = clipped(score)
    return max(value, 0.0) if float(coverage) >= 1.0 else value


@dataclass(frozen=True, repr=False)
class Calibration:
    """A calibrated verdict model and what it was fitted on.

    ``weights`` multiply ``(model_input(score, coverage), coverage)``; ``block_at`` and ``flag_at``
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

    def __repr__(self) -> str:
        fitted = f", fitted on {self.fitted_on}" if self.fitted_on else ""
        n = self.n_supported + self.n_unsupported
        held_out = (
            f", held-out balanced accuracy {self.balanced_accuracy:.2f} "
            f"(ROC AUC {self.auroc:.2f}) on its {n} answers"
            if math.isfinite(self.balanced_accuracy) and n
            else ""
        )
        return (
            f"Calibration(model={self.model!r}, blocks from P(unsupported) "
            f"{self.block_at:.2f}, flags from {self.flag_at:.2f}{held_out}{fitted})"
        )

    def p_unsupported(self, score: float, coverage: float) -> float:
        """The probability that a text with these figures is unsupported."""
        w_score, w_coverage = self.weights
        x = model_input(score, coverage)
        return _sigmoid(self.bias + w_score * x + w_coverage * float(coverage))

    def verdict(self, p_unsupported: float) -> Verdict:
        """``unsupported`` from ``block_at``, ``uncertain`` from ``flag_at``."""
        if p_unsupported >= self.block_at:
            return "unsupported"
        return "uncertain" if p_unsupported >= self.flag_at else "supported"

    @property
    def threshold(self) -> float:
        """The score below which an answer whose checked words the context holds only in
        part (``coverage`` just under 1) is ``unsupported``."""
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
    weights=(-2.937, -5.5164),
    bias=5.7996,
    block_at=0.5727,
    flag_at=0.4873,
    model="smollm2",
    n_supported=392,
    n_unsupported=508,
    balanced_accuracy=0.8261,
    auroc=0.9008,
    fitted_on="FRANK valid CNN/DM summaries + HaluEval QA choice half (benchmarks/gate_verdict.py)",
)
"""The verdict model fitted for the embedded SmolLM2 by ``python -m benchmarks gate
report`` (written to ``benchmarks/results/groundedness/default_calibration.json``; a test
checks the two agree; figures in ``BENCHMARKS.md``, "Groundedness gate")."""

"""ContextCite-style surrogate: Bernoulli(0.5) ablation masks and a LASSO fit.

As in ContextCite's solver: features standardised, LASSO (``alpha = 0.01``,
objective ``1/(2m) ||y - Xw||^2 + alpha ||w||_1``) with an intercept, coefficients mapped
back to the unstandardised scale. ContextCite's own target is the mean token logit
(``reward="logit"``); by default the engine's reward is used so every method sees the same
signal. The LASSO is a short coordinate descent here: it keeps scikit-learn out of the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from camab_rag.methods.base import (
    FixedDesignSampler,
    FloatArray,
    Masks,
    Method,
    Sampler,
    distinct_rows,
)
from camab_rag.methods.estimators import lasso_scores


@dataclass
class ContextCite(Method):
    """ContextCite-style surrogate settings."""

    alpha: float = 0.01
    keep_probability: float = 0.5

    name = "contextcite"
    anytime = True

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        """``budget`` distinct Bernoulli ablation masks (a repeated draw is drawn again)."""
        return FixedDesignSampler(
            distinct_rows(
                lambda: rng.random((budget, n_segments)) < self.keep_probability,
                budget,
                n_segments,
                rng,
            )
        )

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        return lasso_scores(masks, rewards, self.alpha)

    def config(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "keep_probability": self.keep_probability}

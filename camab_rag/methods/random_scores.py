"""Random baseline: uniform scores, no model calls (the lower reference)."""

from __future__ import annotations

import numpy as np

from camab_rag.methods.base import FixedDesignSampler, FloatArray, Masks, Method, Sampler


class RandomScores(Method):
    name = "random"
    anytime = True
    models_reward = False

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        return FixedDesignSampler(np.zeros((0, n_segments), dtype=bool))

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        return np.asarray(np.random.default_rng(seed).uniform(size=masks.shape[1]), dtype=float)

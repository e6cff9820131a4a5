"""Leave-one-out: score_i = V(C) - V(C without segment i).

Costs exactly N + 1 evaluations whatever the budget (reported at its own cost).
"""

from __future__ import annotations

import numpy as np

from camab_rag.methods.base import (
    FixedDesignSampler,
    FloatArray,
    Masks,
    Method,
    Sampler,
    rows_by_mask,
)


class LeaveOneOut(Method):
    name = "loo"
    anytime = False
    prefix_fit = False

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        masks = np.ones((n_segments + 1, n_segments), dtype=bool)
        masks[np.arange(1, n_segments + 1), np.arange(n_segments)] = False
        return FixedDesignSampler(masks)

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        n = masks.shape[1]
        table = rows_by_mask(masks, rewards)
        full = np.ones(n, dtype=bool)
        if full.tobytes() not in table:
            raise ValueError("leave-one-out needs the full context evaluated")
        scores = np.empty(n)
        for i in range(n):
            without = full.copy()
            without[i] = False
            if without.tobytes() not in table:
                raise ValueError(f"leave-one-out needs the context without segment {i}")
            scores[i] = table[full.tobytes()] - table[without.tobytes()]
        return scores

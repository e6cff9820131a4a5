"""KernelSHAP over segments, under the same scorer and budget.

Reference = the fully masked context. The budget counts every evaluation: the empty and the
full context first, then coalitions drawn from the Shapley kernel's size distribution
(paired with their complements), each coalition at most once. When the budget covers
every coalition (``2^N`` for small ``N``) all are enumerated with their exact kernel
weights, giving exact Shapley values.
The fit is the kernel-weighted least squares with the efficiency constraint
``sum(phi) = v(full) - v(empty)``, minimum-norm when under-determined (budget < N).
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np

from camab_rag.methods.base import (
    FixedDesignSampler,
    FloatArray,
    Masks,
    Method,
    Sampler,
    distinct_rows,
    rows_by_mask,
)


def shapley_kernel_weight(n: int, size: int) -> float:
    """The Shapley kernel weight of one coalition of ``size`` among ``n`` players."""
    return (n - 1) / (comb(n, size) * size * (n - size))


class KernelShap(Method):
    name = "kernelshap"
    anytime = True

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        n = n_segments
        empty, full = np.zeros(n, dtype=bool), np.ones(n, dtype=bool)
        if n == 1 or budget >= 2**n:
            coalitions = [
                np.array(bits, dtype=bool)
                for bits in itertools.product([False, True], repeat=n)
                if 0 < sum(bits) < n
            ]
            return FixedDesignSampler(np.array([empty, full, *coalitions], dtype=bool))
        sizes = np.arange(1, n)
        size_probs = (n - 1) / (sizes * (n - sizes))
        size_probs = size_probs / size_probs.sum()

        def pairs() -> Masks:
            mask = np.zeros(n, dtype=bool)
            mask[rng.choice(n, size=int(rng.choice(sizes, p=size_probs)), replace=False)] = True
            return np.array([mask, ~mask])

        # distinct coalitions, each paired with its complement, after the empty and full
        design = distinct_rows(
            lambda: np.concatenate([[empty, full], *(pairs() for _ in range(budget))]),
            max(budget, 1),
            n,
            rng,
        )
        return FixedDesignSampler(design)

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        n = masks.shape[1]
        table = rows_by_mask(masks, rewards)
        empty_key, full_key = np.zeros(n, bool).tobytes(), np.ones(n, bool).tobytes()
        if empty_key not in table or full_key not in table:
            raise ValueError("KernelSHAP needs the empty and the full context evaluated")
        v_empty, v_full = table[empty_key], table[full_key]
        total = v_full - v_empty
        sizes = masks.sum(axis=1)
        inner = (sizes > 0) & (sizes < n)
        z, y = masks[inner].astype(float), rewards[inner] - v_empty
        if n == 1 or z.shape[0] == 0:
            return np.full(n, total / n)
        distinct = len({row.tobytes() for row in masks[inner]})
        if distinct == z.shape[0] == 2**n - 2:  # full enumeration: exact kernel weights
            weights = np.array([shapley_kernel_weight(n, int(s)) for s in sizes[inner]])
        else:  # drawn from the kernel distribution: equal importance weights
            weights = np.ones(z.shape[0])
        # phi = total/n + P u, P the projection onto sum-zero vectors
        projection = np.eye(n) - 1.0 / n
        root = np.sqrt(weights)[:, None]
        design = root * (z @ projection)
        target = root[:, 0] * (y - z.sum(axis=1) * total / n)
        u, *_ = np.linalg.lstsq(design, target, rcond=None)
        return np.asarray(total / n + projection @ u, dtype=float)

"""The baselines: KernelSHAP, ContextCite's surrogate, leave-one-out and random scores."""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from camab_rag.methods.base import (
    FixedDesignSampler,
    FloatArray,
    Masks,
    Method,
    Sampler,
    distinct_rows,
    lasso_scores,
    leave_one_out_rows,
    plan_sampler,
)


class KernelShap(Method):
    """KernelSHAP: the empty and full contexts, then coalitions of the Shapley kernel's sizes
    with their complements; least squares with ``sum(phi) = v(full) - v(empty)``."""

    name = "kernelshap"

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        n = n_segments
        if n == 1 or budget >= 2**n:
            return plan_sampler(self, n, max(budget, 2), rng)
        sizes = np.arange(1, n)
        size_probs = (n - 1) / (sizes * (n - sizes))
        size_probs = size_probs / size_probs.sum()

        def draw() -> Masks:
            rows = [np.zeros(n, dtype=bool), np.ones(n, dtype=bool)]
            for _ in range(budget):
                mask = np.zeros(n, dtype=bool)
                mask[rng.choice(n, size=int(rng.choice(sizes, p=size_probs)), replace=False)] = True
                rows += [mask, ~mask]
            return np.array(rows)

        return FixedDesignSampler(distinct_rows(draw, max(budget, 1), n, rng))

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        n = masks.shape[1]
        table = {m.tobytes(): float(v) for m, v in zip(masks, rewards)}
        v_empty = table[bytes(n)]
        total = table[b"\x01" * n] - v_empty
        sizes = masks.sum(axis=1)
        inner = (sizes > 0) & (sizes < n)
        z, y = masks[inner].astype(float), rewards[inner] - v_empty
        if n == 1 or z.shape[0] == 0:
            return np.full(n, total / n)
        if len({r.tobytes() for r in masks[inner]}) == len(z) == 2**n - 2:  # exact weights
            weights = np.array(
                [(n - 1) / (comb(n, s) * s * (n - s)) for s in sizes[inner].tolist()]
            )
        else:  # drawn from the kernel distribution: equal importance weights
            weights = np.ones(z.shape[0])
        # phi = total/n + P u, P the projection onto sum-zero vectors
        projection = np.eye(n) - 1.0 / n
        root = np.sqrt(weights)[:, None]
        design = root * (z @ projection)
        target = root[:, 0] * (y - z.sum(axis=1) * total / n)
        u, *_ = np.linalg.lstsq(design, target, rcond=None)
        return np.asarray(total / n + projection @ u, dtype=float)


@dataclass
class ContextCite(Method):
    """ContextCite's surrogate: distinct Bernoulli(``keep_probability``) masks, LASSO."""

    alpha: float = 0.01
    keep_probability: float = 0.5

    name = "contextcite"

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        def draw() -> Masks:
            return rng.random((budget, n_segments)) < self.keep_probability

        return FixedDesignSampler(distinct_rows(draw, budget, n_segments, rng))

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        return lasso_scores(masks, rewards, self.alpha)


class LeaveOneOut(Method):
    """``score_i = V(C) - V(C without segment i)``: ``N + 1`` calls whatever the budget."""

    name = "loo"

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        return FixedDesignSampler(leave_one_out_rows(n_segments))

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        table = {m.tobytes(): float(v) for m, v in zip(masks, rewards)}
        rows = [row.tobytes() for row in leave_one_out_rows(masks.shape[1])]
        return np.array([table[rows[0]] - table[row] for row in rows[1:]])


class RandomScores(Method):
    """Uniform random scores, no model calls (the lower reference)."""

    name = "random"
    models_reward = False

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        return FixedDesignSampler(np.zeros((0, n_segments), dtype=bool))

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        return np.asarray(np.random.default_rng(seed).uniform(size=masks.shape[1]), dtype=float)

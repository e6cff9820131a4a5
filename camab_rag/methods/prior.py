"""CAMAB with a prior learned from free calls of a cheaper model.

A free scorer (the embedded model beside a served or API model) attributes first; its
segment weights ``w_free`` become the target model's prior through one linear model,
``V_target(S) = b + a * (w_free . x_S) + d . x_S + noise`` with ``d ~ N(0, tau2 I)``, so
the target's weights are ``a * w_free + d``. The target's calls learn ``b``, the agreement
``a`` and the corrections ``d``; ``tau2`` is the grid value of highest evidence, refitted
each round: when the models disagree ``a`` goes to 0 and the free calls cost only time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from camab_rag.methods.base import FloatArray, Masks, Method, Sampler
from camab_rag.methods.camab import MAX_REDRAWS, Camab

#: calls of the free model per answer (they cost nothing the user pays for)
FREE_CALLS = 64
#: candidate variances of the corrections ``d``, up to CAMAB's own prior variance
TAU2_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
DESIGNS = ("camab", "thompson", "bernoulli")
INTERCEPT_VARIANCE = 10.0
AGREEMENT_VARIANCE = 1.0


def _prior(n_segments: int, tau2: float) -> tuple[FloatArray, FloatArray]:
    """Prior mean and variances of ``(b, a, d)``: the free model is believed (a = 1)."""
    mean = np.zeros(n_segments + 2)
    mean[1] = 1.0
    variances = np.full(n_segments + 2, tau2)
    variances[0], variances[1] = INTERCEPT_VARIANCE, AGREEMENT_VARIANCE
    return mean, variances


def log_evidence(
    features: FloatArray, rewards: FloatArray, mean: FloatArray, variances: FloatArray, noise: float
) -> float:
    """``log N(rewards; features @ mean, features diag(variances) features^T + noise I)``."""
    n = len(rewards)
    if n == 0:
        return 0.0
    cov = (features * variances) @ features.T + noise * np.eye(n)
    factor = cho_factor(cov, lower=True)
    residual = rewards - features @ mean
    quad = float(residual @ cho_solve(factor, residual))
    logdet = 2.0 * float(np.sum(np.log(np.diag(factor[0]))))
    return float(-0.5 * (quad + logdet + n * np.log(2 * np.pi)))


@dataclass(frozen=True)
class Posterior:
    """The Gaussian posterior over ``(b, a, d)`` at the chosen ``tau2``."""

    mean: FloatArray
    factor: tuple[FloatArray, bool]
    tau2: float

    def sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        # precision P = L L^T (lower); a draw is mean + L^-T z
        lower = np.tril(self.factor[0])
        z = rng.standard_normal((len(self.mean), size))
        offsets = solve_triangular(lower.T, z, lower=False)
        return np.asarray((self.mean[:, None] + offsets).T, dtype=float)


class Evidence:
    """The evidence of each ``tau2`` of :data:`TAU2_GRID`, and the posterior at one."""

    def __init__(
        self, masks: Masks, rewards: FloatArray, free_weights: FloatArray, noise: float
    ) -> None:
        x = masks.astype(float)
        self.features = np.hstack([np.ones((len(x), 1)), (x @ free_weights)[:, None], x])
        self.rewards = rewards
        self.noise = noise
        self.n = len(free_weights)
        self.log_evidence = np.array(
            [
                log_evidence(self.features, rewards, *_prior(self.n, tau2), noise)
                for tau2 in TAU2_GRID
            ]
        )
        self._at: dict[float, Posterior] = {}

    def best(self) -> Posterior:
        """The posterior at the ``tau2`` of highest evidence."""
        return self.at(TAU2_GRID[int(np.argmax(self.log_evidence))])

    def draw(self, rng: np.random.Generator) -> Posterior:
        """The posterior at a ``tau2`` drawn in proportion to its evidence."""
        weights = np.exp(self.log_evidence - self.log_evidence.max())
        return self.at(TAU2_GRID[int(rng.choice(len(TAU2_GRID), p=weights / weights.sum()))])

    def at(self, tau2: float) -> Posterior:
        if tau2 not in self._at:
            mean0, variances = _prior(self.n, tau2)
            features = self.features
            precision = np.diag(1.0 / variances) + features.T @ features / self.noise
            information = mean0 / variances + features.T @ self.rewards / self.noise
            factor = cho_factor(precision, lower=True)
            mean = np.asarray(cho_solve(factor, information), dtype=float)
            self._at[tau2] = Posterior(mean, factor, tau2)
        return self._at[tau2]


def posterior(
    masks: Masks, rewards: FloatArray, free_weights: FloatArray, noise: float
) -> Posterior:
    """The posterior after the target's ``(masks, rewards)`` at the ``tau2`` of highest
    evidence."""
    return Evidence(masks, rewards, free_weights, noise).best()


def target_weights(theta: FloatArray, free_weights: FloatArray) -> FloatArray:
    """Segment weights ``a * w_free + d`` of one or several ``(b, a, d)`` rows."""
    theta = np.atleast_2d(theta)
    return np.asarray(theta[:, 1:2] * free_weights[None, :] + theta[:, 2:], dtype=float)


class PriorSampler(Sampler):
    """Thompson draws of the target's weights; a draw's positive weights are the subset."""

    def __init__(self, method: FreePrior, n_segments: int, budget: int, rng: np.random.Generator):
        self.method = method
        self.budget = budget
        self.rng = rng
        self.masks: list[Masks] = []
        self.rewards: list[FloatArray] = []
        self.seen: set[bytes] = set()

    def next_masks(self) -> Masks | None:
        done = sum(len(m) for m in self.masks)
        remaining = self.budget - done
        if remaining <= 0:
            return None
        free = self.method.free_weights
        count = min(self.method.batch_size, remaining)
        rows: list[Masks] = []
        proposed = set(self.seen)
        masks = np.concatenate(self.masks) if self.masks else np.zeros((0, len(free)), dtype=bool)
        rewards = np.concatenate(self.rewards) if self.rewards else np.zeros(0)
        evidence = Evidence(masks, rewards, free, self.method.noise_variance)  # for this round
        for _ in range(count):
            for attempt in range(MAX_REDRAWS + 1):
                post = evidence.draw(self.rng)
                if self.method.design == "bernoulli":
                    mask = self.rng.random(len(free)) < 0.5
                else:
                    mask = target_weights(post.sample(self.rng, 1)[0], free)[0] > 0
                if attempt == MAX_REDRAWS:  # every draw repeats: a random unseen subset
                    mask = self.rng.random(len(free)) < 0.5
                if mask.tobytes() not in proposed:
                    break
                self.n_redrawn += attempt == 0
            proposed.add(mask.tobytes())
            rows.append(mask)
        return np.array(rows, dtype=bool)

    def observe(self, masks: Masks, rewards: FloatArray) -> None:
        self.seen.update(m.tobytes() for m in masks)
        self.masks.append(np.asarray(masks, dtype=bool))
        self.rewards.append(np.asarray(rewards, dtype=float))


@dataclass
class FreePrior(Method):
    """CAMAB on the target model with the free model's weights (``free_weights``, from
    ``free_calls`` calls of ``free_model``) as its prior. ``design``: the target's subsets
    are CAMAB's own draws (``"camab"``, the prior in the fit only), Thompson draws from the
    prior's posterior (``"thompson"``) or Bernoulli halves (``"bernoulli"``)."""

    free_weights: FloatArray = field(default_factory=lambda: np.zeros(0))
    free_calls: int = 0
    free_model: str = ""
    noise_variance: float = 0.01
    batch_size: int = 1
    design: str = "camab"

    name = "prior"

    def __post_init__(self) -> None:
        self.free_weights = np.asarray(self.free_weights, dtype=float).reshape(-1)
        if not np.all(np.isfinite(self.free_weights)):
            raise ValueError("the free model's weights must be finite")
        if self.noise_variance <= 0 or self.batch_size < 1:
            raise ValueError("noise_variance must be positive and batch_size >= 1")
        if self.design not in DESIGNS:
            raise ValueError(f"design must be one of {DESIGNS}, got {self.design!r}")

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        if len(self.free_weights) != n_segments:
            raise ValueError(
                f"the free model scored {len(self.free_weights)} segments, the run has {n_segments}"
            )
        if self.design == "camab":  # the paper's draws; the prior enters the fit only
            bandit = Camab(noise_variance=self.noise_variance, batch_size=self.batch_size)
            return bandit.sampler(n_segments, budget, rng)
        return PriorSampler(self, n_segments, budget, rng)

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        post = posterior(
            masks, np.asarray(rewards, dtype=float), self.free_weights, self.noise_variance
        )
        return np.asarray(target_weights(post.mean, self.free_weights)[0], dtype=float)

    def config(self) -> dict[str, Any]:
        return {**asdict(self), "free_weights": [round(float(w), 6) for w in self.free_weights]}

"""Reward functions: how well a subset's prompt supports the original response.

Each maps the response tokens' log-probabilities (one array) to a float.

* ``"mean_logprob"`` (default, the CAMAB paper's Eq. 1): average token log-probability.
* ``"sum_logprob"``: total log-probability of the response.
* ``"logit"``: ContextCite's target, the average per-token logit ``log p - log(1 - p)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError

RewardFn = Callable[[NDArray[np.float64]], float]


def mean_logprob(logprobs: NDArray[np.float64]) -> float:
    return float(np.mean(logprobs))


def sum_logprob(logprobs: NDArray[np.float64]) -> float:
    return float(np.sum(logprobs))


def mean_logit(logprobs: NDArray[np.float64]) -> float:
    # log(1 - p) computed stably; p == 1 would give +inf, so cap the token probability.
    capped = np.minimum(logprobs, np.log1p(-1e-12))
    return float(np.mean(capped - np.log(-np.expm1(capped))))


REWARDS: dict[str, RewardFn] = {
    "mean_logprob": mean_logprob,
    "sum_logprob": sum_logprob,
    "logit": mean_logit,
}


def get_reward(reward: str | RewardFn) -> tuple[str, RewardFn]:
    """Resolve a reward name (or a callable) to ``(name, function)``."""
    if callable(reward):
        return getattr(reward, "__name__", "custom"), reward
    try:
        return reward, REWARDS[reward]
    except KeyError:
        raise InputError(f"unknown reward {reward!r}; choose one of {sorted(REWARDS)}") from None

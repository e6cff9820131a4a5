"""Rewards V(S) from the response's log-probs under a subset's prompt, priced once per
subset by an oracle."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError, ScorerError
from camab_rag.prompts import PromptBuilder
from camab_rag.scorers.base import Prompt, ResponseLogprobs, Scorer, ScoreRequest, parallel_requests
from camab_rag.steps import BlockingCall, ScoreCall, Steps

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


Masks = NDArray[np.bool_]
FloatArray = NDArray[np.float64]
ScoredHook = Callable[[int], object]
#: new subsets per scorer call at most (unless the scorer runs more at once): progress
PROGRESS_EVERY = 4


class ScorerOracle:
    """Rewards from a scorer, cached by subset; ``on_scored(n_queries)`` after each call."""

    def __init__(
        self, builder: PromptBuilder, scorer: Scorer, response: str, reward_fn: RewardFn
    ) -> None:
        self.builder = builder
        self.scorer = scorer
        self.response = response
        self.reward_fn = reward_fn
        self.cache: dict[bytes, ResponseLogprobs] = {}
        self.n_queries = 0
        self.prompt_tokens = 0
        self.per_call = max(PROGRESS_EVERY, parallel_requests(scorer))
        self.on_scored: ScoredHook | None = None

    def _store(self, keys: Sequence[bytes], results: list[ResponseLogprobs]) -> None:
        if len(results) != len(keys):
            raise ScorerError(
                f"the scorer returned {len(results)} results for {len(keys)} requests"
            )
        for key, result in zip(keys, results):
            if not isinstance(result, ResponseLogprobs):
                raise ScorerError(
                    f"the scorer returned {type(result).__name__}, expected ResponseLogprobs"
                )
            self.cache[key] = result
            self.n_queries += 1
            self.prompt_tokens += int(result.prompt_tokens)

    def rewards(self, masks: Masks) -> Steps[FloatArray]:
        """The rewards of ``masks``, asking only for new subsets."""
        new = {m.tobytes(): m for m in masks if m.tobytes() not in self.cache}
        for part in _chunked(list(new.values()), self.per_call):
            requests = [ScoreRequest(self.builder.build(mask), self.response) for mask in part]
            self._store([mask.tobytes() for mask in part], (yield ScoreCall(self.scorer, requests)))
            if self.on_scored is not None:
                self.on_scored(self.n_queries)
        reward = self.reward_fn
        return np.array(
            [
                finite_reward(reward(self.cache[m.tobytes()].logprobs), "the reward function", m)
                for m in masks
            ]
        )

    def prompt_logprobs(self, name: str, prompt: Prompt) -> Steps[ResponseLogprobs]:
        """The response's log-probs under a prompt no subset builds (cached, counted)."""
        key = b"prompt:" + name.encode()
        if key not in self.cache:
            request = ScoreRequest(prompt, self.response)
            self._store([key], (yield ScoreCall(self.scorer, [request])))
            if self.on_scored is not None:
                self.on_scored(self.n_queries)
        return self.cache[key]

    def logprobs(self, mask: NDArray[np.bool_]) -> ResponseLogprobs:
        return self.cache[mask.tobytes()]


def finite_reward(value: object, source: str, mask: NDArray[np.bool_]) -> float:
    """``value`` (what ``source`` gave for ``mask``) as a finite float, else an InputError."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{source} must return a float, got {type(value).__name__}") from None
    if not math.isfinite(number):
        raise InputError(f"{source} returned {number} for subset {mask.astype(int).tolist()}")
    return number


class FunctionOracle:
    """Rewards from a ``mask -> float`` function, cached by subset."""

    def __init__(self, value_fn: Callable[[NDArray[np.bool_]], float]) -> None:
        self.value_fn = value_fn
        self.cache: dict[bytes, float] = {}
        self.n_queries = 0
        self.prompt_tokens = 0
        self.on_scored: ScoredHook | None = None

    def rewards(self, masks: Masks) -> Steps[FloatArray]:
        new = [m for m in masks if m.tobytes() not in self.cache]
        for part in _chunked(list({m.tobytes(): m for m in new}.values()), PROGRESS_EVERY):
            yield BlockingCall(partial(self.evaluate, np.array(part)))
            if self.on_scored is not None:
                self.on_scored(self.n_queries)
        return self.evaluate(masks)

    def evaluate(self, masks: Masks) -> FloatArray:
        values = []
        for mask in masks:
            key = mask.tobytes()
            if key not in self.cache:
                self.cache[key] = finite_reward(self.value_fn(mask.copy()), "value_fn", mask)
                self.n_queries += 1
            values.append(self.cache[key])
        return np.asarray(values, dtype=float)


def _chunked(masks: Sequence[NDArray[np.bool_]], size: int) -> list[list[NDArray[np.bool_]]]:
    return [list(masks[start : start + size]) for start in range(0, len(masks), size)]

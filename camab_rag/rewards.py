"""Rewards V(S): a function of the response's log-probs under a subset's prompt (or any
``mask -> float``), priced once per subset by an oracle."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

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


PROGRESS_EVERY = 4  # new subsets a call at most (unless the scorer runs more at once)


def finite_reward(value: object, source: str, mask: NDArray[np.bool_]) -> float:
    """``value`` (what ``source`` gave for ``mask``) as a finite float, else an InputError."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{source} must return a float, got {type(value).__name__}") from None
    if not math.isfinite(number):
        raise InputError(f"{source} returned {number} for subset {mask.astype(int).tolist()}")
    return number


class _Oracle:
    """Rewards priced once per subset, ``per_call`` a call, each followed by ``on_scored``."""

    per_call = PROGRESS_EVERY
    _price: Callable[[list[NDArray[np.bool_]]], Steps[None]]

    def __init__(self) -> None:
        self.values: dict[bytes, float] = {}
        self.n_queries = 0
        self.prompt_tokens = 0
        self.on_scored: Callable[[int], object] = lambda calls: None

    def rewards(self, masks: NDArray[np.bool_]) -> Steps[NDArray[np.float64]]:
        """The rewards of ``masks``, pricing only new subsets."""
        new = list({m.tobytes(): m for m in masks if m.tobytes() not in self.values}.values())
        for start in range(0, len(new), self.per_call):
            yield from self._price(new[start : start + self.per_call])
            self.on_scored(self.n_queries)
        return np.array([self.values[m.tobytes()] for m in masks], dtype=float)


class FunctionOracle(_Oracle):
    """Rewards from a ``mask -> float`` function."""

    def __init__(self, value_fn: Callable[[NDArray[np.bool_]], float]) -> None:
        super().__init__()
        self.value_fn = value_fn

    def _price(self, masks: list[NDArray[np.bool_]]) -> Steps[None]:
        def evaluate() -> None:
            for mask in masks:
                value = self.value_fn(mask.copy())
                self.values[mask.tobytes()] = finite_reward(value, "value_fn", mask)
                self.n_queries += 1

        yield BlockingCall(evaluate)


class ScorerOracle(_Oracle):
    """Rewards from a scorer: ``reward_fn`` of the response's log-probs under each
    subset's prompt (kept: :meth:`logprobs`)."""

    def __init__(
        self, builder: PromptBuilder, scorer: Scorer, response: str, reward_fn: RewardFn
    ) -> None:
        super().__init__()
        self.builder, self.scorer, self.response, self.reward_fn = (
            builder,
            scorer,
            response,
            reward_fn,
        )
        self.cache: dict[bytes, ResponseLogprobs] = {}
        self.per_call = max(PROGRESS_EVERY, parallel_requests(scorer))

    def _price(self, masks: list[NDArray[np.bool_]]) -> Steps[None]:
        requests = [ScoreRequest(self.builder.build(mask), self.response) for mask in masks]
        self._store([mask.tobytes() for mask in masks], (yield ScoreCall(self.scorer, requests)))
        for mask in masks:
            value = self.reward_fn(self.cache[mask.tobytes()].logprobs)
            self.values[mask.tobytes()] = finite_reward(value, "the reward function", mask)

    def _store(self, keys: Sequence[bytes], results: list[ResponseLogprobs]) -> None:
        if len(results) != len(keys):
            raise ScorerError(f"the scorer gave {len(results)} results for {len(keys)} requests")
        for key, result in zip(keys, results):
            if not isinstance(result, ResponseLogprobs):
                raise ScorerError(f"the scorer gave {type(result).__name__}, not ResponseLogprobs")
            self.cache[key] = result
            self.n_queries += 1
            self.prompt_tokens += int(result.prompt_tokens)

    def prompt_logprobs(self, name: str, prompt: Prompt) -> Steps[ResponseLogprobs]:
        """The response's log-probs under a prompt no subset builds (cached, counted)."""
        key = b"prompt:" + name.encode()
        if key not in self.cache:
            request = ScoreRequest(prompt, self.response)
            self._store([key], (yield ScoreCall(self.scorer, [request])))
            self.on_scored(self.n_queries)
        return self.cache[key]

    def logprobs(self, mask: NDArray[np.bool_]) -> ResponseLogprobs:
        return self.cache[mask.tobytes()]

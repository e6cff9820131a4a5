"""Reward oracles: evaluate V(S) for inclusion masks, paying for each subset once.

:class:`ScorerOracle` asks a :class:`~camab_rag.scoring.Scorer` for the response's token
log-probabilities under each subset's prompt, caches them by subset, and counts distinct
queries and prompt tokens. :class:`FunctionOracle` wraps a plain ``mask -> reward``
function (the engine with no LLM at all).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError, ScorerError
from camab_rag.prompts import PromptBuilder
from camab_rag.rewards import RewardFn
from camab_rag.rounds import LocalCall, ScoreCall, Steps, adrive, drive
from camab_rag.scoring import ResponseLogprobs, Scorer, ScoreRequest

Masks = NDArray[np.bool_]
FloatArray = NDArray[np.float64]


class ScorerOracle:
    """Rewards from a scorer, cached by subset (no subset is ever paid for twice)."""

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

    def _new_masks(self, masks: Masks) -> list[NDArray[np.bool_]]:
        pending: dict[bytes, NDArray[np.bool_]] = {}
        for mask in masks:
            key = mask.tobytes()
            if key not in self.cache:
                pending.setdefault(key, mask)
        return list(pending.values())

    def _store(self, masks: Sequence[NDArray[np.bool_]], results: list[ResponseLogprobs]) -> None:
        if len(results) != len(masks):
            raise ScorerError(
                f"the scorer returned {len(results)} results for {len(masks)} requests"
            )
        for mask, result in zip(masks, results):
            if not isinstance(result, ResponseLogprobs):
                raise ScorerError(
                    f"the scorer returned {type(result).__name__}, expected ResponseLogprobs"
                )
            self.cache[mask.tobytes()] = result
            self.n_queries += 1
            self.prompt_tokens += int(result.prompt_tokens)

    def _requests(self, masks: Sequence[NDArray[np.bool_]]) -> list[ScoreRequest]:
        return [ScoreRequest(self.builder.build(mask), self.response) for mask in masks]

    def _rewards(self, masks: Masks) -> FloatArray:
        # (ResponseLogprobs holds finite log-probs only: a non-finite reward is the function's)
        return np.array(
            [
                finite_reward(
                    self.reward_fn(self.cache[m.tobytes()].logprobs), "the reward function", m
                )
                for m in masks
            ]
        )

    def rewards(self, masks: Masks) -> Steps[FloatArray]:
        """The rewards of ``masks``, asking the scorer (one batch) for the new subsets only;
        run by :func:`~camab_rag.rounds.drive` or :func:`~camab_rag.rounds.adrive`."""
        new = self._new_masks(masks)
        if new:
            self._store(new, (yield ScoreCall(self.scorer, self._requests(new))))
        return self._rewards(masks)

    def evaluate(self, masks: Masks) -> FloatArray:
        return drive(self.rewards(masks))

    async def aevaluate(self, masks: Masks) -> FloatArray:
        return await adrive(self.rewards(masks))

    def logprobs(self, mask: NDArray[np.bool_]) -> ResponseLogprobs:
        """The cached log-probabilities of an evaluated subset."""
        return self.cache[mask.tobytes()]


def finite_reward(value: object, source: str, mask: NDArray[np.bool_]) -> float:
    """``value`` (what ``source`` gave for the subset ``mask``) as a finite float, or an
    :class:`~camab_rag.errors.InputError` naming the source and the subset."""
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

    def rewards(self, masks: Masks) -> Steps[FloatArray]:
        """The rewards of ``masks`` (computed in place; no model is asked)."""
        return (yield LocalCall(lambda: self.evaluate(masks)))  # type: ignore[no-any-return]

    def evaluate(self, masks: Masks) -> FloatArray:
        values = []
        for mask in masks:
            key = mask.tobytes()
            if key not in self.cache:
                self.cache[key] = finite_reward(self.value_fn(mask.copy()), "value_fn", mask)
                self.n_queries += 1
            values.append(self.cache[key])
        return np.asarray(values, dtype=float)

    async def aevaluate(self, masks: Masks) -> FloatArray:
        return await adrive(self.rewards(masks))

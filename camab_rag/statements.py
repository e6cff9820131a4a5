"""Per-statement attribution: each answer sentence's reward is the reward of its tokens,
from the log-probs already collected, refitted on the same subsets (no model calls)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from camab_rag.methods import Method
from camab_rag.result import StatementAttribution
from camab_rag.rewards import RewardFn, ScorerOracle
from camab_rag.scorers.base import ResponseLogprobs
from camab_rag.sentences import split_sentences


def span_rewards(
    rows: Sequence[ResponseLogprobs],
    spans: Iterable[tuple[int, int]],
    reward_fn: RewardFn,
) -> tuple[list[tuple[int, int]], NDArray[np.float64]]:
    """The response spans that own a token, and each one's reward under every scored subset
    (from the tokens whose first visible character falls inside it)."""
    starts = [  # where each token's first visible character stands
        row.token_offsets.astype(np.int64) + [len(t) - len(t.lstrip()) for t in row.tokens]
        for row in rows
    ]
    kept: list[tuple[int, int]] = []
    columns: list[list[float]] = []
    for start, end in spans:
        column = []
        for row, token_start in zip(rows, starts):
            inside = (token_start >= start) & (token_start < end)
            if not inside.any():
                break
            column.append(float(reward_fn(row.logprobs[inside])))
        else:
            kept.append((start, end))
            columns.append(column)
    return kept, np.asarray(columns, dtype=float).T.reshape(len(rows), len(kept))


def attribute_statements(
    method: Method, source: ScorerOracle, masks: NDArray[np.bool_], seed: int = 0
) -> list[StatementAttribution]:
    """One :class:`StatementAttribution` per answer sentence that owns at least one token."""
    spans = split_sentences(source.response)
    if not spans or masks.shape[0] == 0:
        return []
    rows = [source.logprobs(mask) for mask in masks]
    kept, rewards = span_rewards(rows, spans, source.reward_fn)
    if not kept:
        return []
    scores = method.fit_many(masks, rewards, seed)
    return [
        StatementAttribution(source.response[start:end], start, end, scores[k])
        for k, (start, end) in enumerate(kept)
    ]

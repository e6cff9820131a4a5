"""Scorer wrappers: :class:`CountingScorer` counts every model call of a run the same way
for every method; :class:`MemoScorer` answers a request seen before from memory."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from camab_rag.scorers.base import (
    BaseScorer,
    Prompt,
    ResponseLogprobs,
    ScoreRequest,
    parallel_requests,
)


@dataclass(frozen=True)
class Usage:
    """Cumulative model usage (per-method figures are differences of two snapshots)."""

    score_requests: int = 0
    prompt_tokens: int = 0
    score_seconds: float = 0.0
    generations: int = 0
    generate_seconds: float = 0.0

    def __sub__(self, other: Usage) -> Usage:
        pairs = zip(dataclasses.astuple(self), dataclasses.astuple(other))
        return Usage(*(a - b for a, b in pairs))


class CountingScorer(BaseScorer):
    """Wraps a real scorer (and text generator); counts requests, tokens and seconds."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._usage = Usage()

    def __getattr__(self, name: str) -> Any:  # tokenizer, model, render_prompt, ...
        return getattr(self.inner, name)

    @property
    def parallel_requests(self) -> int:
        """The wrapped scorer's parallel capacity (counting changes nothing about it)."""
        return parallel_requests(self.inner)

    def snapshot(self) -> Usage:
        return self._usage

    def _add(self, **spent: float) -> None:
        u = self._usage
        self._usage = dataclasses.replace(u, **{k: getattr(u, k) + v for k, v in spent.items()})

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        started = time.perf_counter()
        results: list[ResponseLogprobs] = self.inner.score(requests)
        tokens = sum(int(r.prompt_tokens) for r in results)
        seconds = time.perf_counter() - started
        self._add(score_requests=len(results), prompt_tokens=tokens, score_seconds=seconds)
        return results

    def generate(self, prompts: Sequence[Prompt], *, max_new_tokens: int = 128) -> list[str]:
        started = time.perf_counter()
        answers: list[str] = self.inner.generate(prompts, max_new_tokens=max_new_tokens)
        self._add(generations=len(answers), generate_seconds=time.perf_counter() - started)
        return answers


class MemoScorer(BaseScorer):
    """Serves a request seen before (same prompt and response) from memory, so the designs
    and budgets of one example share model time."""

    def __init__(self, scorer: Any) -> None:
        self.scorer = scorer
        self.memory: dict[str, ResponseLogprobs] = {}

    @property
    def parallel_requests(self) -> int:
        return parallel_requests(self.scorer)

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        keys = [json.dumps([str(r.prompt), r.response], default=str) for r in requests]
        todo = {k: r for k, r in zip(keys, requests) if k not in self.memory}
        if todo:
            self.memory.update(zip(todo, self.scorer.score(list(todo.values()))))
        return [self.memory[k] for k in keys]

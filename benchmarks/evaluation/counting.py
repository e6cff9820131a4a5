"""A scorer wrapper that counts every model call the benchmark makes.

All methods, peers and metrics of a run talk to the model through one
:class:`CountingScorer`, so query counts, prompt tokens and model seconds are measured the
same way for everyone. Per-method figures are read as differences of :meth:`snapshot`.
"""

from __future__ import annotations

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
    """Cumulative model usage."""

    score_requests: int = 0
    prompt_tokens: int = 0
    score_seconds: float = 0.0
    generations: int = 0
    generate_seconds: float = 0.0

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.score_requests - other.score_requests,
            self.prompt_tokens - other.prompt_tokens,
            self.score_seconds - other.score_seconds,
            self.generations - other.generations,
            self.generate_seconds - other.generate_seconds,
        )


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

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        started = time.perf_counter()
        results: list[ResponseLogprobs] = self.inner.score(requests)
        u = self._usage
        self._usage = Usage(
            u.score_requests + len(results),
            u.prompt_tokens + sum(int(r.prompt_tokens) for r in results),
            u.score_seconds + time.perf_counter() - started,
            u.generations,
            u.generate_seconds,
        )
        return results

    def generate(self, prompts: Sequence[Prompt], *, max_new_tokens: int = 128) -> list[str]:
        started = time.perf_counter()
        answers: list[str] = self.inner.generate(prompts, max_new_tokens=max_new_tokens)
        u = self._usage
        self._usage = Usage(
            u.score_requests,
            u.prompt_tokens,
            u.score_seconds,
            u.generations + len(answers),
            u.generate_seconds + time.perf_counter() - started,
        )
        return answers


class MemoScorer(BaseScorer):
    """Serves a request seen before (same prompt and response) from memory, so the designs
    and budgets of one example share model time; ``model_calls`` counts the rest."""

    def __init__(self, scorer: Any) -> None:
        self.scorer = scorer
        self.memory: dict[str, ResponseLogprobs] = {}
        self.model_calls = 0

    @property
    def parallel_requests(self) -> int:
        return parallel_requests(self.scorer)

    @staticmethod
    def key(request: ScoreRequest) -> str:
        return json.dumps([str(request.prompt), request.response], sort_keys=True, default=str)

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        keys = [self.key(r) for r in requests]
        todo = {k: r for k, r in zip(keys, requests) if k not in self.memory}
        if todo:
            self.memory.update(zip(todo, self.scorer.score(list(todo.values()))))
            self.model_calls += len(todo)
        return [self.memory[k] for k in keys]

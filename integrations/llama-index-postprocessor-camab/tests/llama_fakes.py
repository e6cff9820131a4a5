"""Scorer doubles for the pure-logic LlamaIndex tests (the model tests use SmolLM2)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np

from camab_rag.scoring import BaseScorer, ResponseLogprobs, ScoreRequest


def prompt_text(prompt: Any) -> str:
    return prompt if isinstance(prompt, str) else "\n".join(m["content"] for m in prompt)


class PlantedScorer(BaseScorer):
    """Reward = -3 + 1 for each planted phrase present in the prompt (one token)."""

    def __init__(self, planted: Sequence[str], delay: float = 0.0) -> None:
        self.planted = list(planted)
        self.delay = delay
        self.prompts: list[str] = []

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        out = []
        for request in requests:
            text = prompt_text(request.prompt)
            self.prompts.append(text)
            value = -3.0 + sum(1.0 for p in self.planted if p in text)
            out.append(ResponseLogprobs(np.array([value]), np.array([0], dtype=np.int64)))
        return out

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        await asyncio.sleep(self.delay)
        return self.score(requests)


class FailingScorer(BaseScorer):
    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        raise RuntimeError("scorer exploded on purpose")

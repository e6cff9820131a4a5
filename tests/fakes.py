"""Test doubles for pure-logic tests (real scorers are tested in their own files)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from camab_rag.scoring import BaseScorer, ResponseLogprobs, ScoreRequest


def prompt_text(prompt: object) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n".join(message["content"] for message in prompt)  # type: ignore[attr-defined]


class KeywordScorer(BaseScorer):
    """Each response word is likely (-0.1) when the prompt contains it, unlikely (-3)
    otherwise: segments holding the answer's words are the important ones."""

    def __init__(self) -> None:
        self.calls: list[ScoreRequest] = []

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.calls.extend(requests)
        results = []
        for request in requests:
            text = prompt_text(request.prompt).lower()
            words = list(re.finditer(r"\S+", request.response))
            logprobs = [
                -0.1 if re.sub(r"\W", "", m.group()).lower() in text else -3.0 for m in words
            ]
            results.append(
                ResponseLogprobs(
                    logprobs=np.array(logprobs, dtype=float),
                    token_offsets=np.array([m.start() for m in words], dtype=np.int64),
                    tokens=tuple(m.group() for m in words),
                    prompt_tokens=len(text.split()),
                )
            )
        return results


class FailingScorer(BaseScorer):
    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        raise RuntimeError("scorer is down")

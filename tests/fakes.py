"""Test doubles for pure-logic tests (real scorers are tested in their own files)."""

from __future__ import annotations

from collections.abc import Sequence

from camab_cli.audit.simulated import keyword_logprobs
from camab_rag.scoring import BaseScorer, ResponseLogprobs, ScoreRequest


class KeywordScorer(BaseScorer):
    """Each response word is likely (-0.1) when the prompt contains it, unlikely (-3)
    otherwise: segments holding the answer's words are the important ones."""

    def __init__(self) -> None:
        self.calls: list[ScoreRequest] = []

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.calls.extend(requests)
        return [keyword_logprobs(request) for request in requests]


class FailingScorer(BaseScorer):
    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        raise RuntimeError("scorer is down")

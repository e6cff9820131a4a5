"""Test doubles for pure-logic tests (real scorers are tested in their own files)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from camab_rag.integration import ChainCall, Runs
from camab_rag.result import AttributionResult
from camab_rag.scorers.base import BaseScorer, ResponseLogprobs, ScoreRequest, prompt_texts
from camab_rag.segments import Segment, segment_documents, to_documents
from camab_rag.settings import CHAIN_SETTINGS, groundedness_filter
from camab_rag.steps import Steps, adrive, drive


class KeywordScorer(BaseScorer):
    """Each response word is likely (-0.1) when the prompt contains it, unlikely (-3)
    otherwise: segments holding the answer's words are the important ones. (The audit's
    simulated scorer in the tools uses the same rule; the core's tests do not import it.)"""

    def __init__(self) -> None:
        self.calls: list[ScoreRequest] = []

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.calls.extend(requests)
        return [self.logprobs(request) for request in requests]

    @staticmethod
    def logprobs(request: ScoreRequest) -> ResponseLogprobs:
        prompt = "\n".join(prompt_texts(request.prompt)).lower()
        words = list(re.finditer(r"\S+", request.response))
        if not words:
            raise ValueError("the response has no words to score")
        found = [re.sub(r"\W", "", word.group()).lower() in prompt for word in words]
        return ResponseLogprobs(
            logprobs=np.where(found, -0.1, -3.0),
            token_offsets=np.array([word.start() for word in words], dtype=np.int64),
            tokens=tuple(word.group() for word in words),
            prompt_tokens=len(prompt.split()),
        )


def over_sentences(
    docs: Sequence[str],
    question: str,
    answer: str,
    scores: Callable[[list[Segment]], np.ndarray],
    n_queries: int = 8,
) -> AttributionResult:
    """``answer`` attributed over the sentences of ``docs``, each segment's score given by
    ``scores`` (a pure-logic stand-in for a model's attribution, for cite() and the gate)."""
    segments = segment_documents(to_documents(list(docs)), "sentence")
    return AttributionResult(
        scores=np.asarray(scores(segments), dtype=float),
        segments=segments,
        question=question,
        response=answer,
        n_documents=len(docs),
        n_queries=n_queries,
    )


class FailingScorer(BaseScorer):
    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        raise RuntimeError("scorer is down")


def _captured_steps(
    question: str,
    documents: Any,
    response: str,
    scorer: Any,
    settings: Any = None,
    *,
    prompts: Sequence[Any] = (),
    progress: Any = None,
    groundedness: Any = None,
) -> Steps[AttributionResult]:
    settings = settings or CHAIN_SETTINGS
    runs: Runs[AttributionResult] = Runs(
        settings, groundedness_filter(groundedness, settings), strict=True
    )
    call = ChainCall(question, response, documents, lambda: scorer, prompts, progress)
    return runs.steps(None, call, lambda result: result)


def attribute_captured(*args: Any, **kwargs: Any) -> AttributionResult:
    """A chain's attribution in its captured prompt (the kernel's generator, driven)."""
    return drive(_captured_steps(*args, **kwargs))


async def aattribute_captured(*args: Any, **kwargs: Any) -> AttributionResult:
    return await adrive(_captured_steps(*args, **kwargs))

"""Batched Thompson sampling where it pays (#24 item 3): ``method="auto"`` scores as many
Thompson draws per round as the scorer runs at once (its ``parallel_requests``: a GPU
model's batch size, an HTTP client's requests in flight), at most 2, and one under 16
calls; an explicit ``batch_size`` wins, a scorer on the CPU or without the attribute
keeps q=1, and ``method="camab"`` stays the paper's one draw per round.

Why q is capped at 2: on one level of chunks, where auto then made Thompson draws only, q=2
kept the quality of q=1 and q=4 found the exact top chunk less often (a benchmark since
retired, last at commit 68c483b; :data:`camab_rag.methods.auto.MAX_AUTO_BATCH`). Why one
under 16 calls: on the LDS benchmark two draws a round lost Bernoulli ½ LDS at 8 calls over
several documents and moved no cell beyond chance at 16-64 (benchmarks/results/quality/
README.md, lesson 11; :data:`camab_rag.methods.auto.TWO_DRAWS_FROM`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from fakes import KeywordScorer, attribute_captured

from camab_rag import AttributionSettings, aattribute, attribute, attribute_fn
from camab_rag.errors import InputError
from camab_rag.methods import Auto
from camab_rag.methods.auto import MAX_AUTO_BATCH, auto_batch_size
from camab_rag.methods.registry import method_from_config
from camab_rag.scorers.base import ResponseLogprobs, ScoreRequest, parallel_requests
from camab_rag.scorers.openai_completions import OpenAICompletionsScorer
from camab_rag.scorers.proxy import ProxyFallbackScorer
from camab_rag.scorers.transformers_scorer import TransformersScorer
from camab_rag.settings import CHAIN_SETTINGS

RESPONSE = "Vermeer painted Delft."
FILLER = [
    "The harbour froze in a cold winter.",
    "Merchants traded spices and cloth.",
    "A canal ran past the old church.",
    "Bells rang at noon every day.",
    "Tulips were sold at high prices.",
    "The guild met on Thursdays.",
    "Ships left for distant ports.",
    "Bread was baked before dawn.",
]


def documents() -> list[str]:
    """Six documents of four sentences; the answer's words sit in two sentences of two
    documents (the planted signal)."""
    docs = []
    for d in range(6):
        sentences = [f"{FILLER[(d + k) % len(FILLER)][:-1]} in year {d}{k}." for k in range(4)]
        if d == 1:
            sentences[2] = "Vermeer worked slowly with costly pigments."
        if d == 4:
            sentences[0] = "Delft was his home town."
        docs.append(" ".join(sentences))
    return docs


class ParallelScorer(KeywordScorer):
    """The keyword scorer (answer words present in the prompt are likely), claiming to run
    ``parallel`` requests at once; records the size of every batch it receives."""

    def __init__(self, parallel: int) -> None:
        super().__init__()
        self.parallel = parallel
        self.batches: list[int] = []

    @property
    def parallel_requests(self) -> int:
        return self.parallel

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.batches.append(len(requests))
        return super().score(requests)


class PlainScorer:
    """A third-party scorer: ``score`` and ``ascore`` only, no ``parallel_requests``."""

    def __init__(self) -> None:
        self.inner = KeywordScorer()

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        return self.inner.score(requests)

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        return self.inner.score(requests)


def run(scorer: Any, **options: Any) -> Any:
    """``options``: settings fields and ``"auto"``'s options, as one flat list."""
    options.setdefault("budget", 40)
    settings = AttributionSettings().with_changes(**options)
    return attribute("Who was the artist?", documents(), RESPONSE, scorer, settings=settings)


# ------------------------------------------------------------------ the rule


@pytest.mark.parametrize(
    ("parallel", "budget", "q"),
    [
        (8, 40, 2),
        (8, 20, 2),
        (8, 16, 2),
        (8, 15, 1),
        (8, 8, 1),
        (2, 40, 2),
        (1, 40, 1),
        (8, 7, 1),
        (3, 4, 1),
        (8, 1, 1),
        (32, 400, 2),
    ],
)
def test_auto_batch_size_follows_the_scorer_capped_by_two_and_one_under_16_calls(
    parallel: int, budget: int, q: int
) -> None:
    assert MAX_AUTO_BATCH == 2
    assert auto_batch_size(parallel, budget) == q


@pytest.mark.parametrize(
    ("value", "read"), [(8, 8), (np.int64(3), 3), (0, 1), (-2, 1), (True, 1), ("4", 1), (2.5, 1)]
)
def test_parallel_requests_reads_a_positive_count_else_one(value: object, read: int) -> None:
    class Claims:
        parallel_requests = value

    assert parallel_requests(Claims()) == read
    assert parallel_requests(object()) == 1
    assert parallel_requests(KeywordScorer()) == 1  # BaseScorer's default


# ------------------------------------------------------------------ auto picks q


def test_auto_picks_q_from_the_scorer_and_records_it() -> None:
    scorer = ParallelScorer(8)
    result = run(scorer)
    assert result.method_config["batch_size"] == 2
    assert result.method_config["hierarchical"] is True
    assert result.method_config["stage1_calls"] == 7
    assert result.n_queries == 40
    # the full context first (its reward picks the design from 40 calls), then the
    # openings (the 6 documents left out once, then the 24 sentences of the refined
    # documents left out once) come as the scorer's 8 at a time (progress every few
    # calls), then the 9 Thompson draws that the budget leaves, 2 a round
    assert result.method_config["design"] == "adaptive" and "full_reward" in result.method_config
    assert scorer.batches == [1, 6, 8, 8, 8, 2, 2, 2, 2, 1]


def test_q1_scorers_make_one_call_per_thompson_round() -> None:
    for scorer in (ParallelScorer(1), PlainScorer(), KeywordScorer()):
        result = run(scorer)
        assert result.method_config["batch_size"] == 1
        assert result.n_queries == 40
    sizes = ParallelScorer(1)
    run(sizes)
    # the full context first, then the openings 4 calls at a time
    assert sizes.batches == [1, 4, 2] + [4] * 6 + [1] * 9


def test_q1_runs_are_the_runs_before_the_change() -> None:
    """A scorer on the CPU (parallel 1) gets exactly the subsets an explicit
    ``batch_size=1`` asks for: the stored q=1 benchmark runs replay."""
    implicit = run(ParallelScorer(1))
    explicit = run(ParallelScorer(8), batch_size=1)
    np.testing.assert_array_equal(implicit.masks, explicit.masks)
    np.testing.assert_allclose(implicit.scores, explicit.scores)
    assert explicit.method_config["batch_size"] == 1


@pytest.mark.parametrize("explicit", [1, 2, 8])
def test_an_explicit_batch_size_wins(explicit: int) -> None:
    scorer = ParallelScorer(4)
    result = run(scorer, batch_size=explicit)
    assert result.method_config["batch_size"] == explicit
    assert result.n_queries == 40
    assert scorer.batches[:9] == [1, 4, 2] + [4] * 6  # the full context, the openings
    # the Thompson rounds, as the scorer's 4 at a time when a round is larger
    assert max(scorer.batches[9:]) == min(explicit, 4)
    assert sum(scorer.batches[9:]) == 9
    instance = run(ParallelScorer(4), method=Auto(batch_size=explicit))
    assert instance.method_config["batch_size"] == explicit


def test_an_auto_instance_without_batch_size_also_follows_the_scorer() -> None:
    assert run(ParallelScorer(8), method=Auto()).method_config["batch_size"] == 2
    assert run(ParallelScorer(8), method=Auto(), budget=7).method_config["batch_size"] == 1
    assert run(ParallelScorer(8), method=Auto(), budget=15).method_config["batch_size"] == 1
    assert run(ParallelScorer(8), method=Auto(), budget=16).method_config["batch_size"] == 2


@pytest.mark.parametrize("budget", [16, 20, 33, 40, 61])
def test_the_budget_still_buys_distinct_calls_with_q_above_one(budget: int) -> None:
    scorer = ParallelScorer(8)
    result = run(scorer, budget=budget)
    assert result.method_config["batch_size"] == auto_batch_size(8, budget)
    assert result.n_queries == budget
    assert sum(scorer.batches) == budget
    prompts = {str(request.prompt) for request in scorer.calls}
    assert len(prompts) == budget
    rows = {mask.tobytes() for mask in result.masks}
    assert len(rows) == result.masks.shape[0] == budget


@pytest.mark.parametrize("explicit", [None, 1, 4])
def test_batched_runs_still_find_the_planted_sentences(explicit: int | None) -> None:
    options = {} if explicit is None else {"batch_size": explicit}
    for scorer in (ParallelScorer(8), ParallelScorer(1)):
        result = run(scorer, **options)
        top = {result.segments[i].text for i in np.argsort(-result.scores)[:2]}
        assert top == {
            "Vermeer worked slowly with costly pigments.",
            "Delft was his home town.",
        }


def test_sync_and_async_pick_the_same_q_and_subsets() -> None:
    sync = run(ParallelScorer(8))
    scorer = ParallelScorer(8)
    async_result = asyncio.run(
        aattribute("Who was the artist?", documents(), RESPONSE, scorer, budget=40)
    )
    assert async_result.method_config["batch_size"] == 2
    np.testing.assert_array_equal(sync.masks, async_result.masks)
    assert async_result.n_queries == 40


def test_the_integrations_default_settings_follow_the_scorer() -> None:
    """The integrations attribute with ``CHAIN_SETTINGS`` (auto, chunks): 8 documents,
    2**8 > 40, so one level: the Shapley opening (30 of 40 calls), as the scorer's 8 at a
    time, then Thompson draws, 2 a round."""
    docs = [f"{FILLER[d]} Vermeer." if d == 3 else FILLER[d] for d in range(8)]
    scorer = ParallelScorer(8)
    captured = attribute_captured("Who?", docs, "Vermeer", scorer, CHAIN_SETTINGS)
    assert captured.method_config["batch_size"] == 2
    assert captured.n_queries == 40
    assert scorer.batches == [8, 8, 8, 6] + [2] * 5
    wide = ParallelScorer(8)
    settings = replace(CHAIN_SETTINGS, method=Auto(batch_size=4))
    explicit = attribute_captured("Who?", docs, "Vermeer", wide, settings)
    assert explicit.method_config["batch_size"] == 4
    assert wide.batches == [8, 8, 8, 6, 4, 4, 2]


def test_the_recorded_config_rebuilds_the_same_q() -> None:
    result = run(ParallelScorer(8))
    rebuilt = method_from_config("auto", result.method_config)
    assert rebuilt.config()["batch_size"] == 2


def test_a_reward_function_keeps_q1() -> None:
    result = attribute_fn(lambda mask: float(mask[0]), 12, budget=40)
    assert result.method_config["batch_size"] == 1


def test_bad_batch_sizes_are_refused() -> None:
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="batch_size"):
            run(ParallelScorer(8), batch_size=bad)
    with pytest.raises(ValueError, match="batch_size"):
        Auto(batch_size=0)


# ------------------------------------------------------------------ camab is unchanged


def test_camab_keeps_one_draw_per_round_whatever_the_scorer() -> None:
    wide, narrow = ParallelScorer(8), ParallelScorer(1)
    one = run(wide, method="camab", hierarchical=False)
    other = run(narrow, method="camab", hierarchical=False)
    assert one.method_config["batch_size"] == other.method_config["batch_size"] == 1
    assert set(wide.batches) == {1}
    assert len(wide.batches) == 40
    np.testing.assert_array_equal(one.masks, other.masks)
    np.testing.assert_allclose(one.scores, other.scores)


# ------------------------------------------------------------------ the scorers say it


def _bare_transformers(device: str, batch_size: int) -> TransformersScorer:
    """A TransformersScorer without a model: enough to read ``parallel_requests``."""
    scorer = TransformersScorer.__new__(TransformersScorer)
    scorer.device = device
    scorer.batch_size = batch_size
    return scorer


@pytest.mark.parametrize(
    ("device", "expected"), [("cpu", 1), ("cuda", 8), ("cuda:1", 8), ("mps", 8)]
)
def test_transformers_scorer_batches_in_parallel_on_a_gpu_only(device: str, expected: int) -> None:
    assert parallel_requests(_bare_transformers(device, 8)) == expected
    assert parallel_requests(_bare_transformers(device, 1)) == 1


@pytest.mark.model
def test_the_cpu_model_scorer_keeps_q1(smollm2_scorer: TransformersScorer) -> None:
    assert smollm2_scorer.device == "cpu"
    assert smollm2_scorer.batch_size > 1
    assert parallel_requests(smollm2_scorer) == 1


def test_the_http_scorer_runs_its_concurrency_at_once() -> None:
    scorer = OpenAICompletionsScorer("http://127.0.0.1:9/v1", "m", max_concurrency=6)
    assert parallel_requests(scorer) == 6
    assert parallel_requests(OpenAICompletionsScorer("http://127.0.0.1:9/v1", "m")) == 8


def test_wrappers_pass_the_inner_capacity_through() -> None:
    # before a fallback: the smaller, so a proxy that takes over mid-run is not over-asked
    assert parallel_requests(ProxyFallbackScorer(ParallelScorer(8), ParallelScorer(2))) == 2
    assert parallel_requests(ProxyFallbackScorer(None, ParallelScorer(3))) == 3


def test_an_answer_the_sources_never_state_gets_the_halves_in_the_same_calls() -> None:
    """Through ``attribute`` at 64 calls: an answer none of whose words the context holds
    (-3 nats a token at the full context, as another model's might be) takes ContextCite's
    random halves after the full context, in the same 64 calls; the scorer's batches are
    the full context, then the halves 8 at a time; the same from 40 calls (the default).
    Under 40 calls nothing moves."""
    scorer = ParallelScorer(8)
    settings = AttributionSettings().with_changes(budget=64)
    answer = "Rembrandt sketched Haarlem."
    result = attribute("Who was the artist?", documents(), answer, scorer, settings=settings)
    assert result.n_queries == 64 and result.masks[0].all()
    assert result.method_config["design"] == "random_halves"
    assert not result.method_config.get("hierarchical")
    assert scorer.batches == [1] + [8] * 7 + [7]
    default = ParallelScorer(8)
    at_40 = attribute(
        "Who was the artist?",
        documents(),
        answer,
        default,
        settings=settings.with_changes(budget=40),
    )
    assert at_40.method_config["design"] == "random_halves"
    assert default.batches == [1] + [8] * 4 + [7]
    fewer = ParallelScorer(8)
    below = attribute(
        "Who was the artist?", documents(), answer, fewer, settings=settings.with_changes(budget=39)
    )
    assert below.method_config["hierarchical"] and fewer.batches[0] == 7

"""One loop for sync and async (camab_rag.steps): a generator of calls gives the same
result under both runners, and an error of a call reaches the generator at its yield."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from camab_rag.steps import BlockingCall, ScoreCall, Steps, adrive, asynced, drive, synced


class CountingScorer:
    """Returns the length of each request; remembers how it was called."""

    def __init__(self, fail_on: int | None = None) -> None:
        self.calls: list[str] = []
        self.fail_on = fail_on

    def _answer(self, kind: str, requests: list[str]) -> list[int]:
        self.calls.append(kind)
        if self.fail_on is not None and len(self.calls) == self.fail_on:
            raise RuntimeError("server down")
        return [len(r) for r in requests]

    def score(self, requests: list[str]) -> list[int]:
        return self._answer("score", requests)

    async def ascore(self, requests: list[str]) -> list[int]:
        return self._answer("ascore", requests)


def totals(scorer: Any, batches: list[list[str]], *, recover: bool = False) -> Steps[int]:
    """Sums the lengths of every request, one call per batch."""
    total = 0
    for batch in batches:
        try:
            lengths = yield ScoreCall(scorer, batch)
        except RuntimeError:
            if not recover:
                raise
            lengths = [-1]
        total += sum(lengths)
    extra = yield BlockingCall(lambda: 100)
    return total + int(extra)


BATCHES = [["a", "bb"], ["ccc"], ["dddd", "e"]]


def test_both_runners_give_the_same_result_with_their_own_calls() -> None:
    sync_scorer, async_scorer = CountingScorer(), CountingScorer()
    assert drive(totals(sync_scorer, BATCHES)) == 111
    import asyncio

    assert asyncio.run(adrive(totals(async_scorer, BATCHES))) == 111
    assert sync_scorer.calls == ["score"] * 3
    assert async_scorer.calls == ["ascore"] * 3


def test_a_failed_call_is_raised_at_the_yield_where_the_generator_can_handle_it() -> None:
    with pytest.raises(RuntimeError, match="server down"):
        drive(totals(CountingScorer(fail_on=2), BATCHES))
    # handled inside: the second batch counts -1, the others as usual
    assert drive(totals(CountingScorer(fail_on=2), BATCHES, recover=True)) == 3 - 1 + 5 + 100


async def test_async_runner_hands_errors_back_too() -> None:
    result = await adrive(totals(CountingScorer(fail_on=1), BATCHES, recover=True))
    assert result == -1 + 3 + 5 + 100


async def test_synced_and_asynced_keep_the_generator_signature() -> None:
    run = synced(totals, "run_totals", "Sums lengths.")
    arun = asynced(totals, "arun_totals")
    assert run(CountingScorer(), BATCHES) == 111
    assert await arun(CountingScorer(), BATCHES) == 111
    assert run.__name__ == "run_totals" and run.__doc__ == "Sums lengths."
    assert list(inspect.signature(arun).parameters) == ["scorer", "batches", "recover"]
    # help() shows what a call returns, not the generator's Steps[...]
    assert inspect.signature(run).return_annotation == "int"
    assert inspect.signature(arun).return_annotation == "int"


async def test_a_misspelled_keyword_names_the_public_function_not_the_generator() -> None:
    # issue 49 review: attribute(..., budjet=8) named the private _attribute_steps()
    run = synced(totals, "run_totals")
    arun = asynced(totals, "arun_totals")
    with pytest.raises(TypeError, match=r"^run_totals\(\) got an unexpected keyword .*'budjet'"):
        run(CountingScorer(), BATCHES, budjet=8)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^arun_totals\(\) missing a required argument"):
        await arun(CountingScorer())  # type: ignore[call-arg]
    import camab_rag

    with pytest.raises(TypeError, match=r"^attribute\(\) .*'budjet'") as raised:
        camab_rag.attribute("q", ["d"], "a", CountingScorer(), budjet=8)
    assert "_steps" not in str(raised.value)


def test_a_misspelled_keyword_of_attribute_suggests_the_right_one() -> None:
    """A fresh user's `attribute(..., budgte=3)` said only "unexpected keyword"; the
    integration objects already suggested the knob."""
    import camab_rag

    with pytest.raises(TypeError, match=r"attribute\(\).*budgte.*did you mean 'budget'"):
        camab_rag.attribute("Q?", ["A doc."], "An answer.", None, budgte=3)

"""The background runner, result store, scorer cache and filter check the integrations share."""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from uuid import uuid4

import pytest

from camab_rag.errors import InputError
from camab_rag.integration.background import Background, ResultStore, fill, pending
from camab_rag.scorers.proxy import _checked_scorer, _ScorerCache
from camab_rag.steps import LocalCall, Steps


def _steps(value: int, calls: list[str]) -> Steps[int]:
    """Two 'model calls' recording the thread they ran in, then ``value``."""
    for _ in range(2):
        yield LocalCall(lambda: calls.append(threading.current_thread().name))
    return value


def test_start_runs_the_steps_in_the_worker_thread_and_wait_returns_the_result() -> None:
    jobs: Background[int] = Background()
    calls: list[str] = []
    jobs.start("a", _steps(1, calls))
    jobs.start("b", _steps(2, calls))
    assert jobs.wait("a", timeout=10) == 1
    assert jobs.wait(timeout=10) == 2  # the latest started
    jobs.close()
    assert len(calls) == 4
    assert all(name.startswith("camab") for name in calls)


def test_astart_runs_as_a_task_and_aflush_awaits_every_one() -> None:
    async def main() -> tuple[int, int, bool]:
        jobs: Background[int] = Background()
        jobs.astart("a", _steps(5, []))
        jobs.astart("b", _steps(6, []))
        await jobs.aflush()
        done = all(job.done() for job in jobs.pending.values())
        return await jobs.await_result("a"), await jobs.await_result(), done

    assert asyncio.run(main()) == (5, 6, True)


def test_wait_refuses_a_task_and_an_unknown_key() -> None:
    jobs: Background[int] = Background()
    with pytest.raises(KeyError, match="no background attribution"):
        jobs.wait()

    async def main() -> None:
        jobs.astart("t", _steps(1, []))
        with pytest.raises(TypeError, match="await_result"):
            jobs.wait("t")
        await jobs.aflush()

    asyncio.run(main())
    with pytest.raises(KeyError):
        jobs.wait("missing")


def test_finished_jobs_past_keep_are_forgotten_oldest_first() -> None:
    jobs: Background[int] = Background(keep=2)
    for key in range(4):
        jobs.start(key, _steps(key, []))
        jobs.wait(key, timeout=10)
    assert list(jobs.pending) == [2, 3]
    assert jobs.wait(3) == 3 and jobs.knows(2) and not jobs.knows(0)
    jobs.close()


def test_a_reused_key_keeps_the_running_job_awaited() -> None:
    async def main() -> tuple[list[int], int]:
        gate = asyncio.Event()
        done: list[int] = []

        def slow(value: int) -> Steps[int]:
            yield _Await(gate)
            done.append(value)
            return value

        jobs: Background[int] = Background()
        jobs.astart("same", slow(1))
        jobs.astart("same", slow(2))  # e.g. two queries without a span id
        assert len(jobs.snapshot()) == 2
        gate.set()
        await jobs.aflush()
        return sorted(done), await jobs.await_result("same")

    assert asyncio.run(main()) == ([1, 2], 2)


def test_cancelling_a_flush_leaves_the_attributions_running() -> None:
    async def main() -> int:
        gate = asyncio.Event()

        def slow() -> Steps[int]:
            yield _Await(gate)
            return 7

        jobs: Background[int] = Background()
        task = jobs.astart("a", slow())
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(jobs.aflush(), 0.05)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(jobs.await_result("a"), 0.05)
        assert not task.cancelled()
        gate.set()
        return await jobs.await_result("a")

    assert asyncio.run(main()) == 7


class _Await:
    """A call that waits for an event (async only)."""

    def __init__(self, event: asyncio.Event) -> None:
        self.event = event

    def run(self) -> None:
        raise AssertionError("async only")

    async def arun(self) -> None:
        await self.event.wait()


def test_a_dropped_job_is_answered_from_the_callers_stored_results() -> None:
    jobs: Background[int] = Background(keep=1)
    for key in range(2):
        jobs.start(key, _steps(key, []))
        jobs.wait(key, timeout=10)
    jobs.close()
    assert not jobs.knows(0)
    assert jobs.wait(0, finished={0: 10}) == 10
    assert asyncio.run(jobs.await_result(0, finished={0: 10})) == 10
    assert jobs.wait(1, finished={1: 99}) == 1  # a kept job answers for itself
    with pytest.raises(KeyError):
        jobs.wait(0)  # without stored results a dropped job is gone


def test_a_failing_job_raises_its_error_from_wait() -> None:
    def failing() -> Steps[int]:
        yield LocalCall(lambda: 1 / 0)
        return 0

    jobs: Background[int] = Background()
    jobs.start("x", failing())
    with pytest.raises(ZeroDivisionError):
        jobs.wait("x", timeout=10)
    jobs.close()


def test_fill_replaces_a_placeholder_in_place() -> None:
    slot = pending("run-1")
    held = slot
    assert slot == {"status": "pending", "error": None, "run_id": "run-1"}
    fill(slot, {"status": "ok", "score": 0.5})
    assert held == {"status": "ok", "score": 0.5}


def test_result_store_keeps_the_newest_and_reads_uuid_strings() -> None:
    store: ResultStore[str] = ResultStore(2, uuid_keys=True)
    ids = [uuid4() for _ in range(3)]
    for i, run_id in enumerate(ids):
        store.add(str(run_id) if i == 1 else run_id, f"r{i}")
    assert list(store) == ids[1:]
    assert store[str(ids[2])] == "r2"
    assert str(ids[1]) in store and ids[0] not in store
    assert store.get(str(ids[0]), "gone") == "gone"


class _Scorer:
    def score(self, requests: Any) -> list[Any]:
        return []


def test_scorer_cache_builds_once_per_key_and_retries_a_failed_build() -> None:
    cache = _ScorerCache()
    built: list[int] = []

    def build() -> _Scorer:
        built.append(1)
        return _Scorer()

    first = cache.get("k", build)
    assert cache.get("k", build) is first and len(built) == 1

    def broken() -> _Scorer:
        raise InputError("no server")

    for _ in range(2):
        with pytest.raises(InputError, match="no server"):
            cache.get("bad", broken)
    assert cache.get("bad", build) is not first and len(built) == 2


def test_scorer_cache_owner_must_be_the_same_object() -> None:
    cache = _ScorerCache()
    owner_a, owner_b = object(), object()
    first = cache.get(1, _Scorer, owner=owner_a)
    assert cache.get(1, _Scorer, owner=owner_a) is first
    assert cache.get(1, _Scorer, owner=owner_b) is not first  # same key, another object


def test_checked_scorer_names_the_bad_argument() -> None:
    assert _checked_scorer(None) is None
    scorer = _Scorer()
    assert _checked_scorer(scorer, "proxy") is scorer
    with pytest.raises(InputError, match="proxy must have a score"):
        _checked_scorer(object(), "proxy")


def test_a_blocking_filter_is_refused_where_the_answer_cannot_be_held_back() -> None:
    from camab_rag.groundedness import GroundednessFilter
    from camab_rag.groundedness.filter import check_groundedness_filter

    flag, block = GroundednessFilter(mode="flag"), GroundednessFilter(mode="block")
    check_groundedness_filter(block)  # an object that can hold the answer back
    check_groundedness_filter(flag, blocking_refused="it only observes")
    check_groundedness_filter(None, blocking_refused="it only observes")
    with pytest.raises(InputError, match=r"mode='block'.*it only observes"):
        check_groundedness_filter(block, blocking_refused="it only observes")
    with pytest.raises(TypeError, match="GroundednessFilter"):
        check_groundedness_filter(0.5)

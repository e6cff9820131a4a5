"""The kernel's runs (camab_rag.integration.Runs): background attributions kept by key as
the one door's Pending handles (a worker thread, or a task of the running loop), waited
for only through Pending.result / aresult; the result store, placeholders filled in
place, the scorer cache and the filter check the integrations share."""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from uuid import uuid4

import pytest

from camab_rag.attributor import Pending
from camab_rag.errors import AttributionCancelledError, AttributionPendingError, InputError
from camab_rag.integration import ResultStore, Runs, fill, pending
from camab_rag.scorers.proxy import ScorerCache, _checked_scorer
from camab_rag.steps import BlockingCall, Steps, drive


def _steps(value: int, calls: list[str]) -> Steps[int]:
    """Two 'model calls' recording the thread they ran in, then ``value``."""
    for _ in range(2):
        yield BlockingCall(lambda: calls.append(threading.current_thread().name))
    return value


async def flush(runs: Runs[Any]) -> None:
    """Await every handle (what an integration's ``aflush`` does)."""
    while jobs := [job for job in list(runs.pending.values()) if not job.done()]:
        await asyncio.gather(*(job.aresult() for job in jobs), return_exceptions=True)


class _Await:
    """A call that waits for an event (async only)."""

    def __init__(self, event: asyncio.Event) -> None:
        self.event = event

    def run(self) -> None:
        raise AssertionError("async only")

    async def arun(self) -> None:
        await self.event.wait()


def test_start_runs_the_steps_in_the_worker_thread_and_its_handle_gives_the_result() -> None:
    runs: Runs[int] = Runs()
    calls: list[str] = []
    handle = runs.start("a", _steps(1, calls))
    runs.start("b", _steps(2, calls))
    assert isinstance(handle, Pending) and runs.job("a") is handle
    assert runs.job("a").result(timeout=10) == 1
    assert runs.job().result(timeout=10) == 2  # the latest started
    runs.worker.close()
    assert len(calls) == 4
    assert all(name.startswith("camab") for name in calls)


def test_a_task_is_awaited_through_its_handle() -> None:
    async def main() -> tuple[Any, Any, bool]:
        runs: Runs[int] = Runs()
        runs.start("a", _steps(5, []), in_loop=True)
        runs.start("b", _steps(6, []), in_loop=True)
        await flush(runs)
        done = all(job.done() for job in runs.pending.values())
        return await runs.job("a").aresult(), await runs.job().aresult(), done

    assert asyncio.run(main()) == (5, 6, True)


def test_a_task_still_running_is_pending_and_an_unknown_key_is_an_input_error() -> None:
    runs: Runs[int] = Runs()
    with pytest.raises(InputError, match="nothing was attributed yet"):
        runs.job()

    async def main() -> None:
        runs.start("t", _steps(1, []), in_loop=True)
        with pytest.raises(AttributionPendingError, match=r"await h\.aresult\(\)"):
            runs.job("t").result()
        await flush(runs)
        assert runs.job("t").result() == 1  # done: read without waiting

    asyncio.run(main())
    with pytest.raises(InputError, match="no attribution under 'missing'"):
        runs.job("missing")


def test_finished_jobs_past_keep_are_forgotten_oldest_first() -> None:
    runs: Runs[int] = Runs(keep=2)
    for key in range(4):
        runs.start(key, _steps(key, []))
        runs.job(key).result(timeout=10)
    assert list(runs.pending) == [2, 3]
    runs.worker.close()


def test_a_reused_key_keeps_the_running_job_awaited() -> None:
    async def main() -> tuple[list[int], Any]:
        gate = asyncio.Event()
        done: list[int] = []

        def slow(value: int) -> Steps[int]:
            yield _Await(gate)
            done.append(value)
            return value

        runs: Runs[int] = Runs()
        runs.start("same", slow(1), in_loop=True)
        runs.start("same", slow(2), in_loop=True)  # e.g. two queries without a span id
        assert len(runs.pending) == 2
        gate.set()
        await flush(runs)
        return sorted(done), await runs.job("same").aresult()

    assert asyncio.run(main()) == ([1, 2], 2)


def test_cancelling_a_flush_or_an_await_leaves_the_attributions_running() -> None:
    async def main() -> Any:
        gate = asyncio.Event()

        def slow() -> Steps[int]:
            yield _Await(gate)
            return 7

        runs: Runs[int] = Runs()
        handle = runs.start("a", slow(), in_loop=True)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(flush(runs), 0.05)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(handle.aresult(), 0.05)
        assert not handle.done()
        gate.set()
        return await handle.aresult()

    assert asyncio.run(main()) == 7


def test_a_dropped_job_is_answered_from_the_stored_results() -> None:
    runs: Runs[int] = Runs(keep=2)
    runs.record(0, drive(_steps(10, [])))
    for key in (1, 2, 3):  # each job's result, not kept as a result: only its handle
        runs.start(key, _steps(key, []))
        runs.job(key).result(timeout=10)
    runs.worker.close()
    assert list(runs.pending) == [2, 3]
    assert runs.job(0).result() == 10  # a result kept, its job never started
    assert asyncio.run(runs.job(0).aresult()) == 10
    with pytest.raises(InputError, match="no attribution under 1"):
        runs.job(1)  # neither its job nor a result is kept


def test_a_failing_job_raises_its_error_from_its_handle() -> None:
    def failing() -> Steps[int]:
        yield BlockingCall(lambda: 1 / 0)
        return 0

    runs: Runs[int] = Runs()
    runs.start("x", failing())
    with pytest.raises(ZeroDivisionError):
        runs.job("x").result(timeout=10)
    runs.worker.close()


def test_a_task_whose_loop_ends_first_marks_its_placeholders_cancelled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The loop ends before the task ran: the placeholders read "cancelled" (never
    "pending" for ever), the handle raises the one typed cancellation error."""
    slot = pending("run-9")

    def never() -> Steps[int]:
        yield _Await(asyncio.Event())  # never set
        return 1

    async def main() -> Pending[int]:
        runs: Runs[int] = Runs()
        return runs.start("run-9", never(), [slot, None], in_loop=True)

    handle = asyncio.run(main())
    assert slot["status"] == "cancelled" and "await_result()" in slot["error"]
    assert "was cancelled" in caplog.text
    with pytest.raises(AttributionCancelledError, match="event loop"):
        handle.result()


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
    cache = ScorerCache()
    built: list[int] = []

    def build() -> _Scorer:
        built.append(1)
        return _Scorer()

    first = cache.get(build=build, key="k")
    assert cache.get(build=build, key="k") is first and len(built) == 1

    def broken() -> _Scorer:
        raise InputError("no server")

    for _ in range(2):
        with pytest.raises(InputError, match="no server"):
            cache.get(build=broken, key="bad")
    assert cache.get(build=build, key="bad") is not first and len(built) == 2


def test_scorer_cache_owner_must_be_the_same_object() -> None:
    cache = ScorerCache()
    owner_a, owner_b = object(), object()
    first = cache.get(owner_a, _Scorer)
    assert cache.get(owner_a, _Scorer) is first and cache.get(owner_b, _Scorer) is not first
    cache._built[id(owner_b)] = cache._built[id(owner_a)]  # an id reused by another model
    assert cache.get(owner_b, _Scorer) is not first


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

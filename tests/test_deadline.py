"""A deadline's clock (camab_rag.deadline): a paused clock does not run, so work awaited
under it keeps waiting; past its end the work is cancelled; steps bounded inside a running
deadline that ends first run on its clock (a batch audit pauses one clock per record)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from camab_rag import deadline
from camab_rag.errors import DeadlineExceededError
from camab_rag.steps import BlockingCall, Steps, adrive, drive


def test_a_paused_clock_stands_still_and_pauses_nest() -> None:
    clock = deadline.Clock(60.0)
    clock.pause()
    clock.pause()
    frozen = clock.left()
    clock.resume()
    assert clock.paused and clock.left() == frozen  # one pause still holds it
    clock.resume()
    assert not clock.paused and clock.left() <= frozen
    clock.resume()  # not paused: nothing to do
    assert not clock.paused


async def test_a_paused_clock_keeps_the_work_waiting_past_its_end() -> None:
    """The work outlasts the clock's 0.05 s, but the clock is paused all along (as while a
    record waits behind another's model call): the work is waited for, not cut."""
    with deadline.started(0.05) as clock:
        assert clock is not None and deadline.current() is clock
        clock.pause()

        async def work() -> str:
            await asyncio.sleep(0.2)
            clock.resume()  # the record's own work again
            return "done"

        assert await deadline.within(work(), "the model") == "done"
    assert deadline.current() is None


async def test_past_the_end_the_work_is_cancelled_and_named() -> None:
    cancelled: list[bool] = []

    async def stuck() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    expected = r"0\.05 s.*waiting for: the model"
    with deadline.started(0.05), pytest.raises(DeadlineExceededError, match=expected):
        await deadline.within(stuck(), "the model")
    assert cancelled == [True]
    assert await deadline.within(asyncio.sleep(0, "no deadline")) == "no deadline"


def _clock_of_a_call() -> Steps[Any]:
    return (yield BlockingCall(deadline.current))


async def test_bounded_steps_run_on_a_running_deadline_that_ends_first() -> None:
    """One clock per record: the attribution's own deadline_s (as long as the record's)
    joins the record's clock, so pausing the record pauses the attribution too."""
    with deadline.started(60.0) as record:
        assert drive(deadline.bounded(_clock_of_a_call(), 60.0)) is record
        assert await adrive(deadline.bounded(_clock_of_a_call(), 60.0)) is record
        nearer = drive(deadline.bounded(_clock_of_a_call(), 1.0))
        assert nearer is not record and nearer.seconds == 1.0
    alone = drive(deadline.bounded(_clock_of_a_call(), 60.0))  # a chain's: its own clock
    assert alone is not record and alone.seconds == 60.0
    assert drive(deadline.bounded(_clock_of_a_call(), None)) is None


async def test_work_cancelled_on_its_own_is_no_deadline() -> None:
    async def gives_up() -> None:
        raise asyncio.CancelledError

    with deadline.started(60.0), pytest.raises(asyncio.CancelledError):
        await deadline.within(gives_up())

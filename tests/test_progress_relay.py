"""One attribution's progress relayed to the user's hook and to a framework's event
(camab_rag.integration.progress_relay through camab_rag.integration): sync events at
once, async ones as tasks that drain() awaits, a failed event logged and never raised."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from camab_rag.integration import ProgressRelay


def test_the_hook_and_a_sync_event_get_every_report() -> None:
    hooked: list[tuple[int, int]] = []
    sent: list[dict[str, Any]] = []
    relay = ProgressRelay(lambda calls, total: hooked.append((calls, total)), sent.append, "r")
    relay(2, 8)
    relay(8, 8)
    assert hooked == [(2, 8), (8, 8)]
    assert sent == [
        {"run_id": "r", "calls": 2, "total": 8},
        {"run_id": "r", "calls": 8, "total": 8},
    ]
    ProgressRelay(None, None, None)(1, 1)  # nothing to relay to: nothing happens


def test_async_events_are_drained_and_a_failure_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    delivered: list[int] = []

    async def emit(data: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        if data["calls"] == 2:
            raise RuntimeError("the event bus is down")
        delivered.append(data["calls"])

    async def attribution() -> None:
        relay = ProgressRelay(None, emit, "r")
        for calls in (1, 2, 3):
            relay(calls, 3)
        assert delivered == []  # sent as tasks, not yet run
        await relay.drain()

    with caplog.at_level(logging.WARNING, logger="camab_rag.integration.progress_relay"):
        asyncio.run(attribution())
    assert delivered == [1, 3]
    assert "the event bus is down" in caplog.text

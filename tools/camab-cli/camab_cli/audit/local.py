"""The single-machine engine: many records in flight on one asyncio event loop.

For a server-backed scorer every scorer call goes through one shared
:class:`~camab_cli.audit.gate.RateGate` (bounded concurrency, shared backoff); for an
in-process model the calls of all records in flight are merged into batched model calls
by a :class:`~camab_cli.audit.batching.MicroBatcher` (one model call at a time).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any

from camab_cli.audit.batching import MicroBatcher
from camab_cli.audit.config import AuditConfig
from camab_cli.audit.gate import GatedScorer, RateGate
from camab_cli.audit.lines import audit_record, failed_line
from camab_cli.records import Record
from camab_rag.scorers.base import Scorer

LineSink = Callable[[dict[str, Any]], None]


def wrap_scorer(
    scorer: Scorer, *, remote: bool, concurrency: int, max_batch: int = 16
) -> GatedScorer | MicroBatcher:
    """The scorer as the audit uses it: gated (server) or micro-batched (in-process)."""
    if remote:
        return GatedScorer(scorer, RateGate(limit=max(concurrency, 1)))
    return MicroBatcher(scorer, max_batch=max_batch)


def wrapper_stats(wrapped: GatedScorer | MicroBatcher) -> dict[str, Any]:
    if isinstance(wrapped, GatedScorer):
        return {"gate": asdict(wrapped.gate.stats)}
    return {
        "batching": {
            "model_calls": wrapped.batches,
            "requests": wrapped.requests,
            "mean_batch": wrapped.mean_batch,
        }
    }


async def audit_records(
    records: Iterable[Record],
    scorer: Any,
    config: AuditConfig,
    sink: LineSink,
    *,
    concurrency: int = 4,
    stop_on: tuple[type[Exception], ...] = (),
) -> int:
    """Audit ``records`` with up to ``concurrency`` in flight; ``sink`` gets each line as
    its record finishes. Returns the number of lines produced. A record whose
    attribution fails gets a ``status: error`` line, except an error of ``stop_on``
    (:data:`camab_cli.flags.FATAL`, the same for every record): it is raised, once,
    and the records in flight are dropped (a re-run audits them)."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    in_flight: dict[asyncio.Task[dict[str, Any]], Record] = {}
    produced = 0

    async def settle(tasks: set[asyncio.Task[dict[str, Any]]]) -> None:
        nonlocal produced
        for task in tasks:
            record = in_flight.pop(task)
            try:
                line = task.result()
            except stop_on:
                for other in in_flight:
                    other.cancel()
                raise
            except Exception as exc:  # audit_record catches all but FATAL
                line = failed_line(record, exc, 0.0, config)
            sink(line)
            produced += 1

    for record in records:
        while len(in_flight) >= concurrency:
            done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            await settle(done)
        in_flight[asyncio.ensure_future(audit_record(record, scorer, config))] = record
    while in_flight:
        done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
        await settle(done)
    return produced

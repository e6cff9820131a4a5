"""The many-machine engine: the same audit on Ray Data (``camab audit --engine ray``).

The driver validates the input and writes the records still to do into small shard files
(``<OUTPUT>.ray-work/part-NNNNN.jsonl``, beside the output so a cluster with a shared file
system sees them); ``ray.data.read_text`` turns them into a dataset (one block per shard),
and ``map_batches`` runs :class:`AuditActor` actors, each holding its own scorer (the
in-process model, or a client to a pool of servers) and auditing its batch with the same
code as the single-machine engine. The result lines stream back to the driver, which
appends them to OUTPUT exactly like the single-machine engine (so resuming, the summary
and the output format are the same, and so are the scores: every record uses the
configured seed).

Needs the optional extra: ``pip install 'camab-rag[ray]'``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from camab_cli.audit.config import AuditConfig
from camab_cli.audit.local import LineSink, audit_records, wrap_scorer
from camab_cli.audit.scorers import ScorerSpec
from camab_cli.records import Record, parse_record
from camab_rag.errors import InputError

READ_CPUS = 0.0


def import_ray() -> Any:
    """``ray`` (with Ray Data), or a clear error naming the extra to install."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise InputError("--engine ray needs Ray Data: pip install 'camab-rag[ray]'") from None
    return ray


class AuditActor:
    """A Ray Data actor: builds its scorer once, then audits batches of records.

    A batch's records run concurrently (``concurrency`` in flight) on the actor's own
    event loop, which lives as long as the actor so the rate gate / micro-batcher state
    carries over from batch to batch.
    """

    def __init__(self, spec: ScorerSpec, config: AuditConfig, concurrency: int) -> None:
        self.config = config
        self.concurrency = concurrency
        self.loop = asyncio.new_event_loop()
        self.scorer = wrap_scorer(spec.build(), remote=spec.remote, concurrency=concurrency)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        records = [_from_work_line(str(text)) for text in batch["text"]]
        lines: list[str] = []
        self.loop.run_until_complete(
            audit_records(
                records,
                self.scorer,
                self.config,
                lambda line: lines.append(json.dumps(line, allow_nan=False)),
                concurrency=self.concurrency,
            )
        )
        return {"line": np.array(lines, dtype=object)}


def _work_line(record: Record) -> str:
    return json.dumps({"line": record.line, "record": record.to_dict()}, ensure_ascii=False)


def _from_work_line(text: str) -> Record:
    data = json.loads(text)
    return parse_record(data["record"], int(data["line"]))


def write_shards(records: Iterable[Record], work_dir: Path, shard_records: int) -> int:
    """Write ``records`` into ``work_dir/part-NNNNN.jsonl`` shards; returns the count."""
    if work_dir.exists():
        shutil.rmtree(work_dir)
    work_dir.mkdir(parents=True)
    count = 0
    handle: TextIO | None = None
    try:
        for record in records:
            if count % shard_records == 0:
                if handle is not None:
                    handle.close()
                handle = (work_dir / f"part-{count // shard_records:05d}.jsonl").open(
                    "w", encoding="utf-8"
                )
            assert handle is not None
            handle.write(_work_line(record) + "\n")
            count += 1
    finally:
        if handle is not None:
            handle.close()
    return count


def shard_size(total: int | None, actors: int, batch_size: int) -> int:
    """Records per shard: about four blocks per actor, whole batches, 1024 at most."""
    if not total:
        return batch_size * 16
    per_block = -(-total // (actors * 4))
    batches = max(1, -(-per_block // batch_size))
    return min(batches * batch_size, max(1024, batch_size))


def run_ray(
    records: Iterable[Record],
    spec: ScorerSpec,
    config: AuditConfig,
    sink: LineSink,
    *,
    work_dir: Path,
    actors: int = 2,
    concurrency: int = 1,
    batch_size: int = 4,
    cpus_per_actor: float | None = None,
    address: str | None = None,
    total_hint: int | None = None,
) -> int:
    """Audit ``records`` on Ray Data; ``sink`` gets each result line on the driver.

    Args:
        actors: scorer-holding actors (each builds one scorer).
        concurrency: records in flight inside one actor (useful with servers).
        batch_size: records per ``map_batches`` batch (also records per shard file).
        cpus_per_actor: Ray CPUs reserved per actor (default 1 for the in-process model,
            0.25 for server clients, which mostly wait).
        address: an existing Ray cluster's address (default: ``RAY_ADDRESS`` or a new
            local instance); ignored when Ray is already initialised.
        total_hint: about how many records there are (sizes the shards so every actor
            gets several blocks).
    """
    ray = import_ray()
    if actors < 1 or batch_size < 1 or concurrency < 1:
        raise InputError("actors, batch_size and concurrency must be at least 1")
    count = write_shards(records, work_dir, shard_size(total_hint, actors, batch_size))
    if count == 0:
        shutil.rmtree(work_dir, ignore_errors=True)
        return 0
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    cpus = cpus_per_actor if cpus_per_actor is not None else (0.25 if spec.remote else 1.0)
    shards = sorted(str(p) for p in work_dir.glob("part-*.jsonl"))
    # one block per shard, so every actor gets work even when there are few records
    # reading a shard is trivial and reserves no CPU, so the read never waits for CPUs the
    # actors hold (with actors taking every CPU, a read task that needs one would deadlock)
    dataset = ray.data.read_text(
        shards, override_num_blocks=len(shards), num_cpus=READ_CPUS
    ).map_batches(
        AuditActor,
        fn_constructor_kwargs={"spec": spec, "config": config, "concurrency": concurrency},
        batch_size=batch_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=actors),
        num_cpus=cpus,
    )
    produced = 0
    for row in dataset.iter_rows():
        sink(json.loads(row["line"]))
        produced += 1
    shutil.rmtree(work_dir, ignore_errors=True)
    return produced

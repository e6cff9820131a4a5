"""Run an audit end to end: read, skip what is done, attribute, write, summarise."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, TextIO

from camab_cli.audit.config import AuditConfig
from camab_cli.audit.lines import bad_input_line, unwritable_line
from camab_cli.audit.local import audit_records, wrap_scorer, wrapper_stats
from camab_cli.audit.outputs import OutputFile
from camab_cli.audit.scorers import ScorerSpec
from camab_cli.audit.summary import RunStats, summarize
from camab_cli.flags import FATAL, in_flags
from camab_cli.progress import Progress
from camab_cli.records import (
    Record,
    RecordError,
    ascii_safe,
    is_parquet,
    raw_lines,
    read_records,
)
from camab_rag.errors import InputError

Engine = Literal["local", "ray"]


def count_rows(path: str | Path) -> int:
    """Non-blank lines (JSONL) or rows (Parquet) of the input, for the progress bar."""
    if is_parquet(path):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            return 0
        return int(pq.ParquetFile(path).metadata.num_rows)
    with Path(path).open("rb") as handle:  # a huge line is counted, not held in memory
        return sum(1 for _, raw in raw_lines(handle) if isinstance(raw, int) or raw.strip())


def pending_records(
    rows: Iterable[tuple[int, Record | RecordError]],
    done: dict[str, str],
    stats: RunStats,
    *,
    retry_errors: bool = False,
    on_bad: Callable[[RecordError], None] | None = None,
    bad_done: set[tuple[int, str | None]] | None = None,
) -> Iterator[Record]:
    """The valid records not yet in the output. A bad line goes to ``stats`` and
    ``on_bad`` (which writes its error line) unless its ``(line, id)`` is in ``bad_done``
    (its error line is already in the output: never written twice)."""
    for _, item in rows:
        if isinstance(item, RecordError):
            if bad_done is not None and (item.line, item.id) in bad_done:
                continue  # in the summary's bad_input_lines, not skipped_already_done
            stats.bad_records.append(item)
            if on_bad is not None:
                on_bad(item)
            continue
        status = done.get(item.id)
        if status is not None and not (retry_errors and status != "ok"):
            stats.skipped_done += 1
            continue
        yield item


class InputOrder:
    """Output lines in input order: each line awaited is registered (:meth:`expect`) as it
    is read; a finished line (:meth:`put`) waits in memory until every line before it is
    written, then goes to ``write``.

    Why: records finish in any order (many in flight, a slow one among them) and a bad
    line is known as soon as it is read, so OUTPUT held bad lines first and results
    shuffled; a reader comparing it with INPUT expects the same order. How: lines are keyed
    by their input line number (``line``), unique in a run; :meth:`drain` writes what is
    done when a run stops early: on Ctrl-C in order past the lines still missing, so no
    finished record is lost (a re-run appends the missing ones); after an error that
    stops the run (``past_gaps=False``) only what follows the lines written, so a re-run
    continues the output in input order."""

    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self.write = write
        self.expected: deque[int] = deque()
        self.ready: dict[int, dict[str, Any]] = {}

    def expect(self, number: int) -> None:
        self.expected.append(number)

    def put(self, line: dict[str, Any]) -> None:
        self.ready[int(line["line"])] = line
        while self.expected and self.expected[0] in self.ready:
            self.write(self.ready.pop(self.expected.popleft()))

    def drain(self, *, past_gaps: bool = True) -> None:
        if past_gaps:
            for number in self.expected:
                if number in self.ready:
                    self.write(self.ready.pop(number))
            for line in self.ready.values():  # not registered (never expected): kept anyway
                self.write(line)
        self.expected.clear()
        self.ready.clear()


def in_order(records: Iterable[Record], order: InputOrder) -> Iterator[Record]:
    """``records``, each registered with ``order`` as it is handed on."""
    for record in records:
        order.expect(record.line)
        yield record


def _write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="ascii")  # \u escapes
    os.replace(tmp, path)


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def check_paths(input_path: Path, output_path: Path, summary_file: Path) -> None:
    """Refuse, before anything is written: an output or a summary that is the input, a
    summary that is the output, a summary whose directory is missing or not writable, and a
    summary file camab did not write."""
    if not input_path.is_file():
        raise InputError(f"{input_path}: no such input file")
    if _same_file(input_path, output_path):
        raise InputError(f"{output_path} is the input file: refusing to write to it")
    if _same_file(summary_file, input_path):
        raise InputError(f"--summary {summary_file} is the input file: refusing to write to it")
    if _same_file(summary_file, output_path):
        raise InputError(
            f"--summary {summary_file} is the --out file: the summary would replace the "
            "results (choose another --summary)"
        )
    if summary_file.is_dir():
        raise InputError(f"--summary {summary_file} is a directory")
    parent = summary_file.parent
    if parent != output_path.parent:  # OUTPUT's own directory is created with it
        if not parent.is_dir():
            raise InputError(f"--summary {summary_file}: the directory {parent} does not exist")
        if not os.access(parent, os.W_OK):
            raise InputError(f"--summary {summary_file}: the directory {parent} is not writable")
    if summary_file.exists() and not _is_audit_summary(summary_file):
        raise InputError(
            f"{summary_file} already exists and is not an audit summary: refusing to replace a "
            "file camab did not write (move it, or pass --summary PATH)"
        )


def _is_audit_summary(path: Path) -> bool:
    """Whether ``path`` holds a summary an earlier audit wrote (one that may be replaced)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and {"output", "engine", "records"} <= data.keys()


def summary_path_for(output: str | Path) -> Path:
    """Default summary file: ``OUTPUT`` with ``.summary.json`` appended."""
    out = Path(output)
    return out.with_name(out.name + ".summary.json")


def audit(
    input_path: str | Path,
    output_path: str | Path,
    *,
    scorer: Any = None,
    spec: ScorerSpec | None = None,
    config: AuditConfig | None = None,
    engine: Engine = "local",
    concurrency: int | None = None,
    max_batch: int = 16,
    retry_errors: bool = False,
    summary_path: str | Path | None = None,
    progress: bool = True,
    stream: TextIO | None = None,
    ray_actors: int = 2,
    ray_batch_size: int = 4,
    ray_cpus_per_actor: float | None = None,
    ray_address: str | None = None,
    fsync: bool = True,
) -> dict[str, Any]:
    """Audit every record of ``input_path`` into ``output_path``; returns the summary.

    Records whose id is already in the output are skipped (``retry_errors`` redoes those
    whose last line is an error); a bad input line is reported (``stream``) and gets an
    error line (``"bad_input": true``, written once: a re-run skips it); a record whose
    attribution fails, or whose line cannot be written, gets a ``status: error`` line, so
    the output accounts for every non-blank input line. Lines are written (and synced) in
    input order, each as soon as it and the lines before it are done (:class:`InputOrder`;
    a re-run appends the lines it adds, then, unless interrupted, puts the file back in
    input order with one line per input line: a fixed bad line's record, or a retried
    record, replaces its old line, :meth:`OutputFile.reorder`). The summary is also written to
    ``summary_path`` (default ``OUTPUT.summary.json``), on Ctrl-C too (``"interrupted":
    true``; the ``KeyboardInterrupt`` is raised again after), and when an error that holds
    for every record (:data:`camab_cli.flags.FATAL`: a model the server does not serve, a
    refused key) stops the run at its first occurrence (``"stopped"``: why; the error is
    raised again after).

    Args:
        scorer: a ready scorer (local engine only), or
        spec: how to build it (required for ``engine="ray"``: each actor builds one).
        concurrency: records in flight (local engine; per actor on Ray). Default: 16
            with a server, 4 with an in-process model (its calls are micro-batched).
        max_batch: most requests per in-process model call.
    """
    config = config or AuditConfig()
    stream = stream if stream is not None else sys.stderr
    if scorer is None and spec is None:
        raise InputError("audit needs a scorer or a ScorerSpec")
    if engine not in ("local", "ray"):
        raise InputError(f"engine must be 'local' or 'ray', got {engine!r}")
    if engine == "ray" and spec is None:
        raise InputError("the ray engine needs a ScorerSpec: each actor builds its own scorer")
    remote = spec.remote if spec is not None else hasattr(scorer, "base_url")
    in_flight = concurrency if concurrency is not None else (16 if remote else 4)
    if in_flight < 1:
        raise InputError(f"concurrency must be at least 1, got {in_flight}")
    summary_file = Path(summary_path or summary_path_for(output_path))
    check_paths(Path(input_path), Path(output_path), summary_file)  # before any output
    rows = read_records(input_path)
    started = time.perf_counter()
    stats = RunStats(engine=engine)
    output = OutputFile.open(output_path, fsync=fsync)
    stats.torn_bytes = output.recovery.torn_bytes
    done = output.recovery.done
    total = max(count_rows(input_path) - len(done) - len(output.recovery.bad), 0)
    bar = Progress(total, label="audit", stream=stream, enabled=progress)

    def write(line: dict[str, Any]) -> None:
        try:
            output.write(line)
        except (ValueError, TypeError) as exc:  # a surrogate, a non-finite number: an error
            output.write(unwritable_line(line, exc))

    order = InputOrder(write)

    def on_bad(error: RecordError) -> None:
        stream.write(f"audit: bad input {error}\n")
        order.expect(error.line)
        order.put(bad_input_line(error))  # ASCII only: writing it cannot fail on the text
        bar.update(error=True)

    def sink(line: dict[str, Any]) -> None:
        order.put(line)
        stats.audited += 1
        bar.update(error=line.get("status") != "ok")

    records: Iterator[Record] = in_order(
        pending_records(
            rows,
            done,
            stats,
            retry_errors=retry_errors,
            on_bad=on_bad,
            bad_done=output.recovery.bad,
        ),
        order,
    )
    interrupted = False
    stopped: Exception | None = None
    ended = False  # the run ended (or stopped once, on a FATAL error): reorder the output
    try:
        first = next(records, None)  # nothing left to do: do not load a model or start Ray
        records = itertools.chain([first], records) if first is not None else iter(())
        if first is None:
            pass
        elif engine == "local":
            built = scorer if scorer is not None else spec.build()  # type: ignore[union-attr]
            wrapped = wrap_scorer(built, remote=remote, concurrency=in_flight, max_batch=max_batch)
            asyncio.run(
                audit_records(records, wrapped, config, sink, concurrency=in_flight, stop_on=FATAL)
            )
            extra = wrapper_stats(wrapped)
            stats.gate = extra.get("gate")
            stats.batching = extra.get("batching")
        else:
            from camab_cli.audit.ray_engine import run_ray

            assert spec is not None
            run_ray(
                records,
                spec,
                config,
                sink,
                work_dir=Path(str(output_path) + ".ray-work"),
                actors=ray_actors,
                concurrency=concurrency if concurrency is not None else (4 if remote else 1),
                batch_size=ray_batch_size,
                cpus_per_actor=ray_cpus_per_actor,
                address=ray_address,
                total_hint=total,
            )
        ended = True
    except KeyboardInterrupt:  # Ctrl-C: the lines written stay; say so in the summary
        interrupted = True
    except FATAL as error:  # the same for every record (--model-name, the key): stop once
        stopped = error
        ended = True
    finally:
        try:
            order.drain(past_gaps=stopped is None)  # what is done, in order
            if ended:
                output.reorder()  # a re-run's lines in input order, one per input line
        finally:
            output.close()
            bar.close()
    stats.pending = stats.audited
    stats.wall_time_s = time.perf_counter() - started
    summary = summarize(output_path, stats)
    summary["input"] = str(input_path)
    summary["config"] = config.to_dict()
    summary["interrupted"] = interrupted
    if stopped is not None:
        key_variable = spec.api_key_env if spec is not None else None
        summary["stopped"] = ascii_safe(in_flags(str(stopped), key_variable))
    _write_json_atomically(summary_file, summary)
    if interrupted:
        raise KeyboardInterrupt
    if stopped is not None:
        raise stopped
    return summary

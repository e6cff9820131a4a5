"""Fold the finished records of a shard run into a run's results file.

One benchmark process works through its examples one at a time, and the scorer is
compute-bound, so on a machine with more cores than one run uses, a long run finishes
sooner as shards: the same command, with ``--offset``/``--n`` choosing a disjoint range of
its examples and ``--out`` a folder of the shard's own (its own results and checkpoint
files, so two processes never write one file). Once the shards stop,
:func:`merge_results` appends a shard's records to the main results file, after checking
that every record was run with the main run's settings and is one of its examples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.data import load_examples
from benchmarks.evaluation.runner import (
    BenchConfig,
    append_record,
    done_ids,
    read_results,
    run_settings,
)
from camab_rag.errors import InputError


def _differing(expected: dict[str, Any], found: dict[str, Any]) -> list[str]:
    return sorted(k for k in expected.keys() | found.keys() if expected.get(k) != found.get(k))


def merge_results(config: BenchConfig, source: Path) -> tuple[int, int]:
    """Append the records of ``source`` (a shard's results file) that ``config``'s results
    file lacks; returns (records added, records already there). Nothing is written unless
    every record passes the checks. Stop the processes writing either file first.

    Raises:
        InputError: ``source`` is missing, empty, the main run's own file, or holds a
            record run with other settings or of an example outside the main run's.
    """
    target = config.results_path
    if not source.is_file():
        raise InputError(f"{source}: no such results file")
    if target.exists() and source.resolve() == target.resolve():
        raise InputError(f"{source} is this run's own results file; name the shard's")
    records = read_results(source)
    if not records:
        raise InputError(f"{source}: no finished record to merge")
    expected = run_settings(config)
    wanted = {e.id for e in load_examples(config.dataset, config.n, offset=config.offset)}
    for number, record in enumerate(records, 1):
        where = f"{source}: record {number} ({record.get('id')!r})"
        found = record.get("config")
        if not isinstance(found, dict) or found != expected:
            names = _differing(expected, found if isinstance(found, dict) else {})
            raise InputError(
                f"{where} was run with other settings than this run ({', '.join(names)}); "
                "merge with the arguments the shard was run with, less --offset, --n and --out"
            )
        if str(record.get("id")) not in wanted:
            raise InputError(
                f"{where} is not one of this run's {len(wanted)} examples of {config.dataset} "
                f"(offset {config.offset}); pass the whole run's --n"
            )
    present = done_ids(target)
    added = 0
    for record in records:
        if str(record["id"]) in present:
            continue
        append_record(target, record)
        present.add(str(record["id"]))
        added += 1
    return added, len(records) - added

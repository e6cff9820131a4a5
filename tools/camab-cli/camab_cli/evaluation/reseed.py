"""Re-run the random baseline of finished records with a per-example seed.

Runs before the fix seeded "random" with the run's seed on every example, so its
scores were one fixed vector: a ranking by position, not chance (on TyDi QA, where
the gold sentence is usually the first, it looked like the best method). This
rewrites those records' ``random`` entry as the runner now writes it (scores from
:func:`~camab_cli.evaluation.runner.example_seed`, gold alignment, log-prob drops and
BERTScore for the new top-k sets) and leaves every other method untouched.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from camab_cli.evaluation.counting import CountingScorer
from camab_cli.evaluation.datasets import load_examples
from camab_cli.evaluation.runner import BenchConfig, ExampleRunner, make_builder, read_results


def needs_reseed(record: dict[str, Any]) -> bool:
    """A finished record whose random entry predates per-example seeds."""
    entry = record.get("methods", {}).get("random")
    return record.get("status") == "ok" and entry is not None and "seed" not in entry


def reseed_random(
    config: BenchConfig,
    scorer: Any,
    *,
    bert: Any | None = None,
    log: Callable[[str], None] = lambda _s: None,
) -> int:
    """Recompute the random entries of ``config.results_path`` that need it; returns how
    many records were rewritten. The file is replaced atomically, so run this while no
    benchmark is appending to it.

    Raises:
        ValueError: a record's example is not in the dataset, or its segments differ.
    """
    path = config.results_path
    records = read_results(path)
    stale = [r for r in records if needs_reseed(r)]
    if not stale:
        return 0
    examples = {e.id: e for e in load_examples(config.dataset)}
    counting = scorer if isinstance(scorer, CountingScorer) else CountingScorer(scorer)
    for record in stale:
        example = examples.get(str(record["id"]))
        if example is None:
            raise ValueError(f"{path}: example {record['id']!r} is not in {config.dataset}")
        # LDS on the held-out subsets the record was read on (none in a record from
        # before LDS: then none for the random entry either)
        lds_subsets = record["config"].get("lds_subsets", 0) if "held_out" in record else 0
        settings = {**record["config"], "out_dir": config.out_dir, "lds_subsets": lds_subsets}
        run_config = BenchConfig(**settings)
        if run_config.max_segments is not None:
            example = example.trimmed(run_config.max_segments)
        builder = make_builder(example)
        if builder.n_segments != record["n_segments"]:
            raise ValueError(
                f"{path}: example {record['id']!r} has {builder.n_segments} segments now, "
                f"{record['n_segments']} when it was run"
            )
        runner = ExampleRunner(run_config, counting, bert)
        entry = runner.library_entry(example, builder, record["response"], "random")
        entry["model_seconds"] = 0.0
        saved = {"lds": {"held_out": record["held_out"]}} if lds_subsets else {}
        runner.metrics(
            example, builder, record["response"], record["full_logprob"], {"random": entry}, saved
        )
        record["methods"]["random"] = entry
        log(f"reseed: {record['id']} random re-run with seed {entry['seed']}")
    partial = path.with_suffix(".reseed.tmp")
    with open(partial, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    os.replace(partial, path)
    return len(stale)

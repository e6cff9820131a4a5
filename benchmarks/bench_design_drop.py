"""Design or estimator, for the log-prob drop: swap the estimators of CAMAB and the
ContextCite-style fit on each other's stored queries, and score the new top-k with the model.

On CNN/DailyMail CAMAB's top-3 and top-5 drop the response's log-probability less than
the ContextCite-style LASSO's. Two things differ between the methods: the subsets they
query (the design: Thompson sampling against Bernoulli(0.5) ablations) and how they turn
the rewards into scores (the estimator: CAMAB's Gaussian posterior mean against a LASSO on
standardised inclusions). ``bench_design.py`` separated the two for the gold alignment,
which needs no model; the drop does. This script fits both estimators on the first ``s``
stored queries of each design (CAMAB, ContextCite-style, KernelSHAP), removes each fit's
top-k segments, and scores the original response without them, so each of the 2 x 3
cells has a drop measured the way the benchmark measures it.

Scored removal sets are appended to ``benchmarks/results/design_drop/scored_sets.jsonl`` (keyed by
results file, example and removed segments), so the script resumes and re-running it
costs no model time.

    .venv/bin/python benchmarks/bench_design_drop.py --threads 1
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._report import markdown_table, write_section  # noqa: E402
from benchmarks.bench_design import FloatArray, design_of, posterior_fit  # noqa: E402
from benchmarks.data import Example, load_examples  # noqa: E402
from benchmarks.evaluation.metrics import (  # noqa: E402
    kept_segments,
    logprob_drop,
    removal_mask,
    removal_set,
)
from benchmarks.evaluation.report import cell, ok_records  # noqa: E402
from benchmarks.evaluation.runner import (  # noqa: E402
    KS,
    append_record,
    make_builder,
    read_results,
)
from camab_rag.methods.contextcite import ContextCite  # noqa: E402
from camab_rag.rewards import mean_logprob  # noqa: E402
from camab_rag.scorers.base import Scorer, ScoreRequest  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CACHE = RESULTS / "design_drop" / "scored_sets.jsonl"
"""Outside ``results/*.jsonl``, which run_eval.py reads as benchmark runs."""
DESIGNS = ("camab", "contextcite", "kernelshap")
ESTIMATORS = ("posterior", "lasso")
OWN_ESTIMATOR = {"camab": "posterior", "contextcite": "lasso"}
"""The cells whose re-fit is the method's own fit (their drops must equal the reported)."""
Removed = tuple[int, ...]


def fit_scores(estimator: str, masks: FloatArray, rewards: FloatArray, alpha: float) -> FloatArray:
    """One estimator's segment scores from a design's masks and rewards."""
    if estimator == "posterior":
        return posterior_fit(masks, rewards)[0]
    return ContextCite(alpha=alpha).fit(masks.astype(bool), rewards)


def removal_sets(scores: FloatArray) -> dict[int, Removed]:
    """The top-k segments of a fit, per k (sorted tuples, as the benchmark keys them)."""
    return {k: removal_set(scores, k) for k in KS}


def read_cache(path: Path) -> dict[tuple[str, str, Removed], float]:
    """Mean response log-probs already scored: ``(results, example id, removed) -> value``."""
    return {
        (row["results"], row["id"], tuple(row["removed"])): row["logprob"]
        for row in read_results(path)  # a line torn by a kill is skipped
    }


class RemovalScorer:
    """Scores the response of one example without some segments, through the cache file.
    The model is loaded (by ``load``) only when a set is not in the cache yet."""

    def __init__(
        self, load: Callable[[], Scorer], cache: dict[tuple[str, str, Removed], float]
    ) -> None:
        self.load = load
        self.scorer: Scorer | None = None
        self.cache = cache
        self.scored = 0
        CACHE.parent.mkdir(parents=True, exist_ok=True)

    def values(
        self, stem: str, example: Example, response: str, wanted: set[Removed]
    ) -> dict[Removed, float]:
        builder = make_builder(example)
        n = builder.n_segments
        todo = [r for r in wanted if (stem, example.id, r) not in self.cache]
        # neighbours in the order of their kept segments share the longest prompt heads
        todo.sort(key=lambda r: kept_segments(n, r))
        for removed in todo:
            if self.scorer is None:
                self.scorer = self.load()
            request = ScoreRequest(builder.build(removal_mask(n, removed)), response)
            value = mean_logprob(self.scorer.score([request])[0].logprobs)
            self.cache[(stem, example.id, removed)] = value
            self.scored += 1
            row = {"results": stem, "id": example.id, "removed": list(removed)}
            append_record(CACHE, {**row, "logprob": value})
        return {r: self.cache[(stem, example.id, r)] for r in wanted}


def measure(
    stem: str, records: list[dict[str, Any]], budget: int, removals: RemovalScorer
) -> tuple[dict[tuple[str, str], dict[int, list[float]]], float]:
    """Per (design, estimator) cell, per k, one drop per example; and the largest gap between
    a cell that repeats a method's own fit and that method's reported drop."""
    drops: dict[tuple[str, str], dict[int, list[float]]] = {}
    worst = 0.0
    wanted = {r["id"] for r in records}
    loaded = load_examples(records[0]["dataset"], len(records) + 50)
    examples = {e.id: e for e in loaded if e.id in wanted}
    if len(examples) != len(wanted):
        raise SystemExit(f"{stem}: {len(wanted) - len(examples)} example(s) not found")
    for index, record in enumerate(records):
        alpha = float(record["methods"]["contextcite"]["method_config"]["alpha"])
        sets: dict[tuple[str, str], dict[int, Removed]] = {}
        for design in DESIGNS:
            fit = record["methods"].get(design)
            if fit is None or len(fit.get("masks", [])) < 2:
                continue
            masks, rewards = design_of(fit, budget)
            for estimator in ESTIMATORS:
                scores = fit_scores(estimator, masks, rewards, alpha)
                sets[(design, estimator)] = removal_sets(scores)
        wanted_sets = {r for by_k in sets.values() for r in by_k.values()}
        example = examples[record["id"]]
        values = removals.values(stem, example, record["response"], wanted_sets)
        full = float(record["full_logprob"])
        for key, by_k in sets.items():
            cell_drops = drops.setdefault(key, {k: [] for k in KS})
            for k, removed in by_k.items():
                drop = logprob_drop(full, values[removed])
                cell_drops[k].append(drop)
                design, estimator = key
                if OWN_ESTIMATOR.get(design) == estimator:
                    reported = record["methods"][design]["budgets"][str(budget)]["drop"][str(k)]
                    worst = max(worst, abs(drop - float(reported)))
        print(
            f"{stem} {index + 1}/{len(records)} {record['id'][:12]}: "
            f"{removals.scored} sets scored so far",
            flush=True,
        )
    return drops, worst


def paired(a: list[float], b: list[float]) -> list[float]:
    return [x - y for x, y in zip(a, b, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--files",
        nargs="+",
        default=["cnn_dailymail_smollm2", "hotpotqa_smollm2", "hotpotqa_qwen2.5-0.5b"],
        help="results files in benchmarks/results/, by name (with or without .jsonl)",
    )
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--examples", type=int, default=None, help="only the first N")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    from camab_rag.scorers import TransformersScorer

    cache = read_cache(CACHE)
    rows: list[list[object]] = []
    effects: list[list[object]] = []
    checks: list[str] = []
    for name in args.files:
        stem = name.removesuffix(".jsonl")
        path = RESULTS / f"{stem}.jsonl"
        if not path.exists():
            raise SystemExit(f"--files: no results file {path}")
        records = ok_records(read_results(path))[: args.examples]
        if not records:
            raise SystemExit(f"--files: {path} holds no completed example")
        # each results file is scored by its own run's model
        model = str(records[0]["model"])

        def load(model: str = model) -> TransformersScorer:
            return TransformersScorer(
                model, batch_size=1, num_threads=args.threads, prefix_cache=True
            )

        drops, worst = measure(stem, records, args.budget, RemovalScorer(load, cache))
        checks.append(f"{stem}: {worst:.1e}")
        for (design, estimator), by_k in drops.items():
            own = " (its own fit)" if OWN_ESTIMATOR.get(design) == estimator else ""
            rows.append([stem, design, estimator + own, len(by_k[1])] + [cell(by_k[k]) for k in KS])
        for design in DESIGNS:
            if (design, "lasso") in drops and (design, "posterior") in drops:
                lasso, post = drops[(design, "lasso")], drops[(design, "posterior")]
                label = f"estimator: LASSO − posterior, on the {design} design"
                effects.append([stem, label] + [cell(paired(lasso[k], post[k])) for k in KS])
        for estimator in ESTIMATORS:
            if ("contextcite", estimator) in drops and ("camab", estimator) in drops:
                cc, camab = drops[("contextcite", estimator)], drops[("camab", estimator)]
                label = f"design: ContextCite-style − CAMAB, {estimator} estimator"
                effects.append([stem, label] + [cell(paired(cc[k], camab[k])) for k in KS])

    ks = [f"drop@{k}" for k in KS]
    body = (
        f"Both estimators fitted on each design's first s={args.budget} stored queries "
        "(`benchmarks/results/`): 'posterior' is CAMAB's Gaussian posterior mean (prior "
        "mean 0, prior variance 1, noise variance 0.01), 'lasso' the ContextCite-style "
        "LASSO on standardised inclusions (alpha as stored with the run). Each fit's top-k "
        "segments are removed and the original response scored without them "
        "(higher = the fit found segments the response relies on). Mean ± 95% CI over "
        "the examples.\n\n"
        + markdown_table(["results", "design", "estimator", "examples", *ks], rows)
        + "\n\nPaired differences (> 0: the first named is better):\n\n"
        + markdown_table(["results", "contrast", *ks], effects)
        + "\n\nCheck: the cells that repeat a method's own fit reproduce its reported drop; "
        "largest difference (nats/token): " + "; ".join(checks) + "."
    )
    print(body)
    if not args.no_write:
        write_section("design_drop", "Design or estimator? The log-prob drop", body)


if __name__ == "__main__":
    main()

"""``python -m benchmarks eval``: run (or resume) the paper-protocol benchmark and report it.

Every method on a dataset's examples with a real model, one JSONL line per example (a
re-run resumes), then Markdown tables and plots. Was ``camab bench`` before 0.1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.evaluation.runner import ALL_METHODS, BenchConfig
from camab_rag.errors import InputError

SMOKE: dict[str, Any] = {
    "n": 2,
    "budgets": [4, 6],
    "peer_budget": 5,
    "max_segments": 4,
    "max_new_tokens": 8,
    "lds_subsets": 8,
}


def _ints(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one integer")
    return values


def _names(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [x for x in names if x not in ALL_METHODS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(ALL_METHODS)}"
        )
    return names


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dataset",
        default="hotpotqa",
        help="hotpotqa, cnn_dailymail, tydiqa, or the path of a JSONL file in their format",
    )
    parser.add_argument("--n", type=int, default=50, help="number of examples (default 50)")
    parser.add_argument("--offset", type=int, default=0, help="skip this many rows first")
    parser.add_argument(
        "--budgets", type=_ints, default=[20, 40, 60, 100], help="query budgets, e.g. 20,40,60"
    )
    parser.add_argument(
        "--methods",
        type=_names,
        default=list(ALL_METHODS),
        help=f"comma-separated, from {','.join(ALL_METHODS)} (default: all)",
    )
    parser.add_argument(
        "--model", default="smollm2", help="scorer model: smollm2, qwen2.5-0.5b or a local path"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--peer-budget", type=int, default=40, help="budget of the real peers (default 40)"
    )
    parser.add_argument(
        "--bert-budgets", type=_ints, default=[40], help="budgets with BERTScore (default 40)"
    )
    parser.add_argument(
        "--bert-all-budgets",
        type=_names,
        default=[],
        help="methods that get BERTScore at every budget, e.g. camab,kernelshap",
    )
    parser.add_argument("--no-bert", action="store_true", help="skip BERTScore consistency")
    parser.add_argument(
        "--lds-subsets",
        type=int,
        default=32,
        help="held-out subsets of each kind for LDS (Bernoulli ½, removals of 2-5 segments, "
        "1-4 segments kept), "
        "one model call each per example; 0 leaves LDS out (default 32)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=None)
    parser.add_argument("--max-segments", type=int, default=None, help="trim contexts")
    parser.add_argument("--batch-size", type=int, default=8, help="scorer batch size")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's choice)"
    )
    parser.add_argument(
        "--prefix-cache",
        action="store_true",
        help="reuse the computed prefix consecutive requests share (needs --batch-size 1)",
    )
    parser.add_argument(
        "--out", default=None, help="results folder (default benchmarks/results; smoke: a temp dir)"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="2 examples, tiny budgets and contexts (CI)"
    )
    parser.add_argument(
        "--report-only", action="store_true", help="only rebuild the report from the results"
    )
    parser.add_argument(
        "--merge-from",
        type=Path,
        default=None,
        metavar="RESULTS_JSONL",
        help="append the finished records of a shard (the same command run with --offset, "
        "--n and its own --out) to this run's results, checking they were run with the same "
        "settings; stop both runs first, then rebuild the report",
    )


def config_from_args(args: argparse.Namespace) -> BenchConfig:
    """The :class:`BenchConfig` an argument namespace asks for."""
    values: dict[str, Any] = {
        "dataset": args.dataset,
        "n": args.n,
        "offset": args.offset,
        "budgets": args.budgets,
        "methods": args.methods,
        "model": args.model,
        "seed": args.seed,
        "peer_budget": args.peer_budget,
        "bert_budgets": args.bert_budgets,
        "bert_all_budgets": args.bert_all_budgets,
        "max_new_tokens": args.max_new_tokens,
        "max_segments": args.max_segments,
        "batch_size": args.batch_size,
        "threads": args.threads,
        "prefix_cache": args.prefix_cache,
        "lds_subsets": args.lds_subsets,
    }
    if args.smoke:
        values.update(SMOKE)
        values["bert_budgets"] = [SMOKE["budgets"][-1]]
    out = args.out
    if out is None:
        out = tempfile.mkdtemp(prefix="camab-bench-smoke-") if args.smoke else "benchmarks/results"
    values["out_dir"] = out
    return BenchConfig(**values)


def run_bench(args: argparse.Namespace) -> int:
    """Run the ``bench`` subcommand; returns the exit code."""
    # On shared cores, spinning OpenMP workers burn the time other processes need.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from benchmarks.evaluation.report import write_report
    from benchmarks.evaluation.runner import run_benchmark

    try:
        config = config_from_args(args)
    except ValueError as error:
        print(f"eval: {error}", file=sys.stderr)
        return 2
    if args.merge_from is not None:
        from benchmarks.evaluation.merge import merge_results

        try:
            added, present = merge_results(config, args.merge_from)
        except InputError as error:
            print(f"eval: {error}", file=sys.stderr)
            return 2
        print(
            f"eval: merged {added} record(s) from {args.merge_from} ({present} already present)",
            file=sys.stderr,
        )
    elif not args.report_only:
        try:
            run_benchmark(config, use_bert=not args.no_bert)
        except InputError as error:
            print(f"eval: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("eval: interrupted; re-run the same command to resume", file=sys.stderr)
            return 130
    path = config.results_path
    if not path.exists():
        print(f"eval: no results at {path}", file=sys.stderr)
        return 1
    markdown = write_report(path, Path(config.out_dir))
    print(markdown)
    print(f"eval: results {path}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks eval")
    add_bench_arguments(parser)
    return run_bench(parser.parse_args(argv))

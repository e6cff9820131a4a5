"""``python -m benchmarks eval`` runs (or resumes) the paper protocol on a data set and
reports it; ``python -m benchmarks eval-report`` publishes every stored run
(``eval-report PREFIX``: the results files whose name starts with it)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._report import write_section
from benchmarks.evaluation.runner import ALL_METHODS, BenchConfig, read_results
from camab_rag.errors import InputError

SMOKE: dict[str, Any] = {
    "n": 2,
    "budgets": [4, 6],
    "bert_budgets": [6],
    "peer_budget": 5,
    "max_segments": 4,
    "max_new_tokens": 8,
    "lds_subsets": 8,
}
RESULTS = Path(__file__).resolve().parents[1] / "results"
TARGETS = {"hotpotqa_smollm2": 50, "hotpotqa_qwen2.5-0.5b": 20}
"""Examples each published run must reach (issue 6); 30 for the others."""
PROTOCOL: dict[str, Any] = {
    "budgets": [20, 40, 60, 100],
    "peer_budget": 40,
    "bert_budgets": [40],
    "bert_all_budgets": ["camab", "kernelshap"],
}
"""The published runs' protocol (until a run has a finished example to read it from)."""


def _ints(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers: {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one integer")
    return values


def _names(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    if unknown := [x for x in names if x not in ALL_METHODS]:
        raise argparse.ArgumentTypeError(
            f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(ALL_METHODS)}"
        )
    return names


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``eval`` flags; each names a :class:`BenchConfig` field (defaults are its own)."""
    add = parser.add_argument
    add("--dataset", default="hotpotqa", help="hotpotqa, cnn_dailymail, tydiqa or a JSONL path")
    add("--n", type=int, default=50, help="number of examples")
    add("--offset", type=int, default=0, help="skip this many rows first")
    add("--budgets", type=_ints, default=[20, 40, 60, 100], help="query budgets, e.g. 20,40")
    add("--methods", type=_names, default=list(ALL_METHODS), help=",".join(ALL_METHODS))
    add("--model", default="smollm2", help="smollm2, qwen2.5-0.5b or a local path")
    add("--seed", type=int, default=0)
    add("--peer-budget", type=int, default=40, help="budget of the real peers")
    add("--bert-budgets", type=_ints, default=[40], help="budgets with BERTScore")
    add("--bert-all-budgets", type=_names, default=[], help="methods with BERTScore everywhere")
    add("--no-bert", action="store_true", help="skip BERTScore consistency")
    add("--lds-subsets", type=int, default=32, help="held-out subsets per kind (0: no LDS)")
    add("--max-new-tokens", type=int, default=None)
    add("--max-segments", type=int, default=None, help="trim contexts")
    add("--batch-size", type=int, default=8, help="scorer batch size")
    add("--threads", type=int, default=None, help="torch threads")
    add("--prefix-cache", action="store_true", help="reuse shared prefixes (--batch-size 1)")
    add("--out", default=None, help="results folder (default benchmarks/results)")
    add("--smoke", action="store_true", help="2 examples, tiny budgets and contexts (CI)")


def config_from_args(args: argparse.Namespace) -> BenchConfig:
    """The :class:`BenchConfig` an argument namespace asks for."""
    names = [f for f in BenchConfig.__dataclass_fields__ if f != "out_dir"]
    values: dict[str, Any] = {name: getattr(args, name) for name in names}
    if args.smoke:
        values.update(SMOKE)
    out = args.out
    if out is None:
        out = tempfile.mkdtemp(prefix="camab-bench-smoke-") if args.smoke else str(RESULTS)
    return BenchConfig(**values, out_dir=out)


def main(argv: Sequence[str] | None = None) -> int:
    """Run (or resume) one data set's run, then print its report; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks eval")
    add_bench_arguments(parser)
    args = parser.parse_args(argv)
    # On shared cores, spinning OpenMP workers burn the time other processes need.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from benchmarks.evaluation.report import write_report
    from benchmarks.evaluation.runner import run_benchmark

    try:
        config = config_from_args(args)
        run_benchmark(config, use_bert=not args.no_bert)
    except (ValueError, InputError) as error:
        print(f"eval: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("eval: interrupted; re-run the same command to resume", file=sys.stderr)
        return 130
    print(write_report(config.results_path, Path(config.out_dir)))
    print(f"eval: results {config.results_path}", file=sys.stderr)
    return 0


def _resume_command(path: Path) -> str:
    records = read_results(path)
    dataset, _, model = path.stem.partition("_")
    if dataset == "cnn":  # cnn_dailymail_<model>
        dataset, model = "cnn_dailymail", path.stem.partition("_dailymail_")[2]
    config: dict[str, Any] = records[0].get("config", PROTOCOL) if records else PROTOCOL
    if records:
        dataset, model = records[0]["dataset"], records[0]["model"]

    def joined(key: str) -> str:
        return ",".join(str(v) for v in config.get(key, []))

    command = (
        f"nice -n 10 .venv/bin/python -m benchmarks eval --dataset {dataset} "
        f"--n {TARGETS.get(path.stem, 30)} --model {model} "
        f"--budgets {joined('budgets')} --peer-budget {config.get('peer_budget')} "
        f"--bert-budgets {joined('bert_budgets')} --threads 1 --batch-size 1 --prefix-cache"
    )
    if config.get("bert_all_budgets"):
        command += f" --bert-all-budgets {joined('bert_all_budgets')}"
    if config.get("methods"):  # the run's own methods (the default list has grown since)
        command += f" --methods {joined('methods')}"
    if records and "lds_subsets" not in config:  # a run from before LDS resumes without it
        command += " --lds-subsets 0"
    return command


def publish(argv: Sequence[str]) -> int:
    """``eval-report``: one section per stored results file in results/eval/README.md."""
    from benchmarks.evaluation.report import write_report

    prefix = argv[0] if argv else ""
    stems = {
        p.name.removesuffix(".partial.jsonl").removesuffix(".jsonl")
        for p in RESULTS.glob("*.jsonl")
        if p.name.startswith(prefix)
    }
    if not stems:
        print(f"no results files in {RESULTS}", file=sys.stderr)
        return 1
    for path in sorted(RESULTS / f"{stem}.jsonl" for stem in stems):
        markdown = write_report(path, RESULTS)
        # links written from the repository root (write_section makes them relative)
        body = markdown.replace("](plots/", "](benchmarks/results/plots/")
        body += (
            f"\nRaw per-example results: `benchmarks/results/{path.name}`. Produced and "
            f"resumed (already-done examples are skipped) with:\n\n"
            f"    {_resume_command(path)}\n"
        )
        partial = path.with_suffix(".partial.jsonl")
        if stages := read_results(partial):
            done = ", ".join(str(item.get("stage")) for item in stages)
            body += (
                f"\nIn progress: example `{stages[0].get('id')}` has these stages checkpointed "
                f"in `benchmarks/results/{partial.name}` (a resumed run continues there): "
                f"{done}.\n"
            )
        print(markdown)
        write_section(f"eval-{path.stem}", f"Attribution quality: {path.stem}", body)
    return 0

"""Publish the paper-protocol runs: one section per results file in results/eval/README.md.

Runs (or resumes) are made with ``python -m benchmarks eval``; this only reads
``benchmarks/results/*.jsonl`` and writes one section per dataset and model (tables, plots,
the commands that produce and resume the run).

    .venv/bin/python -m benchmarks eval-report            # all results files
    .venv/bin/python -m benchmarks eval-report hotpotqa   # files whose name starts with it
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._report import write_section
from benchmarks.evaluation.report import write_report
from benchmarks.evaluation.runner import read_results

RESULTS = Path(__file__).resolve().parent / "results"
# examples each published run must reach (issue 6)
TARGETS = {"hotpotqa_smollm2": 50, "hotpotqa_qwen2.5-0.5b": 20}
DEFAULT_TARGET = 30


# the protocol of the published runs (used until a run has a finished example to read it from)
PROTOCOL: dict[str, Any] = {
    "budgets": [20, 40, 60, 100],
    "peer_budget": 40,
    "bert_budgets": [40],
    "bert_all_budgets": ["camab", "kernelshap"],
}


def _resume_command(path: Path) -> str:
    records = read_results(path)
    dataset, _, model = path.stem.partition("_")
    if dataset == "cnn":  # cnn_dailymail_<model>
        dataset, _, model = path.stem.partition("_dailymail_")
        dataset = "cnn_dailymail"
    config: dict[str, Any] = records[0].get("config", PROTOCOL) if records else PROTOCOL
    if records:
        dataset, model = records[0]["dataset"], records[0]["model"]

    def joined(key: str) -> str:
        return ",".join(str(v) for v in config.get(key, []))

    command = (
        f"nice -n 10 .venv/bin/python -m benchmarks eval --dataset {dataset} "
        f"--n {TARGETS.get(path.stem, DEFAULT_TARGET)} --model {model} "
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


def main(argv: list[str]) -> int:
    prefix = argv[0] if argv else ""
    stems = {
        p.name.removesuffix(".partial.jsonl").removesuffix(".jsonl")
        for p in RESULTS.glob("*.jsonl")
        if p.name.startswith(prefix)
    }
    files = sorted(RESULTS / f"{stem}.jsonl" for stem in stems)
    if not files:
        print(f"no results files in {RESULTS}", file=sys.stderr)
        return 1
    for path in files:
        markdown = write_report(path, RESULTS)
        # links written from the repository root (write_section makes them relative)
        body = markdown.replace("](plots/", "](benchmarks/results/plots/")
        body += (
            f"\nRaw per-example results: `benchmarks/results/{path.name}`. Produced and "
            f"resumed (already-done examples are skipped) with:\n\n"
            f"    {_resume_command(path)}\n"
        )
        partial = path.with_suffix(".partial.jsonl")
        stages = read_results(partial) if partial.exists() else []
        if stages:
            done = ", ".join(str(item.get("stage")) for item in stages)
            body += (
                f"\nIn progress: example `{stages[0].get('id')}` has these stages checkpointed "
                f"in `benchmarks/results/{partial.name}` (a resumed run continues there): "
                f"{done}.\n"
            )
        print(markdown)
        write_section(f"eval-{path.stem}", f"Attribution quality: {path.stem}", body)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

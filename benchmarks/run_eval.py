"""Publish the attribution benchmark: report every results file into BENCHMARKS.md.

Runs (or resumes) are made with ``camab bench`` / ``python -m camab_rag.evaluation``; this
script only reads ``benchmarks/results/*.jsonl`` and writes one BENCHMARKS.md section per
dataset and model (tables, plots, the commands that produce and resume the run).

    .venv/bin/python benchmarks/run_eval.py            # all results files
    .venv/bin/python benchmarks/run_eval.py hotpotqa   # files whose name starts with it
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._report import write_section
from camab_rag.evaluation.report import write_report
from camab_rag.evaluation.runner import read_results

RESULTS = Path(__file__).resolve().parent / "results"


def _resume_command(path: Path) -> str:
    records = read_results(path)
    if not records:
        return ""
    first = records[0]
    config = first.get("config", {})
    dataset = first.get("dataset", path.stem)
    budgets = ",".join(str(b) for b in config.get("budgets", []))
    return (
        f"nice -n 10 .venv/bin/python -m camab_rag.evaluation --dataset {dataset} "
        f"--n <N> --model {first.get('model')} --budgets {budgets} "
        f"--peer-budget {config.get('peer_budget')} "
        f"--bert-budgets {','.join(str(b) for b in config.get('bert_budgets', [40]))}"
        + (
            f" --bert-all-budgets {','.join(config['bert_all_budgets'])}"
            if config.get("bert_all_budgets")
            else ""
        )
    )


def main(argv: list[str]) -> int:
    prefix = argv[0] if argv else ""
    files = sorted(
        p
        for p in RESULTS.glob("*.jsonl")
        if p.name.startswith(prefix) and not p.name.endswith(".partial.jsonl")
    )
    if not files:
        print(f"no results files in {RESULTS}", file=sys.stderr)
        return 1
    for path in files:
        markdown = write_report(path, RESULTS)
        # links in BENCHMARKS.md are relative to the repository root
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

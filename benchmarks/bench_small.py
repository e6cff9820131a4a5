"""Small contexts (4-10 chunks): every method pays min(budget, 2**N) distinct calls, and how
well its chunk ranking agrees with the exact attribution over all subsets.

Each example keeps its two gold HotpotQA paragraphs plus the first ``N - 2`` others as
chunks; the model answers under that context (greedy), then the answer's reward (mean
token log-prob) is scored for **every** subset once, with the real model. That table is
the exact reference (Shapley values, and the least-squares fit over all subsets) and the
reward every method is replayed on (``attribute_fn``, whose calls are the distinct subsets
a method asks for), so the methods cost no model time beyond the enumeration.

On one level of chunks ``auto`` opens with KernelSHAP's design and then makes Thompson
draws: the report compares that design with Thompson draws only (auto's one-level design
before), and ``auto`` at q=2 and q=4 draws a round with q=1, paired by example and seed
(:data:`PAIRED_SEEDS`), on the sizes that do not fit every subset into the budget.

    .venv/bin/python benchmarks/bench_small.py run --sizes 4,6,8 --n 3
    .venv/bin/python benchmarks/bench_small.py report
"""

from __future__ import annotations

import argparse
import sys
from itertools import product
from math import factorial
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._report import ci_cell, markdown_table, write_section  # noqa: E402
from benchmarks.data import Example, load_examples  # noqa: E402
from benchmarks.evaluation.metrics import mean_ci, paired_t_pvalue  # noqa: E402
from benchmarks.evaluation.runner import append_record, read_results  # noqa: E402
from camab_rag import AttributionSettings  # noqa: E402
from camab_rag.engine import attribute_fn  # noqa: E402
from camab_rag.methods.auto import Auto  # noqa: E402
from camab_rag.methods.base import all_masks  # noqa: E402
from camab_rag.prompts import TemplatePromptBuilder  # noqa: E402
from camab_rag.rewards import mean_logprob  # noqa: E402
from camab_rag.scorers.base import ScoreRequest  # noqa: E402
from camab_rag.segments import segment_documents, to_documents  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "small" / "hotpotqa_smollm2.jsonl"
METHODS: dict[str, dict[str, Any]] = {
    "auto": {"method": "auto"},
    "auto (Thompson only)": {"method": Auto._variant(shapley_opening=0.0)},
    "auto (q=2)": {"method": "auto", "batch_size": 2},
    "auto (q=4)": {"method": "auto", "batch_size": 4},
    "camab": {"method": "camab"},
    "camab (redraw=False)": {"method": "camab", "redraw": False},
    "kernelshap": {"method": "kernelshap"},
    "contextcite": {"method": "contextcite"},
    "loo": {"method": "loo"},
}
SEEDS = range(5)
PAIRED_SEEDS = range(20)
"""Seeds of the paired q>1 against q=1 comparison (more than :data:`SEEDS`: a Thompson run's
top chunk varies with the seed)."""
BATCHED = ("auto (q=2)", "auto (q=4)")
DROP_KS = (1, 2, 3)
FloatArray = NDArray[np.float64]


def chunks_of(example: Example, size: int) -> list[dict[str, str]] | None:
    """The gold paragraphs and the first others, in the example's order (None: too few)."""
    gold_docs: set[int] = set()
    start = 0
    for doc, spans in enumerate(example.spans):
        if any(start <= g < start + len(spans) for g in example.gold or []):
            gold_docs.add(doc)
        start += len(spans)
    others = [d for d in range(len(example.documents)) if d not in gold_docs]
    keep = sorted([*gold_docs, *others[: size - len(gold_docs)]])
    return [example.documents[d] for d in keep] if len(keep) == size else None


def shapley(table: dict[bytes, float], n: int) -> FloatArray:
    phi = np.zeros(n)
    for bits in product([False, True], repeat=n):
        mask = np.array(bits, dtype=bool)
        size = int(mask.sum())
        for i in np.flatnonzero(~mask):
            with_i = mask.copy()
            with_i[i] = True
            weight = factorial(size) * factorial(n - size - 1) / factorial(n)
            phi[i] += weight * (table[with_i.tobytes()] - table[mask.tobytes()])
    return phi


def least_squares(table: dict[bytes, float], n: int) -> FloatArray:
    """The linear fit over every subset: mean reward with a chunk minus without it."""
    masks = all_masks(n)
    rewards = np.array([table[m.tobytes()] for m in masks])
    return np.array([rewards[masks[:, i]].mean() - rewards[~masks[:, i]].mean() for i in range(n)])


def run(args: argparse.Namespace) -> None:
    from camab_rag.scorers import TransformersScorer

    scorer = TransformersScorer(
        "smollm2", batch_size=1, num_threads=args.threads, prefix_cache=True
    )
    done = {(r["id"], r["n"]) for r in read_results(OUT)}
    examples = load_examples("hotpotqa", args.n + 5)
    for size in args.sizes:
        taken = 0
        for example in examples:
            if taken >= args.n:
                break
            documents = chunks_of(example, size)
            if documents is None:
                continue
            taken += 1
            if (example.id, size) in done:
                continue
            docs = to_documents(documents)
            builder = TemplatePromptBuilder(
                example.question,
                docs,
                segment_documents(docs, "chunk"),
                document_template="{title}: {text}",
            )
            full = np.ones(size, dtype=bool)
            response = scorer.generate([builder.build(full)], max_new_tokens=48)[0]
            if not response.strip():
                continue
            masks = all_masks(size)
            results = scorer.score([ScoreRequest(builder.build(m), response) for m in masks])
            rewards = [mean_logprob(r.logprobs) for r in results]
            append_record(
                OUT,
                {
                    "id": example.id,
                    "n": size,
                    "response": response,
                    "masks": ["".join("1" if b else "0" for b in m) for m in masks],
                    "rewards": [round(float(v), 6) for v in rewards],
                },
            )
            print(f"{example.id} N={size}: {len(masks)} subsets scored", flush=True)


def replay(
    record: dict[str, Any],
    budget: int,
    methods: dict[str, dict[str, Any]] = METHODS,
    seeds: range = SEEDS,
) -> list[dict[str, Any]]:
    """Every method on the stored reward table: calls paid and agreement with exact."""
    n = int(record["n"])
    table = {
        np.array([c == "1" for c in bits]).tobytes(): float(v)
        for bits, v in zip(record["masks"], record["rewards"])
    }
    references = {"shapley": shapley(table, n), "least_squares": least_squares(table, n)}
    full = table[np.ones(n, dtype=bool).tobytes()]
    best_drop = {k: max(full - v for key, v in table.items() if n - sum(key) == k) for k in DROP_KS}
    rows = []
    for name, options in methods.items():
        for seed in seeds:
            calls: list[bytes] = []

            def value(mask: NDArray[np.bool_], calls: list[bytes] = calls) -> float:
                calls.append(mask.tobytes())
                return table[mask.tobytes()]

            settings = AttributionSettings().with_changes(budget=budget, seed=seed, **options)
            result = attribute_fn(value, n, settings=settings)
            row: dict[str, Any] = {
                "method": name,
                "seed": seed,
                "calls": len(calls),
                "distinct": len(set(calls)),
                "rounds": result.n_evaluations,
                "redrawn": result.n_redrawn,
                "exact": result.exact,
            }
            for ref_name, reference in references.items():
                rho = spearmanr(result.scores, reference).statistic
                row[ref_name] = float(rho) if np.isfinite(rho) else 0.0
                row[f"{ref_name}_top1"] = float(np.argmax(result.scores) == np.argmax(reference))
            order = np.argsort(-np.asarray(result.scores))
            for k in DROP_KS:
                kept = np.ones(n, dtype=bool)
                kept[order[:k]] = False
                row[f"drop{k}"] = (full - table[kept.tobytes()]) / best_drop[k]
            rows.append(row)
    return rows


def report(args: argparse.Namespace) -> None:
    records = read_results(OUT)
    lines = [
        f"HotpotQA paragraphs as chunks (2 gold + N-2 others), SmolLM2; budget {args.budget}; "
        f"every subset scored once with the model ({len(records)} example-sizes); each "
        f"method replayed on that table with seeds {SEEDS.start}-{SEEDS.stop - 1}. "
        "Calls = distinct subsets a run asked for; rounds = the loop's iterations (the "
        "paper-faithful CAMAB re-draws cached subsets, which cost no call but spend a "
        "round). Agreement = Spearman correlation of the chunk scores with the exact "
        "Shapley values and with the exact least-squares fit over all subsets; top-1 = the "
        "share of runs whose best chunk is the exact best.",
        "",
    ]
    header = [
        "N",
        "examples",
        "method",
        "calls",
        "rounds",
        "redrawn",
        "ρ Shapley",
        "ρ LSQ",
        "top-1 Shapley",
    ]
    table = []
    for n in sorted({int(r["n"]) for r in records}):
        group = [r for r in records if int(r["n"]) == n]
        rows = [row for r in group for row in replay(r, args.budget)]
        for name in METHODS:
            mine = [row for row in rows if row["method"] == name]
            assert all(row["calls"] == row["distinct"] for row in mine)
            table.append(
                [
                    n,
                    len(group),
                    name,
                    f"{np.mean([r['calls'] for r in mine]):.1f}",
                    f"{np.mean([r['rounds'] for r in mine]):.1f}",
                    f"{np.mean([r['redrawn'] for r in mine]):.1f}",
                    ci_cell([r["shapley"] for r in mine]),
                    ci_cell([r["least_squares"] for r in mine]),
                    f"{np.mean([r['shapley_top1'] for r in mine]):.2f}",
                ]
            )
    lines.append(markdown_table(header, table))
    lines += ["", *opening_table(records), "", *batched_table(records, args.budget)]
    text = "\n".join(lines)
    print(text)
    write_section("small", "Small contexts: distinct calls and agreement with exact", text)


OPENINGS: dict[str, dict[str, Any]] = {
    name: METHODS[name] for name in ("auto (Thompson only)", "auto")
} | {
    f"auto (opening {share})": {"method": Auto._variant(shapley_opening=share)}
    for share in (0.25, 0.5, 1.0)
}
"""auto's one-level design (``shapley_opening`` 0.75) and the other shares it was chosen
from."""
PAIRED_METRICS = {
    "shapley": "ρ Shapley",
    "least_squares": "ρ LSQ",
    "shapley_top1": "top-1 Shapley",
    **{f"drop{k}": f"drop@{k} share" for k in DROP_KS},
}


def paired_rows(
    records: list[dict[str, Any]],
    budget: int,
    base: str,
    others: tuple[str, ...],
    candidates: dict[str, dict[str, Any]] = METHODS,
) -> list[list[object]]:
    """Each of ``others`` against ``base`` on the sizes whose subsets do not all fit the
    budget (the others are exact), paired by example and seed: the difference averaged
    over the seeds of each example-size, then its mean ± 95% CI and paired t-test p over
    the example-sizes."""
    wanted = [r for r in records if 2 ** int(r["n"]) > budget]
    methods = {name: candidates[name] for name in (base, *others)}
    by_example = [replay(r, budget, methods, PAIRED_SEEDS) for r in wanted]
    rows: list[list[object]] = []
    for name in others:
        for key, label in PAIRED_METRICS.items():
            ours, theirs, per_example = [], [], []
            for runs in by_example:
                base_runs = {row["seed"]: row[key] for row in runs if row["method"] == base}
                mine = {row["seed"]: row[key] for row in runs if row["method"] == name}
                theirs += list(base_runs.values())
                ours += list(mine.values())
                per_example.append(float(np.mean([mine[s] - base_runs[s] for s in base_runs])))
            mean, half, _ = mean_ci(per_example)
            rows.append(
                [
                    budget,
                    f"{name} − {base}",
                    label,
                    f"{np.mean(theirs):.3f}",
                    f"{np.mean(ours):.3f}",
                    f"{mean:+.3f} ± {half:.3f}",
                    f"{paired_t_pvalue(per_example):.3g}",
                ]
            )
    return rows


def _sizes_note(records: list[dict[str, Any]], budget: int) -> str:
    wanted = [r for r in records if 2 ** int(r["n"]) > budget]
    sizes = sorted({int(r["n"]) for r in wanted})
    return (
        f"the N = {', '.join(map(str, sizes))} tables ({len(wanted)} example-sizes; smaller "
        f"N fit every subset), seeds {PAIRED_SEEDS.start}-{PAIRED_SEEDS.stop - 1} each. The "
        "difference is averaged over the seeds of each example-size, then its mean ± 95% CI "
        "and paired t-test p are over the example-sizes"
    )


PAIRED_HEADER = ["budget", "comparison", "metric", "base", "other", "difference ± 95% CI", "p"]


def batched_table(records: list[dict[str, Any]], budget: int) -> list[str]:
    """``auto`` with q=2 and q=4 Thompson draws a round against q=1."""
    rows = paired_rows(records, budget, "auto", BATCHED)
    return [
        f"Thompson draws per round (q) on one level of chunks: auto at q=2 and q=4 against "
        f"q=1 on {_sizes_note(records, budget)}.",
        "",
        markdown_table(PAIRED_HEADER, rows),
    ]


CHOSEN_ON = (6, 8, 10)
"""The table sizes ``SHAPLEY_OPENING`` was chosen on; tables of other sizes, made after the
choice, check it."""


def opening_table(records: list[dict[str, Any]]) -> list[str]:
    """``auto``'s one-level design (KernelSHAP opening, then Thompson draws) against
    Thompson draws only, at 20 and 40 calls: on the tables the share was chosen on, then
    on the tables made afterwards."""
    chosen_on = [r for r in records if int(r["n"]) in CHOSEN_ON]
    check = [r for r in records if int(r["n"]) not in CHOSEN_ON and 2 ** int(r["n"]) > 20]
    lines = [
        "One-level designs: auto (three quarters of the budget on KernelSHAP's design, then "
        "Thompson draws: `SHAPLEY_OPENING`) against auto's earlier Thompson draws only, on "
        f"{_sizes_note(chosen_on, 40)} (at 20 calls N >= 5 counts). The other shares of "
        "the budget opened with KernelSHAP's design are the candidates auto's 0.75 was "
        "chosen from on these tables (1.0: KernelSHAP's design alone, read by auto's "
        "estimator). 'drop@k share': the reward lost by removing the top k chunks, as a "
        "share of the most any k chunks lose (1 = the best possible removal set).",
        "",
        markdown_table(PAIRED_HEADER, _opening_rows(chosen_on, tuple(OPENINGS)[1:])),
    ]
    if check:
        lines += [
            "",
            "The same comparison on tables made after the choice (sizes it was not made on), "
            f"{_sizes_note(check, 20)}:",
            "",
            markdown_table(PAIRED_HEADER, _opening_rows(check, ("auto", "auto (opening 1.0)"))),
        ]
    return lines


def _opening_rows(records: list[dict[str, Any]], others: tuple[str, ...]) -> list[list[object]]:
    return [
        row
        for budget in (20, 40)
        for row in paired_rows(records, budget, "auto (Thompson only)", others, OPENINGS)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument(
        "--sizes", type=lambda t: [int(x) for x in t.split(",")], default=[4, 6, 8]
    )
    run_parser.add_argument("--n", type=int, default=3)
    run_parser.add_argument("--threads", type=int, default=1)
    report_parser = sub.add_parser("report")
    report_parser.add_argument("--budget", type=int, default=40)
    args = parser.parse_args()
    run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    main()

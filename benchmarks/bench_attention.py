"""Attention kernel on a GPU: whole attributions with cached-prefix passes on dense-mask SDPA
against lower-right causal attention; what and how: benchmarks/results/speed/README.md."""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

from benchmarks import argument_parser
from benchmarks._report import columns, markdown_table, write_headline, write_section
from benchmarks.workload import add_shape_arguments, bench_row, hotpot_requests, shaped_model

RUNS = (("camab", 100), ("loo", 0), ("auto", 40))
"""(method, budget) of each timed attribution; leave-one-out's budget is N + 1."""
KERNELS = ("dense", "lower-right")


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def main() -> None:
    parser = argument_parser(__doc__)
    add_shape_arguments(parser, default="llama-3.1-8b")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    import numpy as np
    import torch

    import camab_rag
    from camab_rag.scorers.prefix_batches import use_lower_right
    from camab_rag.scorers.transformers_scorer import TransformersScorer

    model, tokenizer = shaped_model(args.shape, args.device, args.dtype, args.tokenizer)
    scorer = TransformersScorer(model, tokenizer=tokenizer)
    row = bench_row()
    docs = [f"{title}: {''.join(sentences).strip()}" for title, sentences in row["context"]]
    question, answer = str(row["question"]), str(row["answer"])

    def set_kernel(kernel: str) -> str:
        if kernel == "dense":
            scorer.model.set_attn_implementation("sdpa")
        else:
            use_lower_right(scorer.model)
        return str(scorer.model.config._attn_implementation)

    def attribution(method: str, budget: int) -> tuple[float, Any, int]:
        scorer.clear_prefix_cache()
        before = scorer.prefix.computed_tokens
        _sync()
        started = time.perf_counter()
        result = camab_rag.attribute(
            question, docs, answer, scorer, budget=budget or None, method=method
        )
        _sync()
        return time.perf_counter() - started, result, scorer.prefix.computed_tokens - before

    # warm-up: both kernels, a short run each (first-call allocations, kernel choice)
    for kernel in KERNELS:
        set_kernel(kernel)
        attribution("camab", 8)

    rows: list[list[object]] = []
    scores: dict[tuple[str, str], Any] = {}
    seconds: dict[tuple[str, str], float] = {}
    implementations: dict[str, str] = {}
    for method, budget in RUNS:
        for kernel in KERNELS:
            implementations[kernel] = set_kernel(kernel)
            times, result, computed = [], None, 0
            for _ in range(args.repeats):
                elapsed, result, computed = attribution(method, budget)
                times.append(elapsed)
            assert result is not None
            seconds[method, kernel] = statistics.median(times)
            scores[method, kernel] = np.asarray(result.scores)
            print(f"{method} {kernel}: {seconds[method, kernel]:.2f} s", file=sys.stderr)
            took = seconds[method, kernel]
            figures = f"{took:.2f}|{1000 * took / max(result.n_queries, 1):.1f}|"
            figures += f"{seconds[method, 'dense'] / took:.2f}x"
            line = [method, result.n_queries, kernel, implementations[kernel], computed]
            rows.append([*line, *columns(figures)])

    # the same requests under both kernels: how far apart are their log-probs?
    requests = hotpot_requests(16, "random")
    logprobs = {}
    for kernel in KERNELS:
        set_kernel(kernel)
        scorer.clear_prefix_cache()
        logprobs[kernel] = [r.logprobs for r in scorer.score(requests)]
    diff = max(
        float(np.abs(a - b).max()) for a, b in zip(logprobs["dense"], logprobs["lower-right"])
    )
    ranks = {key: np.argsort(np.argsort(value)) for key, value in scores.items()}
    rho = {m: float(np.corrcoef(ranks[m, "dense"], ranks[m, "lower-right"])[0, 1]) for m, _ in RUNS}
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "CPU"
    header = columns(
        "method|model calls|kernel|attention implementation|tokens computed|"
        f"seconds (median of {args.repeats})|ms per call|speed-up"
    )
    body = markdown_table(header, rows)
    body += (
        f"\n\nOne HotpotQA distractor example ({len(docs)} paragraphs, sentence granularity, "
        f"the benchmark row of bench_scorer.py), answer {answer!r}; {args.shape} shape with "
        f"random-init weights (the same compute as the real model) in {args.dtype} on "
        f"{device}, torch {torch.__version__}. 'dense': every pass on transformers' sdpa, "
        "which builds a dense causal mask whenever a pass continues a cached prefix (PyTorch "
        "then cannot use its flash kernel); 'lower-right': the scorer's default, those passes "
        "as lower-right causal attention (camab_rag/scorers/prefix_batches.py). Prefix cache "
        "cleared before each run; wall time with the GPU synchronized; warm-up runs not "
        "timed. Same requests under both kernels (16 random-half subsets): largest "
        f"difference of a token's log-prob {diff:.4f} nats ({args.dtype} rounding). Rank "
        "correlation of the two kernels' scores: "
        + ", ".join(f"{m} {r:.3f}" for m, r in rho.items())
        + " (random-init weights make the scores near-ties, so rounding can reorder them; "
        "this row is a check, not a quality figure)."
    )
    print(body)
    if not args.no_write:
        name = f"attention-{args.shape}"
        title = f"Attention kernel on a GPU: whole attributions, {args.shape} ({device})"
        write_section(name, title, body)
        cells = {(str(row[0]), str(row[2])): str(row[5]) for row in rows}
        headline = [
            [f"{method} attribution s, {args.shape} ({device})", value, f"dense {dense}", "–"]
            for (method, kernel), value in cells.items()
            if kernel == "lower-right" and (dense := cells.get((method, "dense")))
        ]
        write_headline(name, headline)


if __name__ == "__main__":
    main()

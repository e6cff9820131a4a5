"""What does the scorer's prefix cache save on a real attribution run?

Attributes the gold answer of HotpotQA distractor examples (sentence granularity, the
benchmark's prompt) with CAMAB, KernelSHAP and leave-one-out, twice per method: with a
plain ``TransformersScorer(batch_size=1)`` and with ``prefix_cache=True``. Reports the
tokens run through the model, the wall time, and the largest difference between the two
runs' rewards (the cache must not change the numbers).

    .venv/bin/python benchmarks/bench_prefix_cache.py --examples 1 --budget 40 --threads 1
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._report import markdown_table, write_section  # noqa: E402
from benchmarks.data import load_examples  # noqa: E402
from benchmarks.evaluation.runner import make_builder  # noqa: E402
from camab_rag import AttributionSettings  # noqa: E402
from camab_rag.engine import attribute  # noqa: E402
from camab_rag.scorers import TransformersScorer  # noqa: E402

METHODS = ("camab", "kernelshap", "loo")


@dataclass
class MethodTotals:
    """One method's sums over the examples; index 0 = plain scorer, 1 = prefix cache."""

    queries: int = 0
    tokens: list[int] = field(default_factory=lambda: [0, 0])
    computed: list[int] = field(default_factory=lambda: [0, 0])
    wall: list[float] = field(default_factory=lambda: [0.0, 0.0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    plain = TransformersScorer(args.model, batch_size=1, num_threads=args.threads)
    cached = TransformersScorer(args.model, batch_size=1, prefix_cache=True)
    cached.model, cached.tokenizer = plain.model, plain.tokenizer  # one copy of the weights
    totals = {m: MethodTotals() for m in METHODS}
    worst = 0.0
    examples = load_examples("hotpotqa", args.examples)
    for example in examples:
        builder = make_builder(example)
        response = example.answers[0]
        for method in METHODS:
            budget = builder.n_segments + 1 if method == "loo" else args.budget
            runs = []
            for k, scorer in enumerate((plain, cached)):
                before = scorer.computed_tokens
                started = time.perf_counter()
                result = attribute(
                    example.question,
                    example.documents,
                    response,
                    scorer,
                    budget=budget,
                    method=method,
                    granularity=example.granularity(),
                    settings=AttributionSettings(
                        seed=0, prompt_builder=lambda *_a, b=builder: b, statements=False
                    ),
                )
                row = totals[method]
                row.wall[k] += time.perf_counter() - started
                row.computed[k] += scorer.computed_tokens - before
                row.tokens[k] += result.prompt_tokens
                runs.append(result)
            totals[method].queries += runs[0].n_queries
            if (
                runs[0].masks.shape == runs[1].masks.shape
                and (runs[0].masks == runs[1].masks).all()
            ):
                worst = max(worst, float(np.max(np.abs(runs[0].rewards - runs[1].rewards))))
            else:
                worst = float("nan")  # different subsets: the comparison is void
            print(method, totals[method], flush=True)

    table = []
    for method, row in totals.items():
        off, on = row.wall
        table.append(
            [
                method,
                row.queries,
                row.tokens[0],
                row.computed[0],
                row.computed[1],
                f"{row.computed[1] / row.computed[0]:.1%}",
                f"{off:.1f}",
                f"{on:.1f}",
                f"{off / on:.2f}x",
            ]
        )
    header = [
        "method",
        "queries",
        "prompt tokens",
        "tokens computed, plain",
        "tokens computed, prefix cache",
        "share computed",
        "wall s, plain",
        "wall s, prefix cache",
        "speed-up",
    ]
    body = markdown_table(header, table)
    body += (
        f"\n\n{len(examples)} HotpotQA distractor example(s) from the top of the file, the "
        f"gold answer attributed, sentence granularity, s={args.budget} (leave-one-out: N+1), "
        f"{args.model} float32 on CPU, batch size 1, {args.threads} torch thread(s). 'Tokens "
        "computed' counts prompt + response tokens run through the model (the plain scorer "
        "runs every token; the cached one skips the prefix shared with the previous request, "
        "and sorts the requests of one call so that neighbours share long prefixes). Largest "
        f"reward difference between the two scorers: {worst:.2e} nats/token (the same "
        "subsets were chosen)."
    )
    print(body)
    if not args.no_write:
        write_section("prefix_cache", "Scorer prefix cache (HotpotQA)", body)


if __name__ == "__main__":
    main()

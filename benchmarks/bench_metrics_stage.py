"""Where does the metrics stage of `camab bench` spend its time, and what does the prefix
cache save there?

Takes finished records of a results file (their methods' scores are the input of the
metrics stage) and runs the stage again three ways on the same examples:

- plain: ``TransformersScorer(batch_size=1)``; every drop set scored, then every BERTScore
  set regenerated with ``model.generate``;
- cache: ``prefix_cache=True`` for both scoring and greedy decoding, same order;
- cache, paired (what ``camab bench --prefix-cache`` does): each BERTScore set is scored
  and then regenerated at once, so its prompt is already in the cache.

Reports the model seconds spent scoring and generating, the tokens the cached scorer ran,
and whether the three ways agree (drops, and the regenerated texts).

    .venv/bin/python benchmarks/bench_metrics_stage.py --examples 1 --threads 1
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._report import markdown_table, write_section  # noqa: E402
from benchmarks.data import load_examples  # noqa: E402
from benchmarks.evaluation.counting import CountingScorer  # noqa: E402
from benchmarks.evaluation.metrics import BertScoreF1  # noqa: E402
from benchmarks.evaluation.runner import (  # noqa: E402
    BenchConfig,
    ExampleRunner,
    make_builder,
    read_results,
)
from camab_rag.scorers import TransformersScorer  # noqa: E402

WAYS = ("plain", "cache", "cache, paired")


class _RecordingBert:
    """BERTScore that keeps the candidates it was given (the regenerated answers)."""

    def __init__(self, inner: BertScoreF1) -> None:
        self.inner = inner
        self.candidates: list[str] = []

    def __call__(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        self.candidates += list(candidates)
        return self.inner(candidates, references)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="benchmarks/results/hotpotqa_smollm2.jsonl")
    parser.add_argument("--examples", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    records = [r for r in read_results(ROOT / args.results) if r.get("status") == "ok"]
    records = records[: args.examples]
    if not records:
        raise SystemExit(f"no finished records in {args.results}")
    first = records[0]
    config = BenchConfig(**{**first["config"], "batch_size": 1})
    wanted = {r["id"] for r in records}
    examples = [e for e in load_examples(config.dataset, config.n) if e.id in wanted]
    plain = TransformersScorer(config.model, batch_size=1, num_threads=args.threads)
    cached = TransformersScorer(config.model, batch_size=1, prefix_cache=True)
    cached.model, cached.tokenizer = plain.model, plain.tokenizer  # one copy of the weights
    bert = BertScoreF1()

    totals = {way: {"score": 0.0, "generate": 0.0, "wall": 0.0, "computed": 0} for way in WAYS}
    outputs: dict[str, list[Any]] = {way: [] for way in WAYS}
    n_sets = [0, 0]
    for example in examples:
        record = next(r for r in records if r["id"] == example.id)
        builder = make_builder(example)
        for way in WAYS:
            scorer = CountingScorer(plain if way == "plain" else cached)
            recording = _RecordingBert(bert)
            runner = ExampleRunner(
                BenchConfig(**{**first["config"], "prefix_cache": way == "cache, paired"}),
                scorer,
                recording,
            )
            methods = copy.deepcopy(record["methods"])
            before = cached.computed_tokens
            started = time.perf_counter()
            runner.metrics(
                example, builder, record["response"], record["full_logprob"], methods, {}
            )
            used = scorer.snapshot()
            row = totals[way]
            row["wall"] += time.perf_counter() - started
            row["score"] += used.score_seconds
            row["generate"] += used.generate_seconds
            row["computed"] += cached.computed_tokens - before
            drops = [
                fit.get("drop") for entry in methods.values() for fit in entry["budgets"].values()
            ]
            outputs[way].append((drops, sorted(recording.candidates)))
            if way == "plain":
                n_sets[0] += used.score_requests
                n_sets[1] += used.generations
            print(way, row, flush=True)

    same_texts = all(
        outputs[w][i][1] == outputs["plain"][i][1] for w in WAYS for i in range(len(examples))
    )
    worst = max(
        abs(a - b)
        for w in WAYS
        for i in range(len(examples))
        for fits_a, fits_b in zip(outputs[w][i][0], outputs["plain"][i][0])
        for a, b in zip(fits_a.values(), fits_b.values())
    )
    base = totals["plain"]["wall"]
    table = [
        [
            way,
            f"{row['score']:.1f}",
            f"{row['generate']:.1f}",
            f"{row['wall']:.1f}",
            row["computed"] if way != "plain" else "",
            f"{base / row['wall']:.2f}x",
        ]
        for way, row in totals.items()
    ]
    header = [
        "way",
        "scoring s",
        "regeneration s",
        "stage wall s (with BERTScore)",
        "tokens computed",
        "speed-up",
    ]
    body = markdown_table(header, table)
    n_segments = ", ".join(str(r["n_segments"]) for r in records)
    body += (
        f"\n\nThe metrics stage of {len(examples)} finished record(s) of `{args.results}` "
        f"(N = {n_segments} sentences), re-run from the records' method scores: "
        f"{n_sets[0]} distinct top-k removal sets scored for the log-prob drop, "
        f"{n_sets[1]} of them regenerated ({config.model}, greedy, at most 48 new tokens) "
        f"for BERTScore. float32 on CPU, batch size 1, {args.threads} torch thread(s). "
        f"'Tokens computed' counts what the cached scorer ran (scoring and decoding). "
        f"The three ways regenerate the same texts: {'yes' if same_texts else 'NO'}; "
        f"largest drop difference: {worst:.1e} nats/token."
    )
    print(body)
    if not args.no_write:
        write_section("metrics_stage", "Metrics stage: where the time goes (HotpotQA)", body)
    if not same_texts or not worst <= 1e-4:
        raise SystemExit("the three ways disagree; see above")


if __name__ == "__main__":
    main()

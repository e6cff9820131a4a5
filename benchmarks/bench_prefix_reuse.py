"""How much of CAMAB's prompt work could a prefix (KV) cache save?

Runs ``camab_rag.attribute`` (method CAMAB, sentence granularity, default prompt:
system prompt, then the kept context, then the question) on HotpotQA distractor examples,
records every prompt the engine sends, in order, tokenizes it with the SmolLM2 tokenizer,
and counts the prompt tokens that must really be recomputed:

* *previous*: reusing the longest common token prefix with the previous request (what a
  scorer that keeps one KV cache could save);
* *any earlier*: reusing the longest common prefix with any earlier request of the same
  run (what a prefix tree of caches, as in vLLM's prefix caching, could save).

Rewards come from the real SmolLM2 scorer on ``--real`` examples and, to cover more
examples cheaply, from a word-overlap proxy reward on ``--proxy`` examples (the subsets
CAMAB picks depend on the rewards only through its posterior; the prefix structure is
driven by which segments each Thompson sample keeps).

    .venv/bin/python benchmarks/bench_prefix_reuse.py            # 3 real + 30 proxy runs

``--scored N`` (default 0) then runs CAMAB, leave-one-out, ContextCite and KernelSHAP
on N examples with the default scorer (``default_scorer()``: prefix reuse on, batch
size 8) and reports the tokens it really ran through the model against the tokens the
requests hold (prompt + response), its right pads, and its wall time; the scorer's kept
prefixes are dropped before each run, so a run reuses only its own earlier requests.

    .venv/bin/python benchmarks/bench_prefix_reuse.py --real 0 --proxy 0 --scored 2 --threads 1
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._report import markdown_table, write_section  # noqa: E402
from camab_cli.audit.simulated import keyword_logprobs  # noqa: E402
from camab_rag import AttributionSettings  # noqa: E402
from camab_rag.scorers.base import BaseScorer, ResponseLogprobs, ScoreRequest  # noqa: E402

if TYPE_CHECKING:
    from camab_rag.scorers.transformers_scorer import TransformersScorer

DATA = ROOT.parent / "shared" / "data" / "hotpotqa_distractor_dev.jsonl"


class Recording(BaseScorer):
    """Forwards to ``inner`` and keeps every request's prompt in call order, and the
    tokens the requests hold (prompt + response, as the scorer tokenized them)."""

    def __init__(self, inner: BaseScorer) -> None:
        self.inner = inner
        self.prompts: list[object] = []
        self.requested_tokens = 0

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.prompts.extend(r.prompt for r in requests)
        results = self.inner.score(requests)
        self.requested_tokens += sum(r.prompt_tokens + len(r.logprobs) for r in results)
        return results


class WordOverlap(BaseScorer):
    """Proxy reward: the simulated scorer's keyword log-probs (a response word is likely
    when the prompt contains it; :func:`camab_cli.audit.simulated.keyword_logprobs`)."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        return [keyword_logprobs(request) for request in requests]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    k = 0
    while k < n and a[k] == b[k]:
        k += 1
    return k


def measure(token_lists: list[list[int]]) -> tuple[int, int, int]:
    """(total prompt tokens, reusable from the previous request, reusable from any earlier)."""
    total = sum(len(t) for t in token_lists)
    previous = sum(common_prefix(a, b) for a, b in itertools.pairwise(token_lists))
    any_earlier = sum(
        max(common_prefix(token_lists[j], token_lists[i]) for i in range(j))
        for j in range(1, len(token_lists))
    )
    return total, previous, any_earlier


SCORED_METHODS = ("camab", "loo", "contextcite", "kernelshap")


def documents_of(row: dict[str, Any]) -> list[str]:
    return [f"{title}: {''.join(sents).strip()}" for title, sents in row["context"]]


def scored_runs(rows: list[dict[str, Any]], budget: int, scorer: TransformersScorer) -> str:
    """Tokens computed by the default scorer / tokens requested, per method."""
    import camab_rag

    table = []
    for method in SCORED_METHODS:
        requested = computed = padding = calls = 0
        wall = 0.0
        for row in rows:
            scorer.clear_prefix_cache()
            recorder = Recording(scorer)
            before = (scorer.computed_tokens, scorer.padding_tokens)
            started = time.perf_counter()
            camab_rag.attribute(
                row["question"],
                documents_of(row),
                str(row["answer"]),
                recorder,
                budget=budget,
                method=method,
                settings=AttributionSettings(seed=0, statements=False),
            )
            wall += time.perf_counter() - started
            computed += scorer.computed_tokens - before[0]
            padding += scorer.padding_tokens - before[1]
            requested += recorder.requested_tokens
            calls += len(recorder.prompts)
        table.append(
            [
                method,
                calls,
                requested,
                computed,
                f"{computed / requested:.3f}x",
                f"{padding / requested:.3f}x",
                f"{wall:.0f}",
                f"{requested / wall:.0f}",
            ]
        )
        print(table[-1], flush=True)
    header = [
        "method",
        "requests",
        "tokens requested",
        "tokens computed",
        "computed / requested",
        "right pads / requested",
        "wall s",
        "requested tok/s",
    ]
    return markdown_table(header, table) + (
        f"\n\n{len(rows)} HotpotQA distractor dev example(s) from the top of the file, the "
        f"gold answer attributed, sentence granularity, default prompt, budget {budget} "
        "(leave-one-out: N + 1), seed 0. Scorer: `default_scorer()` as shipped (SmolLM2 "
        f"float32 on CPU, batch size {scorer.batch_size}, prefix reuse on, "
        f"{scorer.prefix_cache_mib:g} MiB of kept prefixes), "
        f"{torch_threads()} torch thread(s); its kept prefixes are dropped before each "
        "run. 'Tokens requested' = prompt + response tokens of every request; 'tokens "
        "computed' = real tokens the model ran (reused prefixes excluded); right pads are "
        "run but never read. Requested tok/s = tokens requested / wall time (the rate a "
        "scorer running every token would need to match)."
    )


def torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", type=int, default=3, help="runs scored by SmolLM2")
    parser.add_argument("--proxy", type=int, default=30, help="runs with the proxy reward")
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument(
        "--scored", type=int, default=0, help="examples run by the default scorer, per method"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    import camab_rag
    from camab_rag.scorers import default_scorer

    scorer = default_scorer(num_threads=args.threads)
    with DATA.open(encoding="utf-8") as handle:
        rows = [
            json.loads(line)
            for _, line in zip(range(max(args.real + args.proxy, args.scored)), handle)
        ]
    if args.scored:
        body = scored_runs(rows[: args.scored], args.budget, scorer)
        print(body)
        if not args.no_write:
            write_section(
                "prefix_reuse_scorer", "Tokens computed by the default scorer (HotpotQA)", body
            )
    if not args.real + args.proxy:
        return

    table = []
    for label, chosen, make in (
        ("SmolLM2 rewards", rows[: args.real], lambda: scorer),
        ("word-overlap proxy rewards", rows[args.real :], WordOverlap),
    ):
        if not chosen:
            continue
        totals = np.zeros(3)
        n_requests = 0
        started = time.perf_counter()
        for row in chosen:
            documents = documents_of(row)
            recorder = Recording(make())
            camab_rag.attribute(
                row["question"],
                documents,
                str(row["answer"]),
                recorder,
                budget=args.budget,
                method="camab",
                settings=AttributionSettings(seed=0, statements=False),
            )
            tokens = [scorer.encode_prompt(p) for p in recorder.prompts]  # type: ignore[arg-type]
            totals += measure(tokens)
            n_requests += len(tokens)
        total, previous, any_earlier = totals
        table.append(
            [
                label,
                len(chosen),
                n_requests,
                f"{total / n_requests:.0f}",
                f"{1 - previous / total:.1%}",
                f"{1 - any_earlier / total:.1%}",
            ]
        )
        print(label, table[-1], f"{time.perf_counter() - started:.0f}s", flush=True)

    header = [
        "rewards",
        "examples",
        "requests",
        "mean prompt tokens",
        "recomputed, reuse previous",
        "recomputed, reuse any earlier",
    ]
    body = markdown_table(header, table)
    body += (
        f"\n\nCAMAB, budget {args.budget}, sentence granularity, default prompt (system prompt, "
        "context, question), HotpotQA distractor dev rows from the top of the file, SmolLM2 "
        "tokenizer. 'Recomputed' = share of prompt tokens left after reusing the longest "
        "common token prefix."
    )
    print(body)
    if not args.no_write:
        write_section("prefix_reuse", "Prefix reuse over CAMAB runs (HotpotQA)", body)


if __name__ == "__main__":
    main()

"""Citation precision: does removing a cited source lower the cited sentence's likelihood?

For each HotpotQA distractor-dev question (yes/no questions skipped) the embedded model
answers twice, with four paragraphs each time, as in the groundedness calibration
(``benchmarks/bench_groundedness.py``):

* **with gold**: the two gold paragraphs plus two distractors;
* **gold removed**: four distractors (whatever the answer copies from them is still its
  source; nothing else should be cited).

Each answer is attributed by chunk (the integrations' setting; 16 calls enumerate every
subset of 4 documents) and cited with :func:`camab_rag.cite` under two rules: the old
default (``CitationRule(top_k=2, threshold=0.0, relative=0.25)``: any positive score
within a quarter of the sentence's best source) and the library's current default. Then,
for every answer sentence and every document, the sentence's mean token log-probability
is measured with the full context and with that document left out (5 more calls, most of
them cached prompt prefixes). A cited (sentence, source) pair is *precise* when leaving
the source out lowers the sentence's likelihood.

Free baselines beside them: citing every document, and citing the document that shares
the most words (4+ letters) with the sentence.

Per-example records go to ``benchmarks/results/citations/<model>.jsonl`` (kept in the
repository): an interrupted run resumes, and ``--replay`` rebuilds the report from them
without a model (the citation rules run on the stored attributions).

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/bench_citations.py --n 50
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import camab_rag
from benchmarks._report import ci_cell, markdown_table, write_section
from benchmarks.bench_groundedness import (
    answer_and_attribute,
    contains_gold,
    contexts,
    normalize,
)
from camab_rag.citations import CitationRule, cite
from camab_rag.render.support import SUPPORT_UNIT
from camab_rag.result import AttributionResult
from camab_rag.scorers.base import ScoreRequest
from camab_rag.statements import token_starts

RESULTS = Path(__file__).resolve().parent / "results" / "citations"
OLD_RULE = CitationRule(top_k=2, threshold=0.0, relative=0.25)
STRICTER = CitationRule(threshold=SUPPORT_UNIT)
"""The support scale's whole unit as the bar (for comparison with the default, half)."""
CONDITIONS = ("with_gold", "without_gold")
Pairs = list[tuple[int, int]]
"""(answer sentence index, document index) of each citation."""
MAX_NEW_TOKENS = 48
USER_TEMPLATE = "Context:\n{context}\n\nQuestion: {question}\nAnswer in one or two sentences."


def sentence_means(logprobs: Any, spans: list[tuple[int, int]]) -> list[float]:
    """The mean token log-probability of each answer sentence (tokens starting in it)."""
    starts = token_starts(logprobs)
    values = np.asarray(logprobs.logprobs, dtype=float)
    out = []
    for start, end in spans:
        inside = (starts >= start) & (starts < end)
        out.append(float(values[inside].mean()) if inside.any() else float("nan"))
    return out


def run_condition(
    scorer: Any, question: str, docs: list[dict[str, str]], budget: int, seed: int
) -> dict[str, Any]:
    builder, answer, result = answer_and_attribute(
        scorer,
        question,
        docs,
        budget,
        seed,
        user_template=USER_TEMPLATE,
        max_new_tokens=MAX_NEW_TOKENS,
    )
    n = builder.n_segments
    spans = [(s.start, s.end) for s in result.statements]
    masks = [np.ones(n, dtype=bool), np.zeros(n, dtype=bool)]
    for d in range(n):
        without = np.ones(n, dtype=bool)
        without[d] = False
        masks.append(without)
    scored = scorer.score([ScoreRequest(builder.build(m), answer) for m in masks])
    full, empty, *left_out = [sentence_means(r, spans) for r in scored]
    return {
        "answer": answer,
        "result": result.to_dict(),
        "full": full,
        "empty": empty,
        # drops[s][d]: how much leaving document d out lowers sentence s's likelihood
        "drops": [[full[s] - left_out[d][s] for d in range(n)] for s in range(len(spans))],
    }


def cited_pairs(record: dict[str, Any], docs: list[dict[str, str]], rule: CitationRule) -> Pairs:
    """(sentence index, document index) of every citation :func:`cite` makes."""
    result = AttributionResult.from_dict(record["result"])
    answer = cite(result, docs, rule=rule)
    return [
        (k, answer.source(number).doc_index)
        for k, sentence in enumerate(answer.sentences)
        for number in sentence.citations
    ]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) >= 4}


def lexical_pairs(record: dict[str, Any], docs: list[dict[str, str]]) -> Pairs:
    """The free baseline: each sentence cites the document sharing the most words with it."""
    pairs = []
    for k, statement in enumerate(record["result"]["statements"]):
        overlap = [len(_words(statement["text"]) & _words(d["text"])) for d in docs]
        if max(overlap) > 0:
            pairs.append((k, int(np.argmax(overlap))))
    return pairs


def every_pair(record: dict[str, Any], docs: list[dict[str, str]]) -> Pairs:
    return [(k, d) for k in range(len(record["drops"])) for d in range(len(docs))]


def evaluate(
    items: list[tuple[dict[str, Any], list[dict[str, str]]]], choose: Any
) -> dict[str, Any]:
    """Citations per sentence, sentences cited, and the share of precise pairs."""
    per_sentence: list[float] = []
    cited_any: list[float] = []
    precise: list[float] = []
    drops: list[float] = []
    for record, docs in items:
        pairs = choose(record, docs)
        n_sentences = len(record["drops"])
        for k in range(n_sentences):
            mine = [d for s, d in pairs if s == k]
            per_sentence.append(len(mine))
            cited_any.append(float(bool(mine)))
            for d in mine:
                drop = record["drops"][k][d]
                if np.isfinite(drop):
                    precise.append(float(drop > 0))
                    drops.append(drop)
    return {
        "sentences": len(per_sentence),
        "pairs": len(precise),
        "per_sentence": per_sentence,
        "cited_any": cited_any,
        "precise": precise,
        "drops": drops,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=50, help="questions to use")
    parser.add_argument("--budget", type=int, default=16)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--replay", action="store_true", help="report from the stored records")
    parser.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from camab_cli.evaluation.datasets import dataset_path

    cache = RESULTS / f"{args.model}.jsonl"
    cache.parent.mkdir(parents=True, exist_ok=True)
    config = {
        "model": args.model,
        "budget": args.budget,
        "seed": args.seed,
        "template": USER_TEMPLATE,
        "max_new_tokens": MAX_NEW_TOKENS,
    }
    done: dict[str, dict[str, Any]] = {}
    if cache.exists():
        for line in cache.read_text(encoding="utf-8").splitlines():
            stored = json.loads(line)
            if stored.get("config") == config:
                done[stored["id"]] = stored
    with dataset_path("hotpotqa").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    rows = [r for r in rows if normalize(r["answer"]) not in ("yes", "no")][: args.n]
    scorer = None
    started = time.perf_counter()
    for index, row in enumerate(rows):
        if args.replay or row["id"] in done:
            continue
        if scorer is None:
            scorer = camab_rag.TransformersScorer(args.model, num_threads=args.threads)
        with_gold, without_gold = contexts(row, args.seed)
        record: dict[str, Any] = {"id": row["id"], "config": config, "gold_answer": row["answer"]}
        for condition, docs in zip(CONDITIONS, (with_gold, without_gold)):
            record[condition] = run_condition(scorer, row["question"], docs, args.budget, args.seed)
        record["seconds"] = round(time.perf_counter() - started, 1)
        done[row["id"]] = record
        with cache.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        print(f"[{index + 1}/{len(rows)}] {record['seconds']:6.0f}s {row['id']}", flush=True)
    records = [(done[r["id"]], r) for r in rows if r["id"] in done]
    body = report(records, args)
    print(body)
    if not args.no_write:
        write_section("citations", "Citation precision (HotpotQA, SmolLM2)", body)


def report(records: list[tuple[dict[str, Any], dict[str, Any]]], args: argparse.Namespace) -> str:
    rules = [
        (
            "old default: score > 0, within 1/4 of the best",
            lambda r, d: cited_pairs(r, d, OLD_RULE),
        ),
        (
            f"current default ({_rule_text(CitationRule())})",
            lambda r, d: cited_pairs(r, d, CitationRule()),
        ),
        (
            f"stricter: {_rule_text(STRICTER)}",
            lambda r, d: cited_pairs(r, d, STRICTER),
        ),
        ("baseline: every document", every_pair),
        ("baseline: most shared words", lexical_pairs),
    ]
    lines = [
        f"{len(records)} HotpotQA distractor-dev questions (yes/no skipped), model "
        f"`{args.model}`, one torch thread, 4 paragraphs per context, chunk granularity, "
        f"budget {args.budget} (every subset: exact scores), answers of up to "
        f"{MAX_NEW_TOKENS} tokens in one or two sentences. A cited (sentence, source) pair "
        "is precise when leaving the source out of the context lowers the sentence's mean "
        "token log-probability. "
        "Mean ± 95% CI over pairs (precision) or sentences (citations).",
        "",
        f"Records: `benchmarks/results/citations/{args.model}.jsonl`, written by the run "
        f"(`OMP_NUM_THREADS=1 CAMAB_BENCH_DATA=<data> .venv/bin/python "
        f"benchmarks/bench_citations.py --n {args.n}`, one torch thread); `--replay` "
        "rebuilds these tables from them with the current citation rule, without a model.",
        "",
    ]
    groups = {
        "with gold": [(r["with_gold"], _docs(row, args, 0)) for r, row in records],
        "gold removed": [(r["without_gold"], _docs(row, args, 1)) for r, row in records],
        "with gold, correct answers": [
            (r["with_gold"], _docs(row, args, 0))
            for r, row in records
            if contains_gold(r["with_gold"]["answer"], r["gold_answer"])
        ],
    }
    header = [
        "rule",
        "precision",
        "removal lowers it by (nats/token)",
        "citations / sentence",
        "sentences cited",
        "pairs",
    ]
    for label, items in groups.items():
        n_sentences = sum(len(record["drops"]) for record, _ in items)
        lines += [f"**{label}** ({len(items)} answers, {n_sentences} sentences)", ""]
        rows = []
        precision: dict[str, float] = {}
        for name, choose in rules:
            figures = evaluate(items, choose)
            precision[name] = float(np.mean(figures["precise"])) if figures["precise"] else 0.0
            rows.append(
                [
                    name,
                    ci_cell(figures["precise"]),
                    ci_cell(figures["drops"]),
                    ci_cell(figures["per_sentence"]),
                    ci_cell(figures["cited_any"]),
                    figures["pairs"],
                ]
            )
        lines += [markdown_table(header, rows), ""]
        current, lexical = precision[rules[1][0]], precision["baseline: most shared words"]
        verdict = "above" if current > lexical else "not above"
        lines += [
            f"Current default against the free word-overlap baseline: precision {current:.3f} "
            f"vs {lexical:.3f} ({verdict} it; see the confidence intervals).",
            "",
        ]
    return "\n".join(lines)


def _rule_text(rule: CitationRule) -> str:
    relative = f", within {rule.relative:g} of the best" if rule.relative else ""
    return f"support >= {rule.threshold:.3f} nats/token{relative}, top {rule.top_k}"


def _docs(row: dict[str, Any], args: argparse.Namespace, which: int) -> list[dict[str, str]]:
    return contexts(row, args.seed)[which]


if __name__ == "__main__":
    main()

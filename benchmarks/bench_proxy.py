"""Can a small proxy model attribute a larger model's answer? Agreement of SmolLM2 with Qwen;
what and how: benchmarks/results/proxy/README.md."""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from benchmarks import argument_parser
from benchmarks._report import ci_cell as cell
from benchmarks._report import columns, markdown_table, publish
from benchmarks.data import Example, append_record, examples_by_id, make_builder, masks_from_bits
from benchmarks.data import read_jsonl as read_results
from benchmarks.stats import gold_auroc, mean_ci
from camab_rag import AttributionSettings
from camab_rag.attributor import Attributor
from camab_rag.methods import ContextCite, KernelShap, LeaveOneOut
from camab_rag.rewards import mean_logprob
from camab_rag.scorers.base import BaseScorer, ResponseLogprobs, ScoreRequest, parallel_requests

RESULTS = Path(__file__).resolve().parent / "results"
OUT = RESULTS / "proxy"
PROXY = "smollm2"
BUDGET = 40
DESIGNS = ("loo", "contextcite", "kernelshap")
FloatArray = np.ndarray[Any, np.dtype[np.float64]]


def design_masks(record: dict[str, Any], design: str) -> list[str]:
    """The subsets a stored design queried (leave-one-out: all; others: the first ``BUDGET``)."""
    masks = list(record["methods"][design]["masks"])
    return masks if design == "loo" else masks[:BUDGET]


class MemoScorer(BaseScorer):
    """Serves a request seen before from memory, so one example's designs share model time."""

    def __init__(self, scorer: Any) -> None:
        self.scorer = scorer
        self.memory: dict[str, ResponseLogprobs] = {}

    @property
    def parallel_requests(self) -> int:
        return parallel_requests(self.scorer)

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        keys = [json.dumps([str(r.prompt), r.response], default=str) for r in requests]
        todo = {k: r for k, r in zip(keys, requests) if k not in self.memory}
        if todo:
            self.memory.update(zip(todo, self.scorer.score(list(todo.values()))))
        return [self.memory[k] for k in keys]


def _auto_line(scorer: BaseScorer, record: dict[str, Any], example: Example) -> dict[str, Any]:
    """``auto`` at :data:`BUDGET` run by the proxy alone, as a user of the default gets it,
    with the day it was priced (``--redo-auto`` re-prices lines priced before a day)."""
    builder = make_builder(example)
    auto = Attributor(
        scorer,
        budget=BUDGET,
        method="auto",
        granularity=example.granularity(),
        settings=AttributionSettings(seed=record["seed"], statements=False),
        prompt_builder=lambda *_a, fixed=builder: fixed,
        keep=0,
    ).run(example.question, example.documents, record["response"])
    return {
        "scores": [round(float(s), 6) for s in auto.scores],
        "cost": auto.n_queries,
        "priced": time.strftime("%Y-%m-%d", time.gmtime()),
    }


def _redo_auto(
    args: argparse.Namespace,
    proxy: Any,
    records: list[dict[str, Any]],
    examples: dict[str, Example],
) -> None:
    """Re-price the ``auto`` of the stored lines of ``records`` priced before
    ``args.redo_auto`` (a day, YYYY-MM-DD; unrecorded: before any), in place and in order,
    the file rewritten after each line so a kill loses one line at most."""
    out = OUT / f"{args.results}.{PROXY}.jsonl"
    lines = read_results(out)
    chosen = {r["id"]: r for r in records}
    for line in lines:
        record = chosen.get(line["id"])
        if record is None or line["auto"].get("priced", "") >= args.redo_auto:
            continue
        line["auto"] = _auto_line(MemoScorer(proxy), record, examples[line["id"]])
        staged = out.with_suffix(".jsonl.part")
        staged.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        staged.replace(out)
        print(f"{line['id']}: auto re-priced, {line['auto']['cost']} calls", flush=True)


def run(args: argparse.Namespace) -> None:
    from camab_rag.scorers import TransformersScorer

    records = [
        r for r in read_results(RESULTS / f"{args.results}.jsonl") if r.get("status") == "ok"
    ][args.offset : args.offset + args.n]
    examples = examples_by_id(records)
    out = OUT / f"{args.results}.{PROXY}.jsonl"
    OUT.mkdir(parents=True, exist_ok=True)
    done = {line["id"] for line in read_results(out)}
    proxy = TransformersScorer(PROXY, batch_size=1, num_threads=args.threads)
    if args.redo_auto:
        _redo_auto(args, proxy, records, examples)
        return
    for record in records:
        if record["id"] in done:
            continue
        example = examples[record["id"]]
        builder = make_builder(example)
        response = record["response"]
        scorer = MemoScorer(proxy)
        wanted = sorted({m for d in DESIGNS for m in design_masks(record, d)}, reverse=True)
        requests = [ScoreRequest(builder.build(m), response) for m in masks_from_bits(wanted)]
        scored = scorer.score(requests)
        rewards = {bits: mean_logprob(s.logprobs) for bits, s in zip(wanted, scored)}
        everything = builder.build(np.ones(example.n_segments, bool))
        full = scorer.score([ScoreRequest(everything, response)])
        line = {
            "id": record["id"],
            "proxy": PROXY,
            "full_logprob": round(mean_logprob(full[0].logprobs), 6),
            "response_tokens": int(full[0].logprobs.size),
            "rewards": {bits: round(v, 6) for bits, v in rewards.items()},
            "auto": _auto_line(scorer, record, example),
        }
        append_record(out, line)
        print(
            f"{record['id']}: {len(wanted)} subsets, auto {line['auto']['cost']} calls", flush=True
        )


# ---------------------------------------------------------------------- report
def fit(design: str, bits: Sequence[str], rewards: Sequence[float], alpha: float) -> FloatArray:
    """A fixed design's scores from its masks and rewards (the method's own estimator)."""
    method = {"loo": LeaveOneOut(), "contextcite": ContextCite(alpha=alpha)}.get(design)
    values = np.asarray(rewards, dtype=float)
    return (method or KernelShap()).fit(masks_from_bits(list(bits)), values)


def document_scores(example: Example, scores: FloatArray) -> FloatArray:
    """Each document's score: the sum of its sentences' scores."""
    bounds = np.cumsum([0] + [len(s) for s in example.spans])
    return np.asarray([scores[a:b].sum() for a, b in itertools.pairwise(bounds)])


def agreement(own: FloatArray, proxy: FloatArray, gold: Sequence[int]) -> dict[str, float]:
    """How ``proxy`` (compared) agrees with ``own`` (reference), and each one's gold AUROC."""
    top3_own = set(np.argsort(-own, kind="stable")[:3].tolist())
    top3_proxy = set(np.argsort(-proxy, kind="stable")[:3].tolist())
    constant = np.ptp(own) == 0 or np.ptp(proxy) == 0
    rho = 0.0 if constant else spearmanr(own, proxy).statistic
    return {
        "top1": float(np.argmax(own) == np.argmax(proxy)),
        "top3": len(top3_own & top3_proxy) / 3,
        "spearman": float(rho) if np.isfinite(rho) else 0.0,
        "auroc_reference": gold_auroc(own, gold),
        "auroc_compared": gold_auroc(proxy, gold),
    }


def compare(record: dict[str, Any], line: dict[str, Any], example: Example) -> dict[str, Any]:
    """Sentence and document agreement of each (reference, compared) pair: per design the
    model's own against the proxy's on the same subsets, the proxy's ``auto`` against the
    model's designs, and two designs of the model (the noise floor)."""
    alpha = float(record["methods"]["contextcite"]["method_config"]["alpha"])
    gold = example.gold or []
    ends = np.cumsum([len(s) for s in example.spans])  # segments go document by document
    gold_docs = sorted({int(np.searchsorted(ends, g, side="right")) for g in gold})
    own: dict[str, FloatArray] = {}
    pairs: dict[str, tuple[FloatArray, FloatArray]] = {}
    for design in DESIGNS:
        bits = design_masks(record, design)
        own[design] = fit(design, bits, record["methods"][design]["rewards"][: len(bits)], alpha)
        proxy = fit(design, bits, [line["rewards"][b] for b in bits], alpha)
        pairs[f"{design}: Qwen vs proxy"] = (own[design], proxy)
    auto = np.asarray(line["auto"]["scores"], dtype=float)
    pairs["Qwen contextcite vs proxy auto"] = (own["contextcite"], auto)
    pairs["Qwen loo vs proxy auto"] = (own["loo"], auto)
    pairs["no proxy: Qwen loo vs Qwen contextcite"] = (own["loo"], own["contextcite"])
    return {
        label: {
            "sentence": agreement(reference, compared, gold),
            "document": agreement(
                document_scores(example, reference), document_scores(example, compared), gold_docs
            ),
        }
        for label, (reference, compared) in pairs.items()
    }


def reading(compared: list[dict[str, Any]]) -> str:
    """What the figures say about trusting a proxy, written from the figures."""

    def mean(label: str, level: str, key: str) -> float:
        return float(np.mean([c[label][level][key] for c in compared]))

    same = "contextcite: Qwen vs proxy"
    floor = "no proxy: Qwen loo vs Qwen contextcite"
    tracks = mean(same, "sentence", "spearman") > mean(floor, "sentence", "spearman")
    verdict = (
        "So at 40 calls most of the disagreement a user sees comes from the attribution "
        "method's own sampling noise, not from the proxy: a proxy is about as trustworthy "
        "as the attribution itself"
        + (
            ", at the document level more than the sentence level. "
            if mean(same, "document", "spearman") > mean(same, "sentence", "spearman")
            else ". "
        )
        if tracks
        else "So the proxy disagrees with the model more than the model's own designs do: "
        "treat its citations as a hint, not as the model's attribution. "
    )
    return (
        "Reading. On the same subsets the proxy's ContextCite-style scores follow Qwen's "
        f"own with Spearman {mean(same, 'sentence', 'spearman'):.2f} over sentences and "
        f"{mean(same, 'document', 'spearman'):.2f} over documents, and name Qwen's top "
        f"document in {mean(same, 'document', 'top1'):.0%} of the examples; two designs of "
        f"Qwen itself agree {mean(floor, 'sentence', 'spearman'):.2f} (sentences) and "
        f"{mean(floor, 'document', 'spearman'):.2f} (documents). "
        + verdict
        + "Leave-one-out by proxy agrees "
        f"{mean('loo: Qwen vs proxy', 'sentence', 'spearman'):.2f} over sentences: removing "
        "one sentence of many moves the answer's log-prob too little for two models to "
        "rank sentences the same way, so do not pair a proxy with leave-one-out at "
        "sentence level. "
        f"With {len(compared)} examples the intervals are wide: these are directions, "
        "not guarantees."
    )


def report(args: argparse.Namespace) -> None:
    stored = read_results(RESULTS / f"{args.results}.jsonl")
    records = {r["id"]: r for r in stored if r.get("status") == "ok"}
    lines = [x for x in read_results(OUT / f"{args.results}.{PROXY}.jsonl") if x["id"] in records]
    if not lines:
        raise SystemExit("report: no proxy runs yet (run `bench_proxy.py run` first)")
    chosen = [records[x["id"]] for x in lines]
    examples = examples_by_id(chosen)
    compared = [compare(records[x["id"]], x, examples[x["id"]]) for x in lines]

    rows = []
    for design in compared[0]:
        for level in ("sentence", "document"):
            values = [c[design][level] for c in compared]
            keys = ("top1", "top3", "spearman", "auroc_reference", "auroc_compared")
            rows.append([design, level, len(values), *(cell([v[k] for v in values]) for k in keys)])
    header = "design|level|examples|top-1 agreement|top-3 overlap|Spearman|gold AUROC (reference)"
    table = markdown_table(columns(header + "|gold AUROC (compared)"), rows)

    n_sentences = [e.n_segments for e in examples.values()]
    n_documents = [len(e.documents) for e in examples.values()]
    sizes = (
        f"{min(n_sentences)}-{max(n_sentences)} sentences in "
        f"{min(n_documents)}-{max(n_documents)} paragraphs"
    )
    correct = [c for c, x in zip(compared, lines) if records[x["id"]].get("answer_correct")]
    cc = [c["contextcite: Qwen vs proxy"]["sentence"] for c in compared]
    gap = [row["auroc_compared"] - row["auroc_reference"] for row in cc]
    gap_mean, gap_half, _ = mean_ci(gap)
    body = (
        f"{len(lines)} HotpotQA dev examples; the answers are Qwen2.5-0.5B's (stored run "
        f"`{args.results}`), attributed at sentence level ({sizes}) by "
        f"Qwen itself and by SmolLM2-135M as proxy on the same subsets (leave-one-out: N+1 "
        f"calls; ContextCite-style and KernelSHAP: the first {BUDGET} stored subsets). "
        "Document scores are the sums of their sentences'. Top-3 overlap: shared items of "
        "the two top-3 lists / 3. Mean ± 95% CI over the examples. Rows 'Qwen ... vs "
        f"proxy auto' are what a user of the default gets: `auto` at s={BUDGET} run by the "
        "proxy alone, against Qwen's own attribution. The last row compares two designs of "
        "Qwen itself, no proxy: the agreement two sound attributions of the same model "
        "reach, against which the proxy's agreement can be read.\n\n"
        + table
        + f"\n\nProxy minus own gold AUROC (ContextCite-style, sentences): {gap_mean:+.3f} ± "
        f"{gap_half:.3f}. Examples Qwen answered correctly: {len(correct)}.\n\n" + reading(compared)
    )
    top1 = cell([row["top1"] for row in cc])
    rows = [
        ["proxy's top-1 = the model's (ContextCite, sentences)", top1, "not run", "–"],
        ["proxy − own gold AUROC", f"{gap_mean:+.3f} ± {gap_half:.3f}", "not run", "–"],
    ]
    title = "A proxy scorer for closed chat APIs: agreement with the model"
    publish("proxy", title, body, rows, not args.no_write)


def main() -> None:
    parser = argument_parser(__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--results", default="hotpotqa_qwen2.5-0.5b")
    run_parser.add_argument("--offset", type=int, default=0)
    run_parser.add_argument("--n", type=int, default=1000)
    run_parser.add_argument("--threads", type=int, default=1)
    run_parser.add_argument(
        "--redo-auto",
        metavar="DAY",
        default="",
        help="re-price the stored lines' auto priced before DAY (YYYY-MM-DD), in place",
    )
    report_parser = sub.add_parser("report")
    report_parser.add_argument("--results", default="hotpotqa_qwen2.5-0.5b")
    report_parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    run(args) if args.command == "run" else report(args)

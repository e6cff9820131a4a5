"""The groundedness gate on human-labelled answers nobody here wrote (FRANK, HaluEval).

``run`` stores each answer's token log-probs from the gate's two anchor calls (resumable),
``run-multi`` the blind multi-document attributions, ``report`` replays the tables
(:mod:`benchmarks.gate_report`), ``build-set`` writes the shipped calibration set."""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from benchmarks.data import read_jsonl
from benchmarks.gate_sets import (
    SETS,
    Item,
    by_context,
    frank_items,
    halueval_dev_questions,
    halueval_items,
    load_items,
    written_items,
)
from camab_rag.groundedness.anchors import anchor_prompts, default_builder, support_of

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "groundedness"
SHIPPED = ROOT / "camab_rag" / "data" / "calibration.jsonl"
VERSION = 1


def store_path(set_name: str, model: str) -> Path:
    return RESULTS / f"{set_name}_{model}.jsonl"


def _rounded(values: Any) -> list[float]:
    return [round(float(v), 4) for v in values]


def score_group(scorer: Any, items: list[Item]) -> list[dict[str, Any]]:
    """Both anchors of every answer of one context, in one call."""
    anchors = [
        anchor_prompts(default_builder(i.question, i.context, history=i.history or None))
        for i in items
    ]
    requests = [r for item, a in zip(items, anchors) for r in a.requests(item.answer)]
    started = time.perf_counter()
    results = scorer.score(requests)
    gate_seconds = (time.perf_counter() - started) / len(items)
    rows = []
    for k, item in enumerate(items):
        prompts = anchors[k]  # earlier chat turns count as context, as in assess_answer
        support = support_of(item.answer, results[2 * k : 2 * k + 2], prompts)
        data = support.to_dict()
        rows.append(
            {
                **item.meta(),
                "version": VERSION,
                "answer": item.answer,
                "support": {**data, **{k: _rounded(data[k]) for k in ("full", "empty")}},
                "prompt_tokens": int(results[2 * k].prompt_tokens),
                "seconds_gate": round(gate_seconds, 3),
            }
        )
    return rows


def run(args: argparse.Namespace) -> None:
    import camab_rag

    path = store_path(args.set, args.model)
    path.parent.mkdir(parents=True, exist_ok=True)
    done = {r["id"] for r in read_jsonl(path) if r.get("version") == VERSION}
    items = load_items(args.set)
    items = [i for i in items if args.group in (None, i.group) and args.split in (None, i.split)]
    groups = [g for g in by_context(items) if any(i.id not in done for i in g)]
    groups = groups[: args.limit] if args.limit is not None else groups
    print(f"{args.set} / {args.model}: {len(groups)} contexts to score", flush=True)
    if not groups:
        return
    scorer = camab_rag.TransformersScorer(args.model, num_threads=args.threads)
    started = time.perf_counter()
    for index, group in enumerate(groups):
        todo = [i for i in group if i.id not in done]
        rows = score_group(scorer, todo)
        with path.open("a", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row, separators=(",", ":")) + "\n" for row in rows)
        print(
            f"[{index + 1}/{len(groups)}] {time.perf_counter() - started:7.0f}s "
            f"{todo[0].context_key} {len(todo)} answers",
            flush=True,
        )


HALUEVAL_QUESTIONS = 20
FRANK_ARTICLES = 10
SEED = 48
REPLAY_MODELS = ("smollm2", "qwen2.5-0.5b")


def build_set() -> list[dict[str, Any]]:
    """The shipped calibration set's rows (deterministic, choice rows only): seeded HaluEval
    dev questions with their three answers; every CNN/DM summary of the shortest FRANK
    ``valid`` articles stored for every replay model; the hand-written calibration cases."""

    def row(item: Any, kind: str, source: str) -> dict[str, Any]:
        return {
            "question": item.question,
            "context": item.context,
            "answer": item.answer,
            "supported": not item.unsupported,
            "kind": kind,
            "source": source,
            "source_id": item.id,
        }

    dev = sorted(halueval_dev_questions())
    by_question: dict[str, list[Any]] = {}
    for item in halueval_items():
        if item.context_key in dev:
            by_question.setdefault(item.context_key, []).append(item)
    ordered = [q for q in dev if len(by_question.get(q, [])) == 3]
    chosen = random.Random(SEED).sample(ordered, HALUEVAL_QUESTIONS)
    rows = [row(i, "qa", "HaluEval QA") for q in chosen for i in by_question[q]]
    stored = [{r["id"] for r in read_jsonl(store_path("frank", m))} for m in REPLAY_MODELS]
    articles: dict[str, list[Any]] = {}
    for item in frank_items():
        if item.split == "valid" and item.group == "cnndm":
            articles.setdefault(item.context_key, []).append(item)
    complete = [k for k, its in articles.items() if all(i.id in s for i in its for s in stored)]
    for key in sorted(complete, key=lambda k: (len(articles[k][0].context), k))[:FRANK_ARTICLES]:
        rows += [row(i, "summary", "FRANK CNN/DM") for i in articles[key]]
    written = [i for i in written_items() if i.group == "calibration"]
    return rows + [row(i, "qa", "written for camab-rag") for i in written]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    runner = commands.add_parser("run", help="score a set with one model (resumable)")
    runner.add_argument("--set", choices=SETS, required=True)
    runner.add_argument("--model", default="smollm2")
    runner.add_argument("--threads", type=int, default=1)
    runner.add_argument("--group", default=None, help="only this group (e.g. cnndm)")
    runner.add_argument("--split", default=None, help="only this split (FRANK: valid, test)")
    runner.add_argument("--limit", type=int, default=None, help="contexts to score (a trial)")
    multi = commands.add_parser("run-multi", help="attribute the blind multi-document cases")
    multi.add_argument("--model", default="smollm2")
    multi.add_argument("--threads", type=int, default=1)
    reporter = commands.add_parser("report", help="the tables, from the stored rows only")
    reporter.add_argument("--no-write", action="store_true", help="print only")
    commands.add_parser("build-set", help=f"write {SHIPPED.relative_to(ROOT)}")
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    elif args.command == "run-multi":
        from benchmarks.gate_fresh_report import run_multi

        run_multi(args.model, args.threads)
    elif args.command == "build-set":
        rows = build_set()
        SHIPPED.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
        kinds = {k: sum(r["kind"] == k for r in rows) for k in ("qa", "summary")}
        print(f"{SHIPPED.relative_to(ROOT)}: {len(rows)} answers {kinds}")
    else:
        from benchmarks.gate_report import report

        report(write=not args.no_write)

"""The groundedness gate on human-labelled answers nobody here wrote (FRANK, HaluEval).

``run`` scores every answer of a set (:mod:`benchmarks.gate_sets`) with one model and
stores, per answer, every per-token log-prob the figures need, so ``report`` replays
them with no model call:

* the gate's two anchor calls (:func:`camab_rag.groundedness.anchors.anchor_prompts` on the
  default template: the full context and no context), aligned per token
  (:class:`camab_rag.token_support.TokenSupport`);
* a same-model LLM-as-judge the RAGAS/TruLens way: the same template asks "is every claim
  in the statement supported by the context? Answer yes or no", read from the log-probs
  of the replies ``Yes``/``yes``/``No``/``no`` (one prompt; the four replies share it).

Answers of one context are scored together, so the prefix cache computes the context once
(the judge's prompt shares it too). Rows are appended per context and skipped when
already stored: an interrupted run resumes.

    nice -n 10 .venv/bin/python benchmarks/bench_gate.py run --set frank --model smollm2
    .venv/bin/python benchmarks/bench_gate.py report
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.gate_sets import SETS, Item, by_context, load_items  # noqa: E402
from camab_rag.groundedness.anchors import anchor_prompts, default_builder, support_of  # noqa: E402
from camab_rag.scorers.base import ScoreRequest  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "groundedness"
VERSION = 1
JUDGE_QUESTION = (
    "Is every claim in the following statement supported by the context? Answer yes or no."
    "\nStatement: {answer}"
)
JUDGE_REPLIES = ("Yes", "yes", "No", "no")


def store_path(set_name: str, model: str) -> Path:
    return RESULTS / f"{set_name}_{model}.jsonl"


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The stored rows (a line cut short by an interrupted run is skipped: it is scored
    again)."""
    if not path.exists():
        return []
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return rows


def _rounded(values: Any) -> list[float]:
    return [round(float(v), 4) for v in values]


def score_group(scorer: Any, items: list[Item]) -> list[dict[str, Any]]:
    """Both anchors of every answer of one context (one call), then the judge (one call)."""
    anchors = [
        anchor_prompts(default_builder(i.question, i.context, history=i.history or None))
        for i in items
    ]
    requests = [r for item, a in zip(items, anchors) for r in a.requests(item.answer)]
    started = time.perf_counter()
    results = scorer.score(requests)
    gate_seconds = (time.perf_counter() - started) / len(items)
    judge_requests = []
    for item in items:
        builder = default_builder(
            JUDGE_QUESTION.format(answer=item.answer), item.context, history=item.history or None
        )
        prompt = anchor_prompts(builder).full
        judge_requests += [ScoreRequest(prompt, reply) for reply in JUDGE_REPLIES]
    started = time.perf_counter()
    judged = scorer.score(judge_requests)
    judge_seconds = (time.perf_counter() - started) / len(items)
    rows = []
    for k, item in enumerate(items):
        prompts = anchors[k]  # earlier chat turns count as context, as in assess_answer
        support = support_of(
            item.answer, results[2 * k : 2 * k + 2], prompts.earlier_turns, prompts.conversation
        )
        data = support.to_dict()
        replies = judged[len(JUDGE_REPLIES) * k : len(JUDGE_REPLIES) * (k + 1)]
        rows.append(
            {
                **item.meta(),
                "version": VERSION,
                "answer": item.answer,
                "support": {
                    **data,
                    "full": _rounded(data["full"]),
                    "empty": _rounded(data["empty"]),
                },
                "judge": {
                    reply: round(float(r.logprobs.sum()), 4)
                    for reply, r in zip(JUDGE_REPLIES, replies)
                },
                "prompt_tokens": int(results[2 * k].prompt_tokens),
                "seconds_gate": round(gate_seconds, 3),
                "seconds_judge": round(judge_seconds, 3),
            }
        )
    return rows


def run(args: argparse.Namespace) -> None:
    import camab_rag

    path = store_path(args.set, args.model)
    path.parent.mkdir(parents=True, exist_ok=True)
    done = {r["id"] for r in read_rows(path) if r.get("version") == VERSION}
    items = [
        i
        for i in load_items(args.set)
        if args.group in (None, i.group) and args.split in (None, i.split)
    ]
    groups = [g for g in by_context(items) if any(i.id not in done for i in g)]
    if args.limit is not None:
        groups = groups[: args.limit]
    print(f"{args.set} / {args.model}: {len(groups)} contexts to score", flush=True)
    if not groups:
        return
    scorer = camab_rag.TransformersScorer(args.model, num_threads=args.threads)
    started = time.perf_counter()
    for index, group in enumerate(groups):
        todo = [i for i in group if i.id not in done]
        rows = score_group(scorer, todo)
        with path.open("a", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, separators=(",", ":")) + "\n")
        print(
            f"[{index + 1}/{len(groups)}] {time.perf_counter() - started:7.0f}s "
            f"{todo[0].context_key} {len(todo)} answers",
            flush=True,
        )


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
    reporter = commands.add_parser("report", help="the tables, from the stored rows only")
    reporter.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    else:
        from benchmarks.gate_report import report

        report(write=not args.no_write)


if __name__ == "__main__":
    main()

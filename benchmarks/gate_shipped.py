"""Build the labelled calibration set that ships with the library.

``camab_rag/data/calibration.jsonl`` is what ``calibrate(scorer)`` fits on when the user
has no labels. Its rows come only from rows the benchmark chooses on and never reports
(so the reported figures stay held out):

* HaluEval QA: :data:`HALUEVAL_QUESTIONS` questions drawn (seeded, by position) from the
  choice half (:func:`benchmarks.gate_sets.halueval_dev_questions`), each with its right
  answer and its two hallucinated ones (``kind`` ``qa``);
* FRANK: every CNN/DM summary of the :data:`FRANK_ARTICLES` shortest articles of FRANK's
  ``valid`` split (short articles keep the one-call calibration to minutes on CPU) whose
  summaries every benchmark model has stored rows for, so ``calibrate`` can be replayed
  (``kind`` ``summary``);
* the hand-written cases of :data:`benchmarks.gate_written.CALIBRATION` (``kind`` ``qa``).

    .venv/bin/python benchmarks/gate_shipped.py
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_gate import read_rows, store_path  # noqa: E402
from benchmarks.gate_sets import (  # noqa: E402
    frank_items,
    halueval_dev_questions,
    halueval_items,
    written_items,
)

SHIPPED = ROOT / "camab_rag" / "data" / "calibration.jsonl"
HALUEVAL_QUESTIONS = 20
FRANK_ARTICLES = 10
SEED = 48
REPLAY_MODELS = ("smollm2", "qwen2.5-0.5b")


def _row(item: Any, kind: str, source: str) -> dict[str, Any]:
    return {
        "question": item.question,
        "context": item.context,
        "answer": item.answer,
        "supported": not item.unsupported,
        "kind": kind,
        "source": source,
        "source_id": item.id,
    }


def build() -> list[dict[str, Any]]:
    """The rows of the shipped set (deterministic)."""
    dev = sorted(halueval_dev_questions())
    by_question: dict[str, list[Any]] = {}
    for item in halueval_items():
        if item.context_key in dev:
            by_question.setdefault(item.context_key, []).append(item)
    ordered = [q for q in dev if len(by_question.get(q, [])) == 3]
    chosen = random.Random(SEED).sample(ordered, HALUEVAL_QUESTIONS)
    rows = [_row(i, "qa", "HaluEval QA") for q in chosen for i in by_question[q]]

    stored = [{r["id"] for r in read_rows(store_path("frank", m))} for m in REPLAY_MODELS]
    articles: dict[str, list[Any]] = {}
    for item in frank_items():
        if item.split == "valid" and item.group == "cnndm":
            articles.setdefault(item.context_key, []).append(item)
    complete = [
        key for key, items in articles.items() if all(i.id in ids for i in items for ids in stored)
    ]
    shortest = sorted(complete, key=lambda k: (len(articles[k][0].context), k))
    for key in shortest[:FRANK_ARTICLES]:
        rows += [_row(i, "summary", "FRANK CNN/DM") for i in articles[key]]

    rows += [
        _row(i, "qa", "written for camab-rag") for i in written_items() if i.group == "calibration"
    ]
    return rows


def main() -> None:
    rows = build()
    with SHIPPED.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    kinds = {k: sum(r["kind"] == k for r in rows) for k in ("qa", "summary")}
    print(f"{SHIPPED.relative_to(ROOT)}: {len(rows)} answers {kinds}")


if __name__ == "__main__":
    main()

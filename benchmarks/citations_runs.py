"""The model runs of the HotpotQA citation benchmark: one default attribution per question.

For each HotpotQA distractor-dev question (yes/no answers skipped), the answer
``"The answer is X."`` (``X`` the gold answer) is attributed with the library's defaults
(``camab_rag.attribute``: ``method="auto"``, sentence granularity, the default budget) over
all ten paragraphs of the row, two of them gold (the titles of ``supporting_facts``).
Each record keeps the documents, the gold paragraphs, the attribution (masks, rewards,
scores, statements, conflicts) and every scored subset's token log-probabilities, so
:mod:`benchmarks.bench_citations` replays any citation rule without a model.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import camab_rag
import camab_rag.text_attribution as engine
from benchmarks.data import normalize_answer as normalize

RESULTS = Path(__file__).resolve().parent / "results" / "citations"


SKIP = 50
"""Questions left out at the start of the file: the first 50 (non yes/no) are the dev rows
the citation rule was chosen on (``results/citations/smollm2.jsonl``, four paragraphs)."""


def hotpot_cases(path: Path, n: int, skip: int = SKIP) -> list[dict[str, Any]]:
    """``n`` questions whose answer is not yes/no, after the first ``skip`` such, with their
    ten paragraphs and the indices of the gold ones."""
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    cases: list[dict[str, Any]] = []
    rows = [row for row in rows if normalize(row["answer"]) not in ("yes", "no")][skip:]
    for row in rows:
        gold_titles = {title for title, _ in row["supporting_facts"]}
        docs = [
            {"title": t, "text": " ".join(s.strip() for s in lines)} for t, lines in row["context"]
        ]
        cases.append(
            {
                "id": row["id"],
                "question": row["question"],
                "gold_answer": row["answer"].strip(),
                "response": f"The answer is {row['answer'].strip()}.",
                "docs": docs,
                "gold": [i for i, d in enumerate(docs) if d["title"] in gold_titles],
            }
        )
        if len(cases) == n:
            break
    return cases


def attribute_case(scorer: Any, case: dict[str, Any]) -> dict[str, Any]:
    """The default attribution of one case, with the token log-probs of every scored subset
    (read through the attribution's conflict step, so the run is the library's own)."""
    kept: dict[str, Any] = {}
    original = getattr(engine, "find_conflicts")  # noqa: B009 (patched below)

    def spy(method: Any, source: Any, masks: Any, *args: Any, **kwargs: Any) -> Any:
        rows = [source.logprobs(m) for m in masks]
        kept["logprobs"] = [
            {
                "tokens": list(r.tokens),
                "offsets": [int(o) for o in r.token_offsets],
                "logprobs": [float(v) for v in r.logprobs],
            }
            for r in rows
        ]
        return original(method, source, masks, *args, **kwargs)

    setattr(engine, "find_conflicts", spy)  # noqa: B010 (a benchmark's private hook)
    started = time.perf_counter()
    try:
        result = camab_rag.attribute(case["question"], case["docs"], case["response"], scorer)
    finally:
        setattr(engine, "find_conflicts", original)  # noqa: B010
    return {
        **case,
        "result": result.to_dict(),
        "logprobs": kept.get("logprobs", []),
        "seconds": round(time.perf_counter() - started, 1),
    }


def run(path: Path, n: int, model: str, threads: int) -> Path:
    """Attribute the first ``n`` cases not yet stored in
    ``results/citations/<model>_hotpotqa.jsonl``."""
    out = RESULTS / f"{model}_hotpotqa.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        done = {json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()}
    scorer = None
    cases = hotpot_cases(path, n)
    for index, case in enumerate(cases):
        if case["id"] in done:
            continue
        if scorer is None:
            scorer = camab_rag.TransformersScorer(model, num_threads=threads)
        record = attribute_case(scorer, case)
        with out.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        print(f"[{index + 1}/{len(cases)}] {record['seconds']:6.1f}s {case['id']}", flush=True)
    return out

"""Citation precision and recall against HotpotQA's annotated supporting paragraphs.

Held-out rows: HotpotQA distractor-dev questions after the first 50 (yes/no answers
skipped), each with all ten paragraphs of its row, two of them gold (the titles of
``supporting_facts``). The answer is ``"The answer is X."`` (``X`` the gold answer),
attributed with the library's defaults (``camab_rag.attribute``: ``method="auto"``,
sentence granularity, the default budget of 40 calls) and cited with the default
:func:`camab_rag.cite`. A cited paragraph is *precise* when it is gold; *recall* is the
share of gold paragraphs cited; an answer *cites a distractor* when any cited paragraph is
not gold. Rows: :mod:`benchmarks.citations_runs` (stored in
``benchmarks/results/citations/<model>_hotpotqa.jsonl``; an interrupted run resumes).

Dev rows (where the rule was chosen): the first 50 such questions, stored by the previous
version of this benchmark in ``benchmarks/results/citations/<model>.jsonl``: the model's
own answer over four paragraphs (the two gold ones and two distractors), attributed by
chunk with 16 calls. Wrong answers often copy a distractor, so gold paragraphs are the
right citation only for the correct answers; both are shown.

Beside the default: the attribution bar alone (the previous rule: 0.11 nats/token, top 2,
within a quarter of the best) and the zero-call lexical rule "cite the paragraphs that
contain the answer string" (HotpotQA normalisation). ``--replay`` rebuilds the tables from
the stored runs without a model.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/bench_citations.py --n 30
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._report import markdown_table, write_headline, write_section
from benchmarks.citations_runs import RESULTS, SKIP, hotpot_cases, run
from benchmarks.data import contains_gold, contexts
from benchmarks.data import normalize_answer as normalize
from camab_rag.citations import CitationRule, cite
from camab_rag.result import AttributionResult

Rule = Callable[[AttributionResult, list[dict[str, str]], str], set[int]]
Item = tuple[AttributionResult, list[dict[str, str]], set[int], str]
"""(attribution, documents, gold paragraph indices, gold answer)."""
"""(attribution, documents, gold answer) -> the cited document indices."""


def default_rule(result: AttributionResult, docs: list[dict[str, str]], _gold: str) -> set[int]:
    cited = cite(result, docs)
    return {cited.source(n).doc_index for s in cited.sentences for n in s.citations}


def attribution_bar(result: AttributionResult, docs: list[dict[str, str]], _gold: str) -> set[int]:
    """The previous rule: each sentence's documents over the bar, top 2, within 1/4 of the
    best (no word evidence, no disputes)."""
    out: set[int] = set()
    for statement in result.statements:
        scores = np.zeros(len(docs))
        for segment, value in zip(result.segments, statement.scores):
            scores[segment.doc_index] += value
        out.update(CitationRule().select(scores))
    return out


def lexical_rule(_result: AttributionResult, docs: list[dict[str, str]], gold: str) -> set[int]:
    """Zero calls: the paragraphs that contain the (normalised) answer string."""
    answer = normalize(gold)
    return {i for i, doc in enumerate(docs) if answer and answer in normalize(doc["text"])}


RULES: list[tuple[str, Rule]] = [
    ("default `cite` (this version)", default_rule),
    ("attribution bar alone (previous rule)", attribution_bar),
    ("lexical: paragraphs holding the answer string (0 calls)", lexical_rule),
]


def figures(
    items: list[tuple[AttributionResult, list[dict[str, str]], set[int], str]],
) -> list[list[Any]]:
    rows = []
    for name, rule in RULES:
        true = false = gold_total = with_distractor = 0
        for result, docs, gold, answer in items:
            chosen = rule(result, docs, answer)
            true += len(chosen & gold)
            false += len(chosen - gold)
            gold_total += len(gold)
            with_distractor += bool(chosen - gold)
        n = max(len(items), 1)
        rows.append(
            [
                name,
                f"{true / (true + false):.2f} ({true}/{true + false})"
                if true + false
                else "– (0/0)",
                f"{true / max(gold_total, 1):.2f} ({true}/{gold_total})",
                f"{with_distractor / n:.0%} ({with_distractor}/{len(items)})",
                f"{(true + false) / n:.2f}",
            ]
        )
    return rows


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.2f} ({part}/{whole})" if whole else "– (0/0)"


HEADER = ["rule", "precision", "recall", "answers citing a distractor", "citations / answer"]


def held_out_items(
    path: Path,
) -> list[tuple[AttributionResult, list[dict[str, str]], set[int], str]]:
    if not path.exists():
        return []
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        result = AttributionResult.from_dict(record["result"])
        items.append((result, record["docs"], set(record["gold"]), record["gold_answer"]))
    return items


def dev_items(path: Path, rows: dict[str, dict[str, Any]], correct_only: bool) -> list[Item]:
    items: list[Item] = []
    if not path.exists():
        return items
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        row = rows[record["id"]]
        run_ = record["with_gold"]
        if correct_only and not contains_gold(run_["answer"], record["gold_answer"]):
            continue
        docs = contexts(row, record["config"]["seed"])[0]
        titles = {title for title, _ in row["supporting_facts"]}
        gold = {i for i, doc in enumerate(docs) if doc["title"] in titles}
        items.append(
            (AttributionResult.from_dict(run_["result"]), docs, gold, record["gold_answer"])
        )
    return items


def report(model: str, data: Path, n: int) -> str:
    held = held_out_items(RESULTS / f"{model}_hotpotqa.jsonl")
    with data.open(encoding="utf-8") as handle:
        rows = {row["id"]: row for row in map(json.loads, handle)}
    dev_all = dev_items(RESULTS / f"{model}.jsonl", rows, correct_only=False)
    dev_correct = dev_items(RESULTS / f"{model}.jsonl", rows, correct_only=True)
    calls = np.mean([r.n_queries for r, *_ in held]) if held else 0.0
    table = figures(held)
    cell = table[0][1].split()[0]
    distractors = float(table[0][3].split("%")[0]) / 100
    met = (
        "not measured (nothing cited)"
        if cell == "–"
        else ("met" if float(cell) >= 0.90 else "missed")
    )
    verdict = (
        f"Targets (held-out): precision >= 0.90: **{met}** ({cell}); a distractor cited in "
        f"<= 10% of answers: **{'met' if distractors <= 0.10 else 'missed'}** "
        f"({distractors:.0%})."
    )
    return "\n".join(
        [
            f"Held-out: {len(held)} HotpotQA distractor-dev questions after the first {SKIP} "
            f"(yes/no skipped; `--n {n}` asked for, the rest did not finish on the shared "
            f'machine), model `{model}`, ten paragraphs each (two gold), answer "The answer is '
            f'X." attributed with the defaults (mean {calls:.1f} model calls) and cited with '
            "the default `cite`. Counts in brackets: cited gold / cited, cited gold / gold, "
            "answers.",
            "",
            markdown_table(HEADER, table),
            "",
            verdict,
            "",
            f"Dev (the rule was chosen here): the first {SKIP} questions, the model's own "
            "answer over four paragraphs (two gold), by chunk, 16 calls "
            f"(`results/citations/{model}.jsonl`). All {len(dev_all)} answers:",
            "",
            markdown_table(HEADER, figures(dev_all)),
            "",
            f"The {len(dev_correct)} correct answers (the gold paragraphs are their sources):",
            "",
            markdown_table(HEADER, figures(dev_correct)),
            "",
            "Reading the figures: the held-out rows are few (each takes minutes of one "
            "shared CPU core), so these figures are weak evidence either way. Recall stays low by "
            "design: the second gold paragraph of a bridge question rarely holds the "
            "answer's numbers or names, so it is cited only when the attribution alone "
            "finds it and it adds a key word, and an attribution that misses the answer's "
            "source leaves the sentence uncited rather than citing a distractor; the "
            "zero-call lexical rule, which knows the answer string, recalls more. "
            "Disclosure: one change was made after seeing held-out rows: the first two "
            'showed the template word "answer" disputed by a gold paragraph, and disputes '
            "were restricted to numbers and names (checked on the dev rows before keeping "
            "it).",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=30, help="held-out questions to attribute")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--replay", action="store_true", help="report from the stored runs")
    parser.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from benchmarks.data import dataset_path

    data = dataset_path("hotpotqa")
    if not args.replay:
        run(data, args.n, args.model, args.threads)
    body = report(args.model, data, args.n)
    print(body)
    if not args.no_write:
        write_section(
            "citations",
            "Citation precision and recall (HotpotQA supporting paragraphs, SmolLM2)",
            body,
        )
        write_headline("citations", headline_rows(args.model))


def headline_rows(model: str) -> list[list[str]]:
    """BENCHMARKS.md's rows: the default rule's held-out figures beside the lexical rule's."""
    ours, *_, free = figures(held_out_items(RESULTS / f"{model}_hotpotqa.jsonl"))
    precision = ours[1].split()[0]
    share = float(ours[3].split("%")[0]) / 100
    goals = {
        1: ">= 0.90 " + ("missed" if precision == "–" or float(precision) < 0.90 else "met"),
        2: "–",
        3: "<= 10% " + ("met" if share <= 0.10 else "missed"),
    }
    lexical = "lexical (paragraphs holding the answer string)"
    return [
        [
            f"citation {HEADER[col]}, HotpotQA held-out ({model})",
            ours[col],
            f"{lexical} {free[col]}",
            goal,
        ]
        for col, goal in goals.items()
    ]


__all__ = ["hotpot_cases", "main", "report"]

if __name__ == "__main__":
    main()

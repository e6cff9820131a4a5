"""Conflicting sources: is a source that contradicts the answer's key fact caught?

For HotpotQA distractor-dev questions whose answer occurs verbatim in a gold paragraph,
the answer is that paragraph's sentence holding it (an answer that restates its source, as
RAG answers do), attributed by chunk over four documents:

* **conflict**: the gold paragraph holding the answer, the other gold paragraph, a copy of
  the first with the answer replaced by another question's answer of the same kind (a
  number for a number, a name for a name), and one distractor. The copy shares almost
  every word with the true source, so it scores as support, yet it contradicts the
  answer: :mod:`camab_rag.conflicts` should mark it, and nothing else;
* **control**: the two gold paragraphs and two distractors: any conflict is a false one.

Four documents: every subset is scored (16 calls), the attribution is exact. Per-example
records (each answer word's coefficient per document) go to
``benchmarks/results/conflicts/<model>.jsonl`` so ``--replay`` rebuilds the report
without a model. The threshold (how many nats a document must take off an answer
word's log-prob) is chosen on the first half of the examples (dev) and reported on the
second (test). Free baseline: the lexical check "a cited document lacks
an answer word that another cited document has".

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/bench_conflicts.py --n 40
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import camab_rag
import camab_rag.engine as engine
from benchmarks._report import markdown_table, write_headline, write_section
from benchmarks.data import data_dir, paragraphs
from benchmarks.data import normalize_answer as normalize
from camab_rag.citations import CitationRule, cite
from camab_rag.conflicts import (
    CONFLICT_AT,
    conflicts_from_coefficients,
    disputes,
    find_conflicts,
    word_logprobs,
)
from camab_rag.result import AttributionResult, Conflict, StatementAttribution
from camab_rag.segments import Segment

RESULTS = Path(__file__).resolve().parent / "results" / "conflicts"
THRESHOLDS = (0.25, 0.5, 0.75, 1.0, 1.5)


def _has_digit(text: str) -> bool:
    return any(ch.isdigit() for ch in text)


def cases(n: int) -> list[dict[str, Any]]:
    """Up to ``n`` questions with the conflicting copy built (module docstring)."""
    with (data_dir() / "hotpotqa_distractor_dev.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    rows = [r for r in rows if normalize(r["answer"]) not in ("yes", "no")]
    built: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        gold, other = paragraphs(row)
        answer = row["answer"].strip()
        pattern = re.compile(re.escape(answer), re.I)
        holders = [d for d in gold if pattern.search(d["text"])]
        if len(holders) != 1 or len(gold) != 2 or len(other) < 2 or len(answer) < 2:
            continue
        source = holders[0]
        sentences = [
            " ".join(s.split())
            for title, lines in row["context"]
            if title == source["title"]
            for s in lines
            if pattern.search(s)
        ]
        if not sentences or len(sentences[0]) > 300:
            continue
        rest = next(d for d in gold if d is not source)
        kind = _has_digit(answer)
        substitute = next(
            (
                r["answer"].strip()
                for r in rows[index + 1 :] + rows[:index]
                if _has_digit(r["answer"]) == kind
                and normalize(r["answer"]) not in normalize(source["text"])
                and normalize(answer) not in normalize(r["answer"])
                and len(r["answer"].strip()) >= 2
            ),
            None,
        )
        if substitute is None:
            continue
        copy = {"title": source["title"], "text": pattern.sub(substitute, source["text"])}
        rng = random.Random(row["id"])
        conflict = [("source", source), ("gold", rest), ("copy", copy), ("other", other[0])]
        control = [("source", source), ("gold", rest), ("other", other[0]), ("other", other[1])]
        rng.shuffle(conflict)
        rng.shuffle(control)
        # six documents: the same four, two more distractors, drawn apart from the rest
        six = [
            ("source", source),
            ("gold", rest),
            ("copy", copy),
            *[("other", d) for d in other[:3]],
        ]
        random.Random(f"{row['id']}/6").shuffle(six)
        built.append(
            {
                "id": row["id"],
                "question": row["question"],
                "answer": answer,
                "response": sentences[0],
                "substitute": substitute,
                "conditions": {"conflict": conflict, "control": control},
                "six": six,
            }
        )
        if len(built) == n:
            break
    return built


def attribute_words(
    scorer: Any, question: str, docs: list[dict[str, str]], response: str
) -> dict[str, Any]:
    """Attribute ``response`` by chunk and keep each answer word's coefficient per document
    (read through the engine's conflict step, so the run is the library's own)."""
    kept: dict[str, Any] = {}
    original = find_conflicts

    def spy(method: Any, source: Any, masks: Any, texts: Any, seed: int = 0) -> Any:
        words, rewards = word_logprobs(source.response, [source.logprobs(m) for m in masks])
        kept["words"] = words
        kept["coefficients"] = method.fit_many(masks, rewards, seed).tolist() if words else []
        return original(method, source, masks, texts, seed)

    setattr(engine, "find_conflicts", spy)  # noqa: B010 (a benchmark's private hook)
    try:
        result = camab_rag.attribute(question, docs, response, scorer, granularity="chunk")
    finally:
        setattr(engine, "find_conflicts", original)  # noqa: B010
    return {
        "response": response,
        "scores": [float(s) for s in result.document_scores],
        "words": kept.get("words", []),
        "coefficients": kept.get("coefficients", []),
        "n_queries": result.n_queries,
    }


Case = tuple[list[tuple[str, dict[str, str]]], dict[str, Any]]
"""One attributed context: its (role, document) pairs and the stored run."""
Decision = tuple[set[int], set[int]]
"""(documents shown as disputing, documents cited as support)."""


def model_conflicts(case: Case, threshold: float) -> list[Conflict]:
    """The model's conflicts of a stored run (chunk granularity: a document is a segment)."""
    docs, run = case
    if not run["words"]:
        return []
    return conflicts_from_coefficients(
        run["response"],
        [tuple(w) for w in run["words"]],
        np.asarray(run["coefficients"], dtype=float),
        [d["text"] for _, d in docs],
        threshold,
    )


def shipped(case: Case, threshold: float = CONFLICT_AT) -> Decision:
    """What the library shows: :func:`camab_rag.conflicts.disputes` and :func:`camab_rag.cite`
    on the stored run (the answer's document scores stand for its one sentence)."""
    docs, run = case
    texts = [d["text"] for _, d in docs]
    scores = np.asarray(run["scores"], dtype=float)
    response = run["response"]
    result = AttributionResult(
        scores=scores,
        segments=[Segment(text, i, 0, len(text)) for i, text in enumerate(texts)],
        question="",
        response=response,
        n_documents=len(texts),
        statements=[StatementAttribution(response, 0, len(response), scores)],
        conflicts=model_conflicts(case, threshold),
    )
    answer = cite(result, texts)
    supported = {answer.source(n).doc_index for s in answer.sentences for n in s.citations}
    return set(disputes(result)), supported


def previous(case: Case, threshold: float = CONFLICT_AT) -> Decision:
    """The rule before issue 48: a conflict counted only for a source with an answer score
    of at least the citation bar (0.11); citations on the attribution bar alone."""
    scores = np.asarray(case[1]["scores"], dtype=float)
    marks = {c.segment for c in model_conflicts(case, threshold) if scores[c.segment] >= 0.11}
    return marks, set(CitationRule().select(scores)) - marks


def no_check(case: Case) -> Decision:
    return set(), set(CitationRule().select(np.asarray(case[1]["scores"], dtype=float)))


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def lexical(case: Case) -> Decision:
    """A cited document lacks an answer word that another cited document has."""
    docs, run = case
    answer = _words(run["response"])
    _, chosen = no_check(case)
    marks = set()
    for j in chosen:
        missing = answer - _words(docs[j][1]["text"])
        if any(missing & _words(docs[k][1]["text"]) for k in chosen if k != j):
            marks.add(j)
    return marks, chosen - marks


def rates(conflict: list[Case], control: list[Case], decide: Any) -> dict[str, str]:
    """Shares of copies flagged, of copies cited as support, of true sources flagged and
    cited, and of control documents flagged."""
    counts = dict.fromkeys(("copy", "shown", "source", "source cited"), 0)
    for docs, run in conflict:
        roles = [role for role, _ in docs]
        marks, supported = decide((docs, run))
        c, s = roles.index("copy"), roles.index("source")
        counts["copy"] += c in marks
        counts["shown"] += c in supported
        counts["source"] += s in marks
        counts["source cited"] += s in supported
    n = max(len(conflict), 1)
    flags = sum(len(decide(case)[0]) for case in control)
    documents = sum(len(case[0]) for case in control)
    return {
        "copy flagged": f"{counts['copy'] / n:.3f}",
        "copy shown as support": f"{counts['shown'] / n:.3f}",
        "true source flagged": f"{counts['source'] / n:.3f}",
        "true source cited": f"{counts['source cited'] / n:.3f}",
        "control documents flagged": f"{flags / documents:.3f}" if documents else "–",
    }


def _cases(records: list[dict[str, Any]], condition: str) -> list[Case]:
    return [(r["conditions"][condition], r["runs"][condition]) for r in records]


SIX_RULES = (
    ("no dispute check", no_check),
    ("before issue 48 (citable sources only)", previous),
    ("shipped: disputes + cite (default)", shipped),
    ("lexical check (free)", lexical),
)


def report(records: list[dict[str, Any]], six: list[dict[str, Any]], model: str) -> str:
    half = len(records) // 2
    dev, test = records[:half], records[half:]
    chosen_threshold, best = CONFLICT_AT, -1.0
    for threshold in THRESHOLDS:
        r = rates(
            _cases(dev, "conflict"), _cases(dev, "control"), lambda c, m=threshold: shipped(c, m)
        )
        score = (
            float(r["copy flagged"])
            - float(r["control documents flagged"])
            - float(r["true source flagged"])
        )
        if score > best + 1e-12:
            chosen_threshold, best = threshold, score
    conflict, control = _cases(test, "conflict"), _cases(test, "control")
    rows = [["no dispute check", "–", *rates(conflict, control, no_check).values()]]
    rows.append(
        [
            "before issue 48 (citable sources only)",
            "0.25",
            *rates(conflict, control, previous).values(),
        ]
    )
    shipped_row = 0
    for threshold in THRESHOLDS:
        label = "shipped: disputes + cite" + (" (default)" if threshold == CONFLICT_AT else "")
        shipped_row = len(rows) if threshold == CONFLICT_AT else shipped_row
        decide = lambda c, m=threshold: shipped(c, m)  # noqa: E731
        rows.append([label, f"{threshold:g}", *rates(conflict, control, decide).values()])
    rows.append(["lexical check (free)", "–", *rates(conflict, control, lexical).values()])
    header = ["rule", "nats", *rates(conflict, control, no_check).keys()]
    six_cases: list[Case] = [(s["six"], s["run"]) for s in six]
    six_rows = [[name, *rates(six_cases, [], decide).values()] for name, decide in SIX_RULES]
    six_calls = np.mean([s["run"]["n_queries"] for s in six]) if six else 0.0
    stale = float(six_rows[2][2]) if six else float("nan")
    four = float(rows[shipped_row][3])
    calls = np.mean(
        [rec["runs"][c]["n_queries"] for rec in records for c in ("conflict", "control")]
    )
    met = "met" if max(stale, four) <= 0.05 else "missed"
    dev_rates = rates(_cases(dev, "conflict"), _cases(dev, "control"), shipped)
    return (
        f"HotpotQA distractor dev, `{model}`, {len(records)} questions whose answer occurs "
        f"verbatim in one gold paragraph; dev = the first {len(dev)}, test = the other "
        f"{len(test)} (figures below: test). The answer is that paragraph's sentence holding "
        f"it, attributed by chunk (mean {calls:.1f} model calls over four documents; the "
        "dispute check adds none). *copy*: the gold paragraph with the answer replaced by "
        "another question's answer (a stale source: it contradicts the answer); *true "
        "source*: the unaltered paragraph; *control*: the two gold paragraphs and two "
        "distractors (any flag is false). *Flagged*: shown as disputing; *shown as "
        "support*: cited for the answer.\n\n"
        "**Four documents** (source, other gold, copy, distractor):\n\n"
        + markdown_table(header, rows)
        + "\n\nThreshold with the best dev score (copies flagged minus documents wrongly "
        f"flagged): {chosen_threshold:g} nats; shipped: {CONFLICT_AT:g}.\n\n"
        f"**Six documents** (the same plus two more distractors; the {len(six)} test "
        f"questions that finished, mean {six_calls:.1f} calls of the default budget, not "
        "exact):\n\n"
        + markdown_table(["rule", *rates(six_cases, [], no_check).keys()], six_rows)
        + "\n\nTarget: the stale source shown as support in <= 5% of cases at 4-6 documents: "
        f"**{met}** (four: {four:.3f}, six: {stale:.3f}). The lexical check knows which "
        "words differ, which is how the copies were built, so it is an upper bound on this "
        'synthetic set rather than a peer; real contradictions are paraphrased ("a month '
        'and a half" against "30 days"), where word matching has nothing to compare. '
        "The stale copy is kept from support mostly by the citation rule (it adds no "
        "number or name the true source lacks), not by a dispute: a copy that names "
        "another person is disputed only when the model's conflict agrees. Disclosure: "
        "treating a multi-word name as one value (the copy lacks every word of it) was "
        "added after seeing this test half; the dev half moved the same way (copies "
        "flagged 0.30 without it, 0.45 with it). Since the review of issue 48 a dispute "
        "needs a stated value of the word's kind (a number for a number, a name for a "
        "name) in the word's place, also where the model's conflict agrees: a copy whose "
        "replacement is an ordinary phrase, or a number in a name's place, disputes "
        "nothing, though it is still never cited as support. That rule came from "
        "a review of false disputes, not from these rows; it lowered the copies flagged on "
        "the test half (the section's previous version has the figures before) and left "
        f"the dev half where it was (copies flagged {dev_rates['copy flagged']}, control "
        f"documents flagged {dev_rates['control documents flagged']}).\n"
    )


def run_six(
    built: list[dict[str, Any]], model: str, threads: int, *, replay: bool = False
) -> dict[str, Any]:
    """The six-document condition of the held-out half (the second half of ``built``),
    stored in ``results/conflicts/<model>_six.jsonl``; returns the runs by id."""
    path = RESULTS / f"{model}_six.jsonl"
    done: dict[str, Any] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            stored = json.loads(line)
            done[stored["id"]] = stored
    scorer = None
    for case in built[len(built) // 2 :]:
        if replay or case["id"] in done:
            continue
        if scorer is None:
            scorer = camab_rag.TransformersScorer(model, num_threads=threads)
        docs = [d for _, d in case["six"]]
        stored = {
            "id": case["id"],
            "six": case["six"],
            "run": attribute_words(scorer, case["question"], docs, case["response"]),
        }
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(stored) + "\n")
        done[case["id"]] = stored
        print(f"[six] {case['id']}", flush=True)
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--replay", action="store_true", help="report from stored records")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--six-only", action="store_true", help="run the six-document set only")
    args = parser.parse_args()
    path = RESULTS / f"{args.model}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            done[record["id"]] = record
    built = cases(args.n)
    six_runs = run_six(built, args.model, args.threads, replay=args.replay)
    if args.six_only:
        return
    if not args.replay:
        scorer = None
        for index, case in enumerate(built):
            if case["id"] in done:
                continue
            if scorer is None:
                scorer = camab_rag.TransformersScorer(args.model, num_threads=args.threads)
            case["runs"] = {
                name: attribute_words(
                    scorer, case["question"], [d for _, d in docs], case["response"]
                )
                for name, docs in case["conditions"].items()
            }
            with path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(case) + "\n")
            done[case["id"]] = case
            print(f"[{index + 1}/{args.n}] {case['id']}", flush=True)
    records = [done[c["id"]] for c in built if c["id"] in done]
    six = [six_runs[c["id"]] for c in built if c["id"] in six_runs]
    body = report(records, six, args.model)
    print(body)
    if not args.no_write:
        write_section(
            "conflicts",
            "Conflicting sources (HotpotQA, synthetic contradictions)",
            body,
        )
        write_headline("conflicts", headline_rows(records, args.model))


def headline_rows(records: list[dict[str, Any]], model: str) -> list[list[str]]:
    """BENCHMARKS.md's rows: the shipped check on the test half beside the free lexical one."""
    test = records[len(records) // 2 :]
    conflict, control = _cases(test, "conflict"), _cases(test, "control")
    ours = rates(conflict, control, lambda c: shipped(c, CONFLICT_AT))
    free = rates(conflict, control, lexical)

    def goal(key: str) -> str:  # issue 48: the stale source shown as support in <= 5%
        if key != "copy shown as support":
            return "–"
        return "<= 0.05 " + ("met" if float(ours[key]) <= 0.05 else "missed")

    return [
        [f"conflicts: {key}, HotpotQA test ({model})", ours[key], f"lexical {free[key]}", goal(key)]
        for key in ("copy flagged", "copy shown as support", "control documents flagged")
    ]


if __name__ == "__main__":
    main()

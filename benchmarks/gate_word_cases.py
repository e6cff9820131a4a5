"""Word-rule dev cases for the default gate (issue 48): 60 one-document right answers a
reader accepts (numbers as words, units, times, synonyms, follow-ups) and invented twins,
the dev rows the word rules are fixed on. ``python -m benchmarks.gate_word_cases [--run]
[-v]`` replays (``--run``: scores first) and prints every miss. Licence: CC0."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

_CASES_FILE = Path(__file__).parent / "results" / "gate_word_cases.json"
CASES: list[tuple[str, str, str, str, list[dict[str, str]]]] = [
    (c["context"], c["question"], c["right"], c["invented"], c["history"])
    for c in json.loads(_CASES_FILE.read_text("utf-8"))["WORD_CASES"]
]
"""(context, question, right, invented, history), from ``results/gate_word_cases.json``."""


STORE = Path(__file__).parent / "results" / "groundedness" / "word_cases_smollm2.jsonl"
"""The stored token log-probs of every answer (``--run`` writes them; the rest replays)."""


def run(scorer: Any) -> list[dict[str, Any]]:
    """Each answer's token support from ``assess_answer`` with ``scorer`` (two calls)."""
    from camab_rag.attributor import assess_answer

    rows = []
    for k, (context, question, right, invented, history) in enumerate(CASES):
        for name, answer in (("right", right), ("invented", invented)):
            report = assess_answer(question, [context], answer, scorer, history=history or None)
            assert report.token_support is not None
            support = report.token_support.to_dict()
            for key in ("full", "empty"):
                support[key] = [round(float(v), 4) for v in support[key]]
            rows.append({"case": k, "name": name, "answer": answer, "support": support})
    return rows


def replay(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each stored answer read by the library's current rules at the shipped defaults."""
    from camab_rag.groundedness.report import read_by, support_report
    from camab_rag.groundedness.wordforms import ContextWords
    from camab_rag.token_support import TokenSupport

    out = []
    for row in rows:
        context, question, *_ = CASES[row["case"]]
        support = TokenSupport.from_dict(row["support"], row["answer"])
        known = ContextWords.of([context], question)
        report = read_by(support_report(support, None, context_words=known))
        read: dict[str, Any] = dict(
            verdict=report.verdict, p=report.p_unsupported, coverage=report.coverage
        )
        read.update(score=report.score, facts=report.unchecked_facts)
        out.append({**{k: row[k] for k in ("case", "name", "answer")}, **read})
    return out


def main() -> None:
    if "--run" in sys.argv:
        from camab_rag.scorers import default_scorer

        stored = run(default_scorer())
        STORE.write_text("".join(json.dumps(r) + "\n" for r in stored), encoding="utf-8")
    stored = [json.loads(line) for line in STORE.read_text(encoding="utf-8").splitlines()]
    rows = replay(stored)
    right = [r for r in rows if r["name"] == "right"]
    invented = [r for r in rows if r["name"] == "invented"]
    verbose = "-v" in sys.argv
    for r in rows:
        miss = (r["verdict"] == "unsupported") == (r["name"] == "right")
        if miss or verbose:
            print(
                f"{'MISS' if miss else 'ok  '} {r['case']:2d} {r['name']:8s} {r['verdict']:11s} "
                f"p={r['p']:.2f} cov={r['coverage']:.2f} score={r['score']:+.2f} "
                f"facts={r['facts']} | {r['answer']}"
            )
    passed = sum(r["verdict"] != "unsupported" for r in right)
    blocked = sum(r["verdict"] == "unsupported" for r in invented)
    print(f"right passed {passed}/{len(right)}; invented blocked {blocked}/{len(invented)}")


if __name__ == "__main__":
    main()

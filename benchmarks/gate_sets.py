"""The labelled answers the groundedness gate is measured on: FRANK summaries, HaluEval QA,
the hand-written cases and the blind sets (:data:`SETS`; what each is and how the
hand-written ones were written: benchmarks/results/groundedness/README.md). Items of one
context come together (``context_key``) so a scorer's prefix cache computes it once."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.data import data_dir

FRANK_QUESTION = "Summarise the article in a few sentences."
SETS = (
    "frank",
    "halueval",
    "written",
    "fresh",
    "fresh2",
    "fresh3",
    "fresh4",
    "fresh5",
    "fresh6",
    "fresh7",
    "fresh8",
    "fresh9",
    "fresh10",
    "fresh11",
    "fresh12",
    "fresh13",
)
BLIND = SETS[3:]
"""The blind hand-written sets (:func:`blind_cases`)."""
CASES = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Item:
    """One answer to judge: its context, question, label and where it comes from."""

    set: str
    id: str
    question: str
    context: str
    answer: str
    unsupported: bool
    group: str
    split: str
    context_key: str
    history: list[dict[str, str]] = field(default_factory=list)
    """Earlier chat messages (``{"role", "content"}``) that count as context."""

    def meta(self) -> dict[str, Any]:
        return {
            "set": self.set,
            "id": self.id,
            "unsupported": self.unsupported,
            "group": self.group,
            "split": self.split,
        }


def hand_written(name: str) -> dict[str, list[Any]]:
    """A hand-written set's lists of cases (``gate_fresh``: ``FRESH``, ``FRESH_MULTI``;
    ``gate_written``: ``BENCHMARK``, ``CALIBRATION``)."""
    loaded: dict[str, list[Any]] = json.loads(
        (CASES / f"{name}_cases.json").read_text(encoding="utf-8")
    )
    return loaded


def _jsonl(name: str) -> list[dict[str, Any]]:
    with (data_dir() / name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def frank_items() -> list[Item]:
    """FRANK summaries, grouped by article (valid rows first, then test)."""
    rows = _jsonl("frank_dev.jsonl")
    items = [
        Item(
            set="frank",
            id=str(r["id"]),
            question=FRANK_QUESTION,
            context=r["article"],
            answer=r["summary"].strip(),
            unsupported=not bool(r["factual"]),
            group=r["source"],
            split=r["split"],
            context_key=f"{r['source']}:{r['article_id']}",
        )
        for r in rows
        if r["summary"].strip()
    ]
    order = {"valid": 0, "test": 1}
    return sorted(items, key=lambda i: (order[i.split], i.group, i.context_key, i.id))


HALUEVAL_ANSWERS = (
    ("right_answer", False),
    ("hallucinated_answer", True),
    ("hallucinated_answer_multiturn", True),
)


def halueval_items() -> list[Item]:
    """HaluEval QA: three answers per question (right, hallucinated, multi-turn
    hallucinated); ``group`` names which."""
    items = []
    for row in _jsonl("halueval_qa_dev.jsonl"):
        for key, unsupported in HALUEVAL_ANSWERS:
            answer = str(row[key]).strip()
            if not answer:
                continue
            items.append(
                Item(
                    set="halueval",
                    id=f"{row['id']}:{key}",
                    question=row["question"],
                    context=row["knowledge"].strip(),
                    answer=answer,
                    unsupported=unsupported,
                    group=key,
                    split="all",
                    context_key=str(row["id"]),
                )
            )
    return items


def written_items() -> list[Item]:
    """The hand-written cases (``gate_written``), two answers each."""
    cases = hand_written("gate_written")
    items = []
    for group in ("benchmark", "calibration"):
        for k, (context, question, right, invented) in enumerate(cases[group.upper()]):
            for answer, unsupported, name in (
                (right, False, "right"),
                (invented, True, "invented"),
            ):
                items.append(
                    Item(
                        set="written",
                        id=f"{group}-{k:02d}:{name}",
                        question=question,
                        context=context,
                        answer=answer,
                        unsupported=unsupported,
                        group=group,
                        split="all",
                        context_key=f"written-{group}-{k:02d}",
                    )
                )
    return items


def blind_split(question: str, byte: int = -1) -> str:
    """``dev`` when one byte of the question's SHA-256 (UTF-8) is even, else ``held_out``:
    the first blind set reads the last byte, the second (issue 48) the first; both fixed
    before any result of the set was seen."""
    return "dev" if hashlib.sha256(question.encode("utf-8")).digest()[byte] % 2 == 0 else "held_out"


def blind_cases(set_name: str) -> list[tuple[str, str, dict[str, Any]]]:
    """``(key, split, case)`` of a blind set: ``fresh`` is ``gate_fresh_cases.json``'s
    ``FRESH`` (split by the last hash byte); the later ones the ``FRESH2`` ... ``FRESH11``
    lists of ``gate_<set>_dev.json`` and ``gate_<set>_held_out.json`` (split by file, dev
    first)."""
    if set_name == "fresh":
        cases = hand_written("gate_fresh")["FRESH"]
        return [(f"fresh-{k:02d}", blind_split(c["question"]), c) for k, c in enumerate(cases)]
    out = []
    for split in ("dev", "held_out"):
        text = (CASES / f"gate_{set_name}_{split}.json").read_text(encoding="utf-8")
        cases = json.loads(text)[set_name.upper()]
        out += [(f"{set_name}-{split}-{k:02d}", split, c) for k, c in enumerate(cases)]
    return out


def blind_items(set_name: str) -> list[Item]:
    """A blind set's items: each case's right and invented answer."""
    return [
        Item(
            set=set_name,
            id=f"{key}:{name}",
            question=case["question"],
            context=case["context"],
            answer=case[name],
            unsupported=unsupported,
            group=case["kind"],
            split=split,
            context_key=key,
            history=[dict(m) for m in case["history"]],
        )
        for key, split, case in blind_cases(set_name)
        for name, unsupported in (("right", False), ("invented", True))
    ]


HALF_SEED = 48


def halueval_dev_questions() -> set[str]:
    """The HaluEval questions choices are made on (a seeded random half of the file's
    rows, drawn by row position); the other half is held out for the reported figures."""
    ids = [str(row["id"]) for row in _jsonl("halueval_qa_dev.jsonl")]
    order = random.Random(HALF_SEED).sample(range(len(ids)), len(ids))
    return {ids[i] for i in order[: len(ids) // 2]}


def load_items(name: str) -> list[Item]:
    if name == "frank":
        return frank_items()
    if name == "halueval":
        return halueval_items()
    if name == "written":
        return written_items()
    if name in BLIND:
        return blind_items(name)
    raise ValueError(f"unknown set {name!r}; choose one of {', '.join(SETS)}")


def by_context(items: list[Item]) -> Iterator[list[Item]]:
    """The items in runs that share one context (in order of first appearance)."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.context_key, []).append(item)
    yield from groups.values()

"""The benchmarks' one data loader: HotpotQA and CNN/DailyMail rows (as :class:`Example`
with the stored runs' prompt, or raw), HotpotQA's answer checks, the JSONL results files
and the store of priced subsets the LDS benchmarks replay."""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import re
import string
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.prompts import TemplatePromptBuilder
from camab_rag.segments import segment_documents, to_documents
from camab_rag.sentences import split_sentences

Span = tuple[int, int]
Mask = NDArray[np.bool_]
Price = Callable[[Mask], tuple[float, list[float]]]
DIGITS = 6

DATASET_FILES: dict[str, str] = {  # name -> file in the shared data folder
    "hotpotqa": "hotpotqa_distractor_dev.jsonl",
    "cnn_dailymail": "cnn_dailymail_dev.jsonl",
}
DATA_DIR_ENV = "CAMAB_BENCH_DATA"
SUMMARY_INSTRUCTION = "Summarize the article in three sentences."


@dataclass(frozen=True)
class Example:
    """One benchmark example, ready for :func:`camab_rag.attribute`: ``spans`` are each
    document's segment spans, ``gold`` the gold segments' indices (``None``: no gold)."""

    id: str
    question: str
    documents: list[dict[str, str]]
    spans: list[list[Span]]
    gold: list[int] | None
    answers: list[str] = field(default_factory=list)

    @property
    def n_segments(self) -> int:
        return sum(len(s) for s in self.spans)

    @property
    def segment_texts(self) -> list[str]:
        return [
            doc["text"][a:b] for doc, spans in zip(self.documents, self.spans) for a, b in spans
        ]

    def granularity(self) -> Callable[[str], list[Span]]:
        """A splitter giving this example's spans (by document text): the dataset's sentences."""
        by_text = {doc["text"]: list(spans) for doc, spans in zip(self.documents, self.spans)}

        def splitter(text: str) -> list[Span]:
            try:
                return list(by_text[text])
            except KeyError:
                raise InputError("the text is not a document of this example") from None

        return splitter


def make_builder(example: Example) -> TemplatePromptBuilder:
    """An example's prompt: the default chat prompt, documents titled when they have titles."""
    documents = to_documents(example.documents)
    segments = segment_documents(documents, example.granularity())
    template = "{title}: {text}" if all(doc.get("title") for doc in example.documents) else "{text}"
    return TemplatePromptBuilder(example.question, documents, segments, document_template=template)


def data_dir() -> Path:
    """``$CAMAB_BENCH_DATA``, else ``../shared/data`` beside the repository."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def dataset_path(name: str) -> Path:
    """The JSONL file of a dataset of :data:`DATASET_FILES` in :func:`data_dir`."""
    if name not in DATASET_FILES:
        known = ", ".join(sorted(DATASET_FILES))
        raise InputError(f"unknown dataset {name!r}: use one of {known}")
    path = data_dir() / DATASET_FILES[name]
    if not path.is_file():
        raise InputError(
            f"dataset file not found: {path} (the full datasets live in CAMAB_BENCH_DATA or "
            "../shared/data; the repository ships a sample: data/hotpotqa_dev_sample.jsonl)"
        )
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """A results file's rows (none when absent; a line cut short by a kill is skipped)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    return rows


def hotpot_rows(stop: int | None = None, start: int = 0) -> list[dict[str, Any]]:
    """The raw HotpotQA distractor-dev rows ``start:stop``, in file order."""
    with dataset_path("hotpotqa").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in itertools.islice(handle, start, stop)]


def load_examples(name: str, n: int | None = None, *, offset: int = 0) -> list[Example]:
    """The first ``n`` usable examples of a dataset after ``offset`` rows (rows with under 2
    segments or, for questions, no gold skipped)."""
    examples: list[Example] = []
    with dataset_path(name).open(encoding="utf-8") as handle:
        for line in itertools.islice(handle, offset, None):
            example = parse_row(json.loads(line)) if line.strip() else None
            if example is not None and example.n_segments >= 2:
                examples.append(example)
            if n is not None and len(examples) >= n:
                break
    return examples


def parse_row(row: Mapping[str, Any]) -> Example | None:
    """One row in any supported format -> :class:`Example` (``None`` if unusable)."""
    if "context" in row and "supporting_facts" in row:
        return parse_hotpotqa(row)
    if "article" in row:
        return parse_cnn_dailymail(row)
    raise InputError(
        "unrecognised row: expected HotpotQA (context, supporting_facts) or CNN/DailyMail "
        f"(article) keys, got {sorted(row)}"
    )


def parse_hotpotqa(row: Mapping[str, Any]) -> Example | None:
    """HotpotQA distractor: paragraphs -> documents, the dataset's sentences -> segments."""
    documents: list[dict[str, str]] = []
    spans: list[list[Span]] = []
    index_of: dict[tuple[str, int], int] = {}
    count = 0
    for title, sentences in row["context"]:
        text = "".join(sentences)
        doc_spans: list[Span] = []
        cursor = 0
        for position, sentence in enumerate(sentences):
            body = sentence.strip()
            start = cursor + sentence.find(body)
            cursor += len(sentence)
            if not body:
                continue
            index_of[(str(title), position)] = count
            doc_spans.append((start, start + len(body)))
            count += 1
        if doc_spans:
            documents.append({"text": text, "title": str(title)})
            spans.append(doc_spans)
    facts = [(str(t), int(i)) for t, i in row["supporting_facts"]]
    gold = sorted({index_of[fact] for fact in facts if fact in index_of})
    if not documents or not gold:
        return None
    question, answers = str(row["question"]), [str(row["answer"])]
    return Example(str(row["id"]), question, documents, spans, gold, answers)


def parse_cnn_dailymail(row: Mapping[str, Any]) -> Example | None:
    """CNN/DailyMail: the article's sentences; the task is a short summary; no gold."""
    article = str(row["article"])
    spans = split_sentences(article)
    documents = [{"text": article, "title": ""}]
    return Example(str(row["id"]), SUMMARY_INSTRUCTION, documents, [spans], None) if spans else None


# --------------------------------------------------------------- HotpotQA rows, as read
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """HotpotQA's normalisation: lower case, no punctuation, no articles, single spaces."""
    no_punct = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", no_punct).split())


def contains_gold(answer: str, gold: str) -> bool:
    """The answer holds the normalised gold answer, or at least half of its tokens
    ("Erskine Childers" for "Robert Erskine Childers DSC")."""
    gold_norm, answer_norm = normalize_answer(gold), normalize_answer(answer)
    if not gold_norm:
        return False
    if gold_norm in answer_norm:
        return True
    gold_tokens, answer_tokens = gold_norm.split(), set(answer_norm.split())
    return sum(t in answer_tokens for t in gold_tokens) / len(gold_tokens) >= 0.5


def paragraphs(row: dict[str, Any]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    gold_titles = {title for title, _ in row["supporting_facts"]}
    docs = [{"title": t, "text": "".join(s).strip()} for t, s in row["context"]]
    gold = [d for d in docs if d["title"] in gold_titles]
    other = [d for d in docs if d["title"] not in gold_titles]
    return gold, other


def contexts(row: dict[str, Any], seed: int) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(2 gold + 2 distractors shuffled, 4 distractors) for one question, reproducibly."""
    rng = random.Random(f"{seed}-{row['id']}")
    gold, other = paragraphs(row)
    rng.shuffle(other)
    with_gold = gold + other[:2]
    rng.shuffle(with_gold)
    return with_gold, other[:4]


def examples_by_id(records: list[dict[str, Any]]) -> dict[str, Example]:
    """The examples of stored records (read from the first ``len(records) + 200`` of their
    dataset, or from all of it when some record lies further on)."""
    wanted = {r["id"] for r in records}
    loaded = load_examples(records[0]["dataset"], len(records) + 200)
    if not wanted <= {e.id for e in loaded}:
        loaded = load_examples(records[0]["dataset"])
    return {e.id: e for e in loaded if e.id in wanted}


# --------------------------------------------------------------- results files, priced subsets


def bits(mask: Mask | Iterable[bool]) -> str:
    """A mask as the ``"0101..."`` string the results files use."""
    return "".join("1" if b else "0" for b in mask)


def masks_from_bits(rows: Sequence[str]) -> NDArray[np.bool_]:
    """The masks of a results record (one ``"0101..."`` string per query) as a bool matrix."""
    return np.array([[bit == "1" for bit in row] for row in rows], dtype=bool)


def resume(
    path: Path,
    todo: Sequence[tuple[object, Any]],
    attribute: Callable[[Any, Any], dict[str, Any]],
    model: str,
    threads: int,
    key: str = "id",
) -> None:
    """Run ``attribute(scorer, item)`` for each ``(name, item)`` no record of ``path`` holds
    under ``key``, appending each as it ends; the model loads only when one is left."""
    done = {record[key] for record in read_jsonl(path)}
    scorer = None
    for index, (name, item) in enumerate(todo):
        if name in done:
            continue
        if scorer is None:
            from camab_rag import TransformersScorer

            scorer = TransformersScorer(model, num_threads=threads)
        started = time.perf_counter()
        append_record(path, attribute(scorer, item))
        print(f"[{index + 1}/{len(todo)}] {time.perf_counter() - started:6.1f}s {name}", flush=True)


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line, flushed to disk (after a torn last line, on a line of its own)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torn = False
    if path.exists() and path.stat().st_size > 0:
        with open(path, "rb") as existing:
            existing.seek(-1, os.SEEK_END)
            torn = existing.read(1) != b"\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(("\n" if torn else "") + json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


class Unpriced(LookupError):
    """A subset the store has no reward for, asked for where no model may be called."""


class RewardStore:
    """``example id -> mask -> reward`` in one JSONL file, flushed as each is priced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._rewards: dict[str, dict[str, float]] = {}
        self.conflicts: list[float] = []
        """Gaps between two values offered for the same subset (the first one is kept)."""
        for row in read_jsonl(path):
            self._rewards.setdefault(str(row["id"]), {})[str(row["mask"])] = float(row["reward"])

    def get(self, example_id: str, mask: Mask | str) -> float | None:
        return self._rewards.get(example_id, {}).get(_key(mask))

    def __len__(self) -> int:
        return sum(len(v) for v in self._rewards.values())

    def put(
        self,
        example_id: str,
        mask: Mask | str,
        reward: float,
        *,
        source: str,
        logprobs: Iterable[float] | None = None,
    ) -> float:
        """Record a subset's reward, flushed at once (a subset already there keeps its value,
        the gap noted in :attr:`conflicts`); returns the value the store holds."""
        if not math.isfinite(reward):
            raise ValueError(f"reward must be finite, got {reward!r}")
        key = _key(mask)
        value = round(float(reward), DIGITS)
        held = self._rewards.setdefault(example_id, {})
        if key in held:
            self.conflicts.append(abs(held[key] - value))
            return held[key]
        held[key] = value
        row: dict[str, Any] = {"id": example_id, "mask": key, "reward": value, "source": source}
        if logprobs is not None:
            row["logprobs"] = [round(float(x), 4) for x in logprobs]
        append_record(self.path, row)
        return value


def _key(mask: Mask | str) -> str:
    return mask if isinstance(mask, str) else bits(mask)


class PricedReward:
    """``mask -> reward`` for :func:`camab_rag.attribute_fn`, served from ``store``; an
    unpriced subset goes to ``price`` (the model) and into the store, or raises
    :class:`Unpriced`. Values are the store's (rounded), so a run and its replay agree."""

    def __init__(self, store: RewardStore, example_id: str, price: Price | None = None) -> None:
        self.store, self.example_id, self.price = store, example_id, price
        self.model_calls = self.replayed = 0

    def __call__(self, mask: Mask) -> float:
        held = self.store.get(self.example_id, mask)
        if held is not None:
            self.replayed += 1
            return held
        if self.price is None:
            raise Unpriced(f"{self.example_id}: subset {bits(mask)} is not priced")
        reward, logprobs = self.price(np.asarray(mask, dtype=bool))
        self.model_calls += 1
        return self.store.put(self.example_id, mask, reward, source="model", logprobs=logprobs)

    def many(self, masks: Iterable[Mask]) -> list[float]:
        """The rewards of several masks (priced in the order given)."""
        return [self(m) for m in masks]

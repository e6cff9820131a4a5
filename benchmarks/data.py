"""The benchmarks' one data loader: HotpotQA distractor and CNN/DailyMail rows (or any JSONL
in their formats) as :class:`Example`, each with the prompt the stored runs used; the raw
HotpotQA rows and the HotpotQA answer checks the other benchmarks read."""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import string
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from camab_rag.errors import InputError
from camab_rag.prompts import TemplatePromptBuilder
from camab_rag.segments import segment_documents, to_documents
from camab_rag.sentences import split_sentences

Span = tuple[int, int]

DATASET_FILES: dict[str, str] = {
    "hotpotqa": "hotpotqa_distractor_dev.jsonl",
    "cnn_dailymail": "cnn_dailymail_dev.jsonl",
}
"""Dataset name -> file name in the shared data folder."""

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
        """A splitter for :func:`camab_rag.attribute` returning this example's spans (matched
        by document text), so the segments are exactly the dataset's sentences."""
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
    titled = all(doc.get("title") for doc in example.documents)
    return TemplatePromptBuilder(
        example.question,
        documents,
        segments,
        document_template="{title}: {text}" if titled else "{text}",
    )


def data_dir() -> Path:
    """``$CAMAB_BENCH_DATA``, else ``../shared/data`` beside the repository."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def dataset_path(name_or_path: str | os.PathLike[str]) -> Path:
    """The JSONL file for a dataset name or a path."""
    text = str(name_or_path)
    if text in DATASET_FILES:
        path = data_dir() / DATASET_FILES[text]
    else:
        path = Path(text).expanduser()
        if not path.suffix and not path.exists():
            known = ", ".join(sorted(DATASET_FILES))
            raise InputError(f"unknown dataset {text!r}: use one of {known} or a JSONL path")
    if not path.is_file():
        hint = (
            " (the full datasets live in CAMAB_BENCH_DATA or ../shared/data; the repository "
            "ships a sample: data/hotpotqa_dev_sample.jsonl)"
            if text in DATASET_FILES
            else ""
        )
        raise InputError(f"dataset file not found: {path}{hint}")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """A stored results file's rows, none when it is absent (a line cut short by an
    interrupted run is skipped: it is run again)."""
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


def load_examples(
    name_or_path: str | os.PathLike[str],
    n: int | None = None,
    *,
    offset: int = 0,
) -> list[Example]:
    """The first ``n`` usable examples after ``offset`` rows (rows with under 2 segments or,
    for questions, no gold skipped). Raises :class:`InputError` for an unknown name, a
    missing file or an unknown row."""
    path = dataset_path(name_or_path)
    examples: list[Example] = []
    for number, row in enumerate(_rows(path)):
        if number < offset:
            continue
        try:
            example = parse_row(row)
        except InputError as error:
            raise InputError(f"{path}:{number + 1}: {error}") from None
        if example is not None and example.n_segments >= 2:
            examples.append(example)
        if n is not None and len(examples) >= n:
            break
    return examples


def _rows(path: Path) -> Iterator[Mapping[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"{path}:{number}: not valid JSON ({error.msg})") from None
            if not isinstance(row, Mapping):
                raise InputError(f"{path}:{number}: a row must be a JSON object")
            yield row


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
    gold = sorted(
        {
            index_of[(str(t), int(i))]
            for t, i in row["supporting_facts"]
            if (str(t), int(i)) in index_of
        }
    )
    if not documents or not gold:
        return None
    return Example(
        id=str(row["id"]),
        question=str(row["question"]),
        documents=documents,
        spans=spans,
        gold=gold,
        answers=[str(row["answer"])],
    )


def parse_cnn_dailymail(row: Mapping[str, Any]) -> Example | None:
    """CNN/DailyMail: the article's sentences; the task is a short summary; no gold."""
    article = str(row["article"])
    spans = split_sentences(article)
    if not spans:
        return None
    return Example(
        id=str(row["id"]),
        question=SUMMARY_INSTRUCTION,
        documents=[{"text": article, "title": ""}],
        spans=[spans],
        gold=None,
        answers=[],
    )


# --------------------------------------------------------------- HotpotQA rows, as read
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """HotpotQA's normalisation: lower case, no punctuation, no articles, single spaces."""
    lowered = text.lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
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
    without_gold = other[:4]
    rng.shuffle(with_gold)
    return with_gold, without_gold


def examples_by_id(records: list[dict[str, Any]]) -> dict[str, Example]:
    """The examples of stored records (the first ``len(records) + 200`` of their dataset)."""
    wanted = {r["id"] for r in records}
    loaded = load_examples(records[0]["dataset"], len(records) + 200)
    return {e.id: e for e in loaded if e.id in wanted}

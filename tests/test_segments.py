from collections import defaultdict
from types import SimpleNamespace

import pytest
from conftest_data import TYDIQA, read_jsonl

from camab_rag.errors import InputError
from camab_rag.segments import segment_documents, to_documents
from camab_rag.sentences import split_sentences

TYDI = read_jsonl(TYDIQA)
LANGUAGES = sorted({row["language"] for row in TYDI})


def test_tydi_has_the_nine_languages():
    assert len(LANGUAGES) == 9


@pytest.mark.parametrize("language", LANGUAGES)
def test_sentences_tile_real_passages(language):
    rows = [row for row in TYDI if row["language"] == language]
    counts = []
    for row in rows:
        text = row["passage"]
        spans = split_sentences(text)
        assert spans, row["id"]
        previous_end = 0
        for start, end in spans:
            assert 0 <= previous_end <= start < end <= len(text)
            assert text[previous_end:start].strip() == "", (row["id"], text[previous_end:start])
            assert text[start:end] == text[start:end].strip()
            previous_end = end
        assert text[previous_end:].strip() == ""
        counts.append(len(spans))
    # Passages are several sentences long: the splitter must find boundaries in every script.
    assert sum(counts) / len(counts) >= 2.0
    assert sum(c > 1 for c in counts) / len(counts) >= 0.6


@pytest.mark.parametrize("language", LANGUAGES)
def test_answer_spans_fall_inside_one_sentence_mostly(language):
    """Gold answers are short spans: a good splitter rarely cuts through one."""
    inside, total = 0, 0
    for row in TYDI:
        if row["language"] != language:
            continue
        spans = split_sentences(row["passage"])
        for answer in row["answers"]:
            if len(answer["text"]) > 80:  # long answers legitimately span sentences
                continue
            start = answer["answer_start"]
            end = start + len(answer["text"])
            total += 1
            inside += any(s <= start and end <= e for s, e in spans)
    assert inside / total >= 0.95


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "It runs to Alwar.[2] In 1998 it was listed.",
            ["It runs to Alwar.[2]", "In 1998 it was listed."],
        ),
        (
            "J. R. R. Tolkien wrote it. Dr. Smith agreed!",
            ["J. R. R. Tolkien wrote it.", "Dr. Smith agreed!"],
        ),
        ("Pi is 3.14 roughly. Next", ["Pi is 3.14 roughly.", "Next"]),
        ("هل هذا صحيح؟ نعم هو كذلك.", ["هل هذا صحيح؟", "نعم هو كذلك."]),
        ("এটা একটি বাক্য। এটা আরেকটি।", ["এটা একটি বাক্য।", "এটা আরেকটি।"]),
        ("Это первое. Это второе.", ["Это первое.", "Это второе."]),
        ("这是第一句。这是第二句。", ["这是第一句。", "这是第二句。"]),
        ("Line one\nLine two", ["Line one", "Line two"]),
        ("   ", []),
        ("no terminator", ["no terminator"]),
        ("Hän syntyi 31. joulukuuta 1872. Sitten", ["Hän syntyi 31. joulukuuta 1872.", "Sitten"]),
    ],
)
def test_sentence_examples(text, expected):
    assert [text[s:e] for s, e in split_sentences(text)] == expected


def test_documents_from_strings_mappings_and_objects():
    langchain_like = SimpleNamespace(page_content="From LangChain.", metadata={"source": "a"})
    llama_node = SimpleNamespace(text="From LlamaIndex.", metadata={"file": "b"})
    wrapped = SimpleNamespace(node=llama_node, score=0.3)
    docs = to_documents(
        ["plain", {"page_content": "mapped", "title": "T"}, langchain_like, wrapped]
    )
    assert [d.text for d in docs] == ["plain", "mapped", "From LangChain.", "From LlamaIndex."]
    assert docs[1].title == "T" and docs[2].metadata == {"source": "a"}
    assert [d.text for d in to_documents("one string")] == ["one string"]


def test_bad_context_items_are_named():
    with pytest.raises(InputError, match=r"context\[1\] has no text"):
        to_documents(["ok", 42])
    with pytest.raises(InputError, match="context must be"):
        to_documents(3.5)


def test_segments_map_back_to_documents():
    docs = to_documents(["First one. Second one.", "   ", "Other doc."])
    sentences = segment_documents(docs, "sentence")
    assert [(s.doc_index, s.text) for s in sentences] == [
        (0, "First one."),
        (0, "Second one."),
        (2, "Other doc."),
    ]
    for s in sentences:
        assert docs[s.doc_index].text[s.start : s.end] == s.text
    chunks = segment_documents(docs, "chunk")
    assert [(c.doc_index, c.text) for c in chunks] == [
        (0, "First one. Second one."),
        (2, "Other doc."),
    ]


def test_empty_context_and_bad_granularity():
    with pytest.raises(InputError, match="context is empty"):
        segment_documents(to_documents([]), "chunk")
    with pytest.raises(InputError, match="context is empty"):
        segment_documents(to_documents(["  ", "\n"]), "sentence")
    with pytest.raises(InputError, match="granularity"):
        segment_documents(to_documents(["x"]), "paragraph")  # type: ignore[arg-type]


def test_custom_splitter_spans_are_checked():
    docs = to_documents(["abc"])
    with pytest.raises(InputError, match="outside document"):
        segment_documents(docs, lambda text: [(0, 10)])
    for returned in (None, [(0, 1, 2)], [0, 1], [(0.0, 1.0)], [("0", "1")], [(True, 2)]):
        with pytest.raises(InputError, match="must return \\(start, end\\) pairs"):
            segment_documents(docs, lambda text, r=returned: r)  # type: ignore[misc]
    assert [s.text for s in segment_documents(docs, lambda text: iter([(0, 2)]))] == ["ab"]
    per_doc = defaultdict(list)
    for seg in segment_documents(docs, lambda text: [(0, 1), (1, 3)]):
        per_doc[seg.doc_index].append(seg.text)
    assert per_doc[0] == ["a", "bc"]

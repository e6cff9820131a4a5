import numpy as np
import pytest

from camab_rag.errors import InputError
from camab_rag.prompts import (
    SpanRemovalPromptBuilder,
    TemplatePromptBuilder,
    locate_segments,
)
from camab_rag.scorers.base import prompt_texts
from camab_rag.segments import segment_documents, to_documents

DOCS = to_documents(
    [
        {"text": "Paris is the capital.  It is in France.\nIt has museums.", "title": "Paris"},
        {"text": "Berlin is in Germany.", "title": "Berlin"},
    ]
)
SEGMENTS = segment_documents(DOCS, "sentence")


def builder(**kwargs):
    return TemplatePromptBuilder("Where is Paris?", DOCS, SEGMENTS, **kwargs)


def test_full_mask_reproduces_documents_with_original_separators():
    context = builder().render_context(np.ones(4, bool))
    assert context == (
        "Paris is the capital.  It is in France.\nIt has museums.\n\nBerlin is in Germany."
    )


def test_ablation_keeps_order_and_drops_empty_documents():
    b = builder(document_template="[{index}] {title}: {text}")
    assert b.render_context(np.array([True, False, True, False])) == (
        "[1] Paris: Paris is the capital.\nIt has museums."
    )
    assert b.render_context(np.array([False, False, False, True])) == (
        "[1] Berlin: Berlin is in Germany."
    )
    assert b.render_context(np.zeros(4, bool)) == ""


def test_chat_prompts():
    messages = builder().build(np.ones(4, bool))
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Question: Where is Paris?" in messages[1]["content"]
    assert [m["role"] for m in builder(system_prompt=None).build(np.ones(4, bool))] == ["user"]


def test_prompt_texts_of_plain_and_chat_prompts():
    assert prompt_texts("Context: a") == ["Context: a"]
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q?"}]
    assert prompt_texts(chat) == ["Be brief.", "Q?"]
    assert prompt_texts([]) == []


def test_template_must_have_fields_and_masks_must_fit():
    with pytest.raises(InputError, match=r"\{context\}"):
        builder(user_template="Q: {question}")
    with pytest.raises(InputError, match="shape"):
        builder().build(np.ones(3, bool))


def test_span_removal_on_a_real_looking_prompt():
    prompt = [
        {"role": "system", "content": "Use the documents."},
        {
            "role": "user",
            "content": "Doc A: " + DOCS[0].text + "\nDoc B: " + DOCS[1].text + "\nQ: where?",
        },
    ]
    locations = locate_segments(prompt, DOCS, SEGMENTS)
    assert locations is not None
    removal = SpanRemovalPromptBuilder(prompt, locations)
    full = removal.build(np.ones(4, bool))
    assert full == prompt
    ablated = removal.build(np.array([True, True, True, False]))
    assert isinstance(ablated, list)
    assert ablated[1]["content"].endswith("Doc B: \nQ: where?")
    assert "Berlin" not in ablated[1]["content"]
    assert ablated[0] == prompt[0]


def test_locate_returns_none_when_a_document_is_not_in_the_prompt():
    assert locate_segments("nothing here", DOCS, SEGMENTS) is None


def test_duplicate_documents_resolve_to_distinct_places():
    docs = to_documents(["Same text.", "Same text."])
    segments = segment_documents(docs, "chunk")
    prompt = "A: Same text. B: Same text."
    locations = locate_segments(prompt, docs, segments)
    assert locations is not None and locations[0][1] != locations[1][1]
    removal = SpanRemovalPromptBuilder(prompt, locations)
    assert removal.build(np.array([False, True])) == "A:  B: Same text."
    assert removal.build(np.array([True, False])) == "A: Same text. B: "

"""The input gate under a real LangChain chain (issue 50 item 1): a document, title or
question the gate refuses becomes the attribution's error; the chain's answer goes on."""

from __future__ import annotations

from uuid import uuid4

import pytest
from langchain_camab import CamabCallbackHandler
from langchain_core.documents import Document

from camab_rag.settings import CHAIN_SETTINGS
from tests.fakes import KeywordRetriever, KeywordScorer
from tests.unit_tests.test_handler import DOCS, _chain

FRANCE = "What is the capital of France?"


@pytest.mark.parametrize(
    ("documents", "question", "error"),
    [
        (
            [Document("Paris is the capital of France.\udc80", metadata={"title": "Paris"})],
            FRANCE,
            "TextError: document 0 ('Paris') holds a lone surrogate U+DC80 at character 31",
        ),
        (
            [Document("Paris is the capital of France.", metadata={"title": "Par\x00is"})],
            FRANCE,
            "TextError: document 0's metadata 'title' holds a NUL character (U+0000) at "
            "character 3",
        ),
        (DOCS, FRANCE + " \ud800", "TextError: the question holds a lone surrogate U+D800"),
    ],
)
def test_refused_text_is_the_attributions_error_and_the_chain_goes_on(
    documents: list[Document], question: str, error: str
) -> None:
    """A refused document used to raise inside the handler's on_chain_end: LangChain
    logged it and the run had no result at all."""
    scorer = KeywordScorer()
    handler = CamabCallbackHandler(scorer, settings=CHAIN_SETTINGS.with_changes(budget=8))
    run_id = uuid4()
    chain = _chain(retriever=KeywordRetriever(documents=documents, k=3))
    answer = chain.invoke(question, {"callbacks": [handler], "run_id": run_id})
    assert answer == "Paris is the capital of France."
    result = handler.results[run_id]
    assert result.status == "error" and result.error is not None
    assert result.error.startswith(error)
    assert scorer.calls == []

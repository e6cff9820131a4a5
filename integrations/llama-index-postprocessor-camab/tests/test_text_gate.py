"""The input gate under a real LlamaIndex query engine (issue 50 item 1): text the gate
refuses becomes the attribution's error; the engine's answer goes on unchanged."""

from __future__ import annotations

import pytest
from llama_fakes import PlantedScorer, answered, attribution_info
from llama_index.core import Document, SummaryIndex
from llama_index.core.llms import MockLLM
from llama_index.postprocessor.camab import CamabQueryEngine

from camab_rag.settings import CHAIN_SETTINGS

PARIS = "Paris is in France."


@pytest.mark.parametrize(
    ("texts", "question", "error"),
    [
        (
            [PARIS + " \x00", "Rome is in Italy."],
            "Where is Paris?",
            "TextError: document 0 holds a NUL character (U+0000) at character 20",
        ),
        (
            [PARIS, "Rome is in Italy."],
            "Where is Paris? \ud800",
            "TextError: the question holds a lone surrogate U+D800 at character 16",
        ),
    ],
)
def test_refused_text_is_the_attributions_error_and_the_answer_goes_on(
    texts: list[str], question: str, error: str
) -> None:
    index = SummaryIndex.from_documents([Document(text=text) for text in texts])
    plain = answered(index.as_query_engine(llm=MockLLM(max_tokens=4)).query(question))
    scorer = PlantedScorer(["Paris"])
    engine = CamabQueryEngine(
        index.as_query_engine(llm=MockLLM(max_tokens=4)),
        scorer,
        settings=CHAIN_SETTINGS.with_changes(budget=4),
    )
    response = answered(engine.query(question))
    assert response.response == plain.response
    info = attribution_info(response)
    assert info["status"] == "error" and info["error"].startswith(error)
    assert scorer.prompts == []  # refused before any model call

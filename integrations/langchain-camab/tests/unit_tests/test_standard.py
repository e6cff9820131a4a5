"""LangChain's standard unit tests (``langchain-tests``) for :class:`CamabChatModel`.

Features the in-process model does not have (tool calling, structured output, images, ...)
are switched off through the suite's documented properties, so their tests skip."""

from __future__ import annotations

from typing import Any

from langchain_camab import CamabChatModel
from langchain_core.language_models import BaseChatModel
from langchain_tests.unit_tests import ChatModelUnitTests

from tests.standard_model import chat_model_params


class TestCamabChatModelStandard(ChatModelUnitTests):
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

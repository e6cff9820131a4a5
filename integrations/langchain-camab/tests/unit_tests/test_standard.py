"""LangChain's standard unit tests (``langchain-tests``) for :class:`CamabChatModel`
(the features it lacks skip: ``tests/standard_model.py``)."""

from __future__ import annotations

from langchain_tests.unit_tests import ChatModelUnitTests

from tests.standard_model import CamabChatModelFeatures


class TestCamabChatModelStandard(CamabChatModelFeatures, ChatModelUnitTests):
    pass

"""LangChain's standard integration tests (``langchain-tests``) for :class:`CamabChatModel`
on the embedded SmolLM2, offline: invoke, stream, batch, conversations and stop sequences
against the real model with short answers (the features it lacks skip:
``tests/standard_model.py``)."""

from __future__ import annotations

import pytest
from langchain_tests.integration_tests import ChatModelIntegrationTests

from tests.standard_model import CamabChatModelFeatures

pytestmark = pytest.mark.model


class TestCamabChatModelStandard(CamabChatModelFeatures, ChatModelIntegrationTests):
    pass

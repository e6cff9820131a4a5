"""ChatOpenAI pointed at a real local vLLM server, attributed with ``scorer=None``: the
handler builds the HTTP scorer from the chain's own model (same server, same weights).

The server comes from camab-rag's test helper (``tests/vllm_server.py``); without the
vLLM environment (``scripts/setup_vllm.sh``) the test is skipped, except in CI.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_camab import CamabCallbackHandler
from pydantic import SecretStr

from tests.integration_tests.hotpot import REPO, BM25Retriever, Example, rag_chain

pytestmark = [pytest.mark.model, pytest.mark.server]


def _vllm_helper() -> Any:
    path = REPO / "tests" / "vllm_server.py"
    spec = importlib.util.spec_from_file_location("camab_vllm_server", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def vllm_base_url() -> Iterator[str]:
    running = os.environ.get("CAMAB_TEST_VLLM_PORT")
    if running:  # a developer's already running server (the embedded model, as "smollm2")
        yield f"http://127.0.0.1:{running}/v1"
        return
    helper = _vllm_helper()
    reason = helper.vllm_missing_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the vLLM server environment: {reason}")
        pytest.skip(reason)
    with helper.VLLMServer(helper.smollm2_dir(), "smollm2") as server:
        yield server.base_url


def test_chat_openai_chain_is_attributed_by_its_own_server(
    vllm_base_url: str, retriever: BM25Retriever, easy_examples: list[Example]
) -> None:
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(
        model="smollm2",
        base_url=vllm_base_url,
        api_key=SecretStr("EMPTY"),
        temperature=0,
        max_completion_tokens=24,  # the field max_tokens, by its pydantic alias
    )
    handler = CamabCallbackHandler(budget=8)  # scorer=None: from the chain's ChatOpenAI
    chain = rag_chain(retriever, llm)
    example = easy_examples[0]
    message = chain.invoke(example.question, {"callbacks": [handler]})
    result = handler.last_result
    assert result is not None
    assert result.status == "ok", result.error
    assert result.prompt_mode == "captured"
    assert result.response == message.content
    assert 0 < result.n_queries <= 8
    assert message.response_metadata["attribution"]["status"] == "ok"
    assert result.n_documents == 4 and result.document_scores.shape == (4,)

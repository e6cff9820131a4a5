"""OpenAILike pointed at a real local vLLM server, attributed with ``scorer=None``: the
engine builds the HTTP scorer from its own LLM (same server, same weights).

The server comes from camab-rag's test helper (``tests/vllm_server.py``); set
``CAMAB_TEST_VLLM_PORT`` to use an already running one (serving the embedded model as
``smollm2``). Without the vLLM environment (``scripts/setup_vllm.sh``) the test is skipped,
except in CI.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from llama_fakes import answered, attribution_info, repo_tests_module
from llama_index.postprocessor.camab import (
    ATTRIBUTION_KEY,
    CamabQueryEngine,
    await_attribution,
)

from camab_rag.settings import CHAIN_SETTINGS

pytestmark = [pytest.mark.model, pytest.mark.server]


@pytest.fixture(scope="module")
def vllm_base_url() -> Iterator[str]:
    with repo_tests_module("vllm_server.py").smollm2_server() as server:
        yield server.base_url


def _openai_like(base_url: str, **options: Any) -> Any:
    """The engine's LLM: OpenAILike on the local server (a slow CI answer is no failure)."""
    from llama_index.llms.openai_like import OpenAILike

    settings: dict[str, Any] = {"timeout": 300.0, **options}
    return OpenAILike(
        model="smollm2",
        api_base=base_url,
        api_key="EMPTY",
        is_chat_model=True,
        context_window=2048,
        temperature=0.0,
        **settings,
    )


def test_openai_like_engine_is_attributed_by_its_own_server(
    vllm_base_url: str, index: Any, hotpot_rows: list[dict[str, Any]]
) -> None:
    llm = _openai_like(vllm_base_url, max_tokens=24, max_retries=1)
    question = hotpot_rows[0]["question"]
    engine = CamabQueryEngine(
        index.as_query_engine(llm=llm, similarity_top_k=3),
        settings=CHAIN_SETTINGS.with_changes(budget=4),
    )
    response = answered(engine.query(question))
    info = attribution_info(response)
    assert info["status"] == "ok", info["error"]
    assert info["prompt_mode"] == "captured", info["prompt_note"]
    assert response.response is not None and response.response.strip()
    assert info["response"] == response.response
    assert 1 <= info["n_queries"] <= 4  # 3 nodes: one call each and the full prompt
    assert len(response.source_nodes) == 3
    ranks = sorted(n.node.metadata[ATTRIBUTION_KEY]["rank"] for n in response.source_nodes)
    assert ranks == [1, 2, 3]
    assert all(
        isinstance(n.node.metadata[ATTRIBUTION_KEY]["score"], float) for n in response.source_nodes
    )


def test_async_and_streamed_queries_leave_no_connection_open(
    vllm_base_url: str, index: Any, hotpot_rows: list[dict[str, Any]]
) -> None:
    """aquery (plain and streamed) attributed by the engine's own server: every HTTP client
    the attribution opens is closed, so once the app closes its own client no
    ``ResourceWarning: unclosed transport`` is left."""
    import httpx
    from llama_index.core.base.response.schema import AsyncStreamingResponse

    question = hotpot_rows[0]["question"]

    async def run() -> list[dict[str, Any]]:
        http = httpx.AsyncClient(timeout=300.0)  # the app's own client, closed by the app
        llm = _openai_like(vllm_base_url, max_tokens=16, async_http_client=http)
        infos = []
        for streaming in (False, True):
            inner = index.as_query_engine(llm=llm, similarity_top_k=3, streaming=streaming)
            response = await CamabQueryEngine(
                inner, settings=CHAIN_SETTINGS.with_changes(budget=4)
            ).aquery(question)
            if streaming:
                assert isinstance(response, AsyncStreamingResponse)
                text = "".join([token async for token in response.async_response_gen()])
                assert text.strip()
                await await_attribution(response)
            infos.append(attribution_info(response))
        await http.aclose()
        return infos

    gc.collect()  # what earlier tests left behind is not this test's to judge
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        infos = asyncio.run(run())
        gc.collect()  # the engines, their scorers and clients are garbage now
    assert [info["status"] for info in infos] == ["ok"] * 2, [i["error"] for i in infos]
    assert all(1 <= info["n_queries"] <= 4 for info in infos)
    warned = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert [w for w in warned if "transport" in w or "socket" in w] == []

"""The HTTP scorer against a real vLLM server on 127.0.0.1, checked against the in-process
scorer on the same model and prompts.

The session's one server (``vllm_server`` in ``shared_fixtures``: about a minute, ~5.6 GB)
runs from ``.venv-vllm/`` (``scripts/setup_vllm.sh``), serving the embedded SmolLM2 model
converted by the model registry (``CAMAB_TEST_VLLM_PORT=PORT`` reuses a server already
running on 127.0.0.1:PORT instead). Without ``.venv-vllm`` the module is skipped, except in
CI (``CI`` set), where a missing server environment is an error unless ``CAMAB_SKIP_VLLM=1``
says it was left out on purpose.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pytest
from vllm_server import VLLMServer

import camab_rag
from camab_rag.errors import ScorerError
from camab_rag.scorers.base import ResponseLogprobs, Scorer, ScoreRequest
from camab_rag.scorers.openai_completions import OpenAICompletionsScorer

if TYPE_CHECKING:
    from camab_rag.scorers.transformers_scorer import TransformersScorer

pytestmark = [pytest.mark.server, pytest.mark.model]

TOLERANCE = 1e-3  # per token; measured agreement is about 1e-5

SYSTEM = "Answer the question using only the given context."
CONTEXT = (
    "Context:\nParis is the capital of France. Berlin is the capital of Germany. "
    "The Seine flows through Paris."
)
REQUESTS = [
    ScoreRequest(
        [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{CONTEXT}\n\nQuestion: What is the capital of France?"},
        ],
        "The capital of France is Paris. The Seine flows through it.",
    ),
    ScoreRequest(
        [{"role": "user", "content": "Name a river in Paris."}],
        "The Seine. Café au lait 😀 is popular there too.",
    ),
    ScoreRequest("Q: What is the capital of Germany?\nA:", " Berlin is the capital."),
    # the prompt's trailing space would merge with "Paris" in a joint tokenization
    ScoreRequest("The answer is: ", "Paris"),
    ScoreRequest("Translate to French: cat\nFrench:", "\n chat\n"),
]


@pytest.fixture(scope="module")
def http_scorer(vllm_server: VLLMServer) -> Iterator[OpenAICompletionsScorer]:
    scorer = OpenAICompletionsScorer(vllm_server.base_url, "smollm2", timeout=120)
    yield scorer
    scorer.close()


@pytest.fixture(scope="module")
def reference(smollm2_scorer: TransformersScorer) -> list[ResponseLogprobs]:
    return smollm2_scorer.score(REQUESTS)


def assert_agree(got: ResponseLogprobs, want: ResponseLogprobs, tol: float = TOLERANCE) -> None:
    """Same tokens, offsets and prompt length; log-probs within ``tol`` per token.

    A character split over several tokens (an emoji's bytes) is displayed differently: vLLM
    gives "" then the character, transformers' offsets give the character twice. Only
    such tokens may differ in text and offset.
    """
    assert len(got.tokens) == len(want.tokens)
    for k, (g, w) in enumerate(zip(got.tokens, want.tokens)):
        if g != w:
            assert g == "" or (k > 0 and got.tokens[k - 1] == ""), (k, g, w)
        else:
            assert got.token_offsets[k] == want.token_offsets[k], (k, g)
    assert got.prompt_tokens == want.prompt_tokens
    diff = np.abs(got.logprobs - want.logprobs).max()
    assert diff < tol, f"max per-token difference {diff:.2e} >= {tol}"


def test_protocols(http_scorer: OpenAICompletionsScorer) -> None:
    assert isinstance(http_scorer, Scorer)


def test_logprobs_agree_with_in_process_scorer(
    http_scorer: OpenAICompletionsScorer, reference: list[ResponseLogprobs]
) -> None:
    results = http_scorer.score(REQUESTS)
    assert len(results) == len(REQUESTS)
    for request, got, want in zip(REQUESTS, results, reference):
        assert "".join(got.tokens) == request.response
        assert_agree(got, want)
        assert np.all(got.logprobs <= 0)


async def test_async_agrees_with_in_process_scorer(
    http_scorer: OpenAICompletionsScorer, reference: list[ResponseLogprobs]
) -> None:
    results = await http_scorer.ascore(REQUESTS)
    for got, want in zip(results, reference):
        assert_agree(got, want)


async def test_many_requests_in_flight(
    http_scorer: OpenAICompletionsScorer, reference: list[ResponseLogprobs]
) -> None:
    """24 requests, 8 in flight: each result matches its own request (no mix-ups)."""
    order = [i % len(REQUESTS) for i in range(24)]
    results = await http_scorer.ascore([REQUESTS[i] for i in order])
    for i, got in zip(order, results):
        assert_agree(got, reference[i])
    sync = http_scorer.score([REQUESTS[i] for i in order[:10]])
    for i, got in zip(order, sync):
        assert_agree(got, reference[i])


def test_text_mode_without_tokenize(
    vllm_server: VLLMServer, smollm2_scorer, reference: list[ResponseLogprobs]
) -> None:
    """Text mode (for servers without /tokenize): same numbers where the boundary is clean,
    a clear error where the server's joint tokenization merges across it."""
    scorer = OpenAICompletionsScorer(
        vllm_server.base_url,
        "smollm2",
        chat_template_renderer=smollm2_scorer.render_prompt,
    )
    scorer._has_tokenize = False  # as a server without /tokenize
    clean = [0, 1, 2]
    for i, got in zip(clean, scorer.score([REQUESTS[i] for i in clean])):
        assert_agree(got, reference[i])
    with pytest.raises(ScorerError, match="merges with the end of the prompt"):
        scorer.score([REQUESTS[3]])


def test_generate_matches_in_process_greedy(
    http_scorer: OpenAICompletionsScorer, smollm2_scorer
) -> None:
    prompts = [REQUESTS[0].prompt, "Q: What is the capital of Germany?\nA:"]
    got = http_scorer.generate(prompts, max_new_tokens=16)
    want = smollm2_scorer.generate(prompts, max_new_tokens=16)
    assert got == want
    assert "Paris" in got[0]


def test_scorer_from_langchain_chat_model(
    vllm_server: VLLMServer, reference: list[ResponseLogprobs]
) -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    from camab_rag.scorers import resolve_scorer

    llm = langchain_openai.ChatOpenAI(
        base_url=vllm_server.base_url, model="smollm2", api_key="sk-local-unused"
    )
    [got] = resolve_scorer(llm=llm).score([REQUESTS[0]])
    assert_agree(got, reference[0])


def test_attribution_over_http_matches_in_process(
    http_scorer: OpenAICompletionsScorer, smollm2_scorer
) -> None:
    question = "What is the capital of France?"
    documents = [
        "Berlin is the capital of Germany. It has many museums.",
        "Paris is the capital of France. The Seine flows through Paris.",
        "Madrid is the capital of Spain.",
    ]
    answer = "The capital of France is Paris."
    over_http = camab_rag.attribute(
        question, documents, answer, http_scorer, budget=12, granularity="chunk"
    )
    in_process = camab_rag.attribute(
        question, documents, answer, smollm2_scorer, budget=12, granularity="chunk"
    )
    assert over_http.scores.shape == (3,)
    assert over_http.n_queries == in_process.n_queries
    np.testing.assert_allclose(over_http.scores, in_process.scores, atol=1e-2)
    assert int(np.argmax(over_http.scores)) == 1


def test_unknown_model_name_is_a_clear_error(vllm_server: VLLMServer) -> None:
    scorer = OpenAICompletionsScorer(vllm_server.base_url, "no-such-model", max_retries=0)
    with pytest.raises(ScorerError, match="no-such-model"):
        scorer.score([REQUESTS[2]])


def test_event_loop_reuse(http_scorer: OpenAICompletionsScorer) -> None:
    """ascore works from fresh event loops one after another (no client bound to a loop)."""
    for _ in range(2):
        [got] = asyncio.run(http_scorer.ascore([REQUESTS[2]]))
        assert "".join(got.tokens) == REQUESTS[2].response


def test_wrong_model_name_says_what_the_server_serves(vllm_server: VLLMServer) -> None:
    """A model the server does not serve is named with the ones it does, not reported as a
    missing /tokenize (the old message), sync and async, chat and text prompts."""
    from camab_rag.errors import ModelNotServedError

    scorer = OpenAICompletionsScorer(vllm_server.base_url, "gpt-4", timeout=60)
    att = camab_rag.Attributor(scorer=scorer, budget=4)
    with pytest.raises(ModelNotServedError) as caught:
        att.run("Who?", ["Ann fixes bikes.", "Bob sells tyres."], "Ann.")
    assert str(caught.value) == (
        f"model 'gpt-4' is not served at {vllm_server.base_url} (it serves: smollm2): "
        "pass model= one of the names its /v1/models lists"
    )
    assert caught.value.served == ("smollm2",)
    with pytest.raises(ModelNotServedError, match=r"\(it serves: smollm2\)"):
        asyncio.run(scorer.ascore([ScoreRequest("Q: colour?\nA:", " red")]))
    scorer.close()

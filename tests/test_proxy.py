"""The proxy scorer: it takes over only when the answering model cannot score, never
silently (``result.scored_by``, the rendered citations, the CLI output)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import camab_rag.scorers.proxy as proxy_module
from camab_rag import aattribute, attribute, cite
from camab_rag.errors import CannotScoreError, InputError, ScorerError
from camab_rag.result import AttributionResult
from camab_rag.scorers.base import BaseScorer, ResponseLogprobs, ScoredBy, ScoreRequest, scored_by
from camab_rag.scorers.openai_completions import OpenAICompletionsScorer
from camab_rag.scorers.proxy import ProxyFallbackScorer, ScorerCache, _own_or_proxy
from camab_rag.scorers.transport import NoPromptLogprobsError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chat_only_server import ChatOnlyServer
from fakes import KeywordScorer

DOCUMENTS = ["Paris is the capital of France.", "Cats sleep a lot.", "The Seine flows."]
QUESTION = "What is the capital of France?"
ANSWER = "Paris is the capital."


class Unable(BaseScorer):
    """A model that cannot score a given text (like a hosted chat API)."""

    model = "closed-chat"

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error or NoPromptLogprobsError("the server returns no prompt log-probs")
        self.calls = 0

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.calls += 1
        raise self.error


class NamedKeywordScorer(KeywordScorer):
    model_name = "small-proxy"


def test_the_proxy_takes_over_when_the_model_cannot_score_and_says_so() -> None:
    own, proxy = Unable(), NamedKeywordScorer()
    scorer = ProxyFallbackScorer(own, proxy)
    assert scorer.scored_by == ScoredBy("closed-chat")  # nothing has failed yet
    result = attribute(QUESTION, DOCUMENTS, ANSWER, scorer, budget=8, granularity="chunk")
    assert own.calls == 1  # asked once, then never again
    assert len(proxy.calls) == 8 and result.n_queries == 8
    assert result.scored_by == ScoredBy(
        "small-proxy", proxy=True, reason="the server returns no prompt log-probs"
    )
    assert result.top_documents(1) == [0]
    assert AttributionResult.from_dict(result.to_dict()).scored_by == result.scored_by
    assert result.to_dict()["scored_by"] == {
        "model": "small-proxy",
        "proxy": True,
        "reason": "the server returns no prompt log-probs",
    }


def test_the_async_path_falls_back_the_same_way() -> None:
    scorer = ProxyFallbackScorer(Unable(), NamedKeywordScorer())
    result = asyncio.run(
        aattribute(QUESTION, DOCUMENTS, ANSWER, scorer, budget=8, granularity="chunk")
    )
    assert result.scored_by is not None and result.scored_by.proxy
    assert result.top_documents(1) == [0]


def test_a_model_that_is_down_is_not_replaced_by_the_proxy() -> None:
    proxy = NamedKeywordScorer()
    scorer = ProxyFallbackScorer(Unable(ScorerError("connection refused")), proxy)
    with pytest.raises(ScorerError, match="connection refused"):
        attribute(QUESTION, DOCUMENTS, ANSWER, scorer, budget=4, granularity="chunk")
    assert proxy.calls == [] and scorer.scored_by.proxy is False


def test_own_or_proxy() -> None:
    proxy = NamedKeywordScorer()

    def cannot_build() -> object:
        raise InputError("the chat client talks to OpenAI's own API")

    fallback = _own_or_proxy(cannot_build, proxy)
    assert isinstance(fallback, ProxyFallbackScorer)
    assert fallback.scored_by == ScoredBy(
        "small-proxy", proxy=True, reason="the chat client talks to OpenAI's own API"
    )
    with pytest.raises(InputError, match="OpenAI's own API"):
        _own_or_proxy(cannot_build, None)  # no proxy: the error as it was
    own = KeywordScorer()
    assert _own_or_proxy(lambda: own, None) is own
    wrapped = _own_or_proxy(lambda: own, proxy)
    assert wrapped.own is own and _own_or_proxy(lambda: wrapped, proxy) is wrapped
    with pytest.raises(InputError, match="proxy must have a score"):
        ProxyFallbackScorer(own, object())


def test_every_result_names_its_scorer() -> None:
    result = attribute(QUESTION, DOCUMENTS, ANSWER, NamedKeywordScorer(), budget=4)
    assert result.scored_by == ScoredBy("small-proxy")
    assert scored_by(KeywordScorer()) == ScoredBy("KeywordScorer")


def test_citations_show_a_proxy_escaped_in_every_format() -> None:
    class Odd(NamedKeywordScorer):
        model_name = "<b>tiny*</b>"

    scorer = ProxyFallbackScorer(Unable(), Odd())
    result = attribute(QUESTION, DOCUMENTS, ANSWER, scorer, budget=8, granularity="chunk")
    cited = cite(result, DOCUMENTS)
    assert cited.to_dict()["scored_by"]["proxy"] is True
    assert "Attributed by a proxy model (<b>tiny*</b>)" in cited.to_terminal(color=False)
    assert "&lt;b&gt;tiny*&lt;/b&gt;" in cited.to_html() and "<b>tiny" not in cited.to_html()
    assert "tiny\\*" in cited.to_markdown()
    own = cite(attribute(QUESTION, DOCUMENTS, ANSWER, KeywordScorer(), budget=4), DOCUMENTS)
    assert "proxy" not in own.to_terminal(color=False)


def test_a_chat_only_server_cannot_score() -> None:
    """A hosted chat model behind /v1/completions answers 404 "not supported": that is a
    model that cannot score (a proxy can), not a wrong URL."""
    with ChatOnlyServer(lambda messages: "Paris.") as server:
        scorer = OpenAICompletionsScorer(server.base_url, server.model)
        try:
            with pytest.raises(NoPromptLogprobsError, match="does not serve /v1/completions"):
                scorer.score([ScoreRequest("Q: capital of France?\nA:", " Paris.")])
            chat = [{"role": "user", "content": "capital of France?"}]
            with pytest.raises(CannotScoreError, match="chat template") as raised:
                scorer.score([ScoreRequest(chat, "Paris.")])
        finally:
            scorer.close()
    # the error leads with the fix that works for a chat API; a proxy records the cause
    assert str(raised.value).startswith("pass proxy=camab_rag.default_scorer()")
    assert raised.value.reason.startswith(f"the server at {server.base_url} cannot score")
    with ChatOnlyServer(lambda messages: "Paris.") as server:
        own = OpenAICompletionsScorer(server.base_url, server.model)
        try:
            result = attribute(
                QUESTION, DOCUMENTS, ANSWER, ProxyFallbackScorer(own, KeywordScorer()), budget=4
            )
        finally:
            own.close()
    assert result.status == "ok" and result.scored_by is not None
    reason = result.scored_by.reason or ""
    assert reason.startswith("the server at") and "pass proxy" not in reason


class UnableAtFirst(KeywordScorer):
    """A model that could not score on its first call (e.g. a server being upgraded)."""

    model_name = "own-model"

    def __init__(self) -> None:
        super().__init__()
        self.refusals = 1

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        if self.refusals:
            self.refusals -= 1
            raise NoPromptLogprobsError("no prompt log-probs yet")
        return super().score(requests)


@pytest.mark.parametrize(("after", "own_again"), [(0.0, True), (600.0, False)])
def test_the_own_model_is_probed_again_after_the_interval(
    after: float, own_again: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37: on main a switch to the proxy was for good. The integrations' scorer cache
    re-probes the own model as an attribution starts, once the interval (600 s) has passed."""
    monkeypatch.setattr(proxy_module, "_RECHECK_AFTER_S", after)
    cache = ScorerCache()
    built = ProxyFallbackScorer(UnableAtFirst(), NamedKeywordScorer())
    first = attribute(
        QUESTION, DOCUMENTS, ANSWER, cache.get(build=lambda: built, key="k"), budget=4
    )
    assert first.scored_by is not None and first.scored_by.proxy
    second = attribute(
        QUESTION, DOCUMENTS, ANSWER, cache.get(build=lambda: built, key="k"), budget=4
    )
    assert second.scored_by is not None and second.scored_by.proxy is not own_again

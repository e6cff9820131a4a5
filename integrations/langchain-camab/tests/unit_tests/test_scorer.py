"""Which scorer a chain gets: explicit, its in-process model, or its ChatOpenAI's server."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from langchain_camab import (
    CamabAttributor,
    CamabCallbackHandler,
    CamabChatModel,
    ScorerUnavailableError,
)
from langchain_camab.callbacks import LLMCall
from langchain_camab.chat_models import MODEL_KEY, scorer_from_run
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.load import dumpd
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from camab_rag.errors import InputError
from camab_rag.scorers import resolve_scorer
from camab_rag.scorers.openai_completions import OpenAICompletionsScorer
from tests.fakes import KeywordScorer


class Generator(KeywordScorer):
    """A fake in-process model: generates and scores."""

    def generate(self, prompts: Any, *, max_new_tokens: int = 128) -> list[str]:
        return ["Paris." for _ in prompts]


def test_explicit_scorer_is_checked() -> None:
    scorer = KeywordScorer()
    assert resolve_scorer(scorer) is scorer
    with pytest.raises(InputError, match="scorer must have a score"):
        resolve_scorer(object())
    with pytest.raises(ScorerUnavailableError, match=r"pass scorer=\.\.\. or llm="):
        resolve_scorer(None)


def test_chat_openai_with_a_base_url_gives_the_http_scorer() -> None:
    llm = ChatOpenAI(
        model="smollm2", base_url="http://127.0.0.1:9/v1", api_key=SecretStr("sk-test")
    )
    scorer = resolve_scorer(llm=llm)
    assert isinstance(scorer, OpenAICompletionsScorer)
    assert "sk-test" not in repr(scorer)
    bound = resolve_scorer(llm=llm.bind(stop=["\n"]))
    assert isinstance(bound, OpenAICompletionsScorer)


def test_openai_own_api_is_refused_clearly() -> None:
    llm = ChatOpenAI(model="gpt-4o-mini", api_key=SecretStr("sk-test"))
    with pytest.raises(ScorerUnavailableError, match="cannot score with the chain's model"):
        resolve_scorer(llm=llm)


def test_scorer_rebuilt_from_what_callbacks_see(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    llm = ChatOpenAI(model="smollm2", base_url="http://127.0.0.1:9/v1")
    scorer = scorer_from_run(dumpd(llm), llm._get_invocation_params())
    assert isinstance(scorer, OpenAICompletionsScorer)
    fake = FakeListChatModel(responses=["x"])
    with pytest.raises(ScorerUnavailableError, match="not an OpenAI-compatible chat model"):
        scorer_from_run(dumpd(fake), fake._get_invocation_params())


def test_in_process_chat_model_lends_its_scorer() -> None:
    generator = Generator()
    llm = CamabChatModel(generator=generator, max_new_tokens=8)
    assert resolve_scorer(llm=llm) is generator
    params = llm._get_invocation_params()
    assert scorer_from_run(None, params) is generator
    assert params[MODEL_KEY].startswith("camab-")
    assert llm.invoke("Capital of France?").content == "Paris."
    assert params["model"] == "Generator"  # no name: its class name
    with pytest.raises(TypeError, match="CamabChatModel needs generator= an object with generate"):
        CamabChatModel(generator=object())
    mute = CamabChatModel(generator=SimpleNamespace(generate=lambda *a, **k: ["Paris is  big."]))
    with pytest.raises(TypeError, match="SimpleNamespace cannot score: it has no score"):
        _ = mute.scorer
    pieces = [c.content for c in mute.stream("q") if c.content]  # LangChain ends on ""
    assert pieces == ["Paris", " is", "  big."]  # word by word, as a server's tokens


def test_a_proxy_scores_for_a_model_that_cannot() -> None:
    """OpenAI's own chat models give no prompt log-probs: with a proxy the chain is
    attributed by it, and the scorer says so; a scorer that can score keeps scoring."""
    proxy = KeywordScorer()
    llm = ChatOpenAI(model="gpt-4o-mini", api_key=SecretStr("sk-test"))
    scorer = resolve_scorer(llm=llm, proxy=proxy)
    assert scorer.proxy is proxy and scorer.scored_by.proxy is True
    assert "OpenAI's own API" in (scorer.scored_by.reason or "")
    assert resolve_scorer(proxy=proxy).scored_by.proxy is True  # no model given
    own = KeywordScorer()
    assert resolve_scorer(own, proxy=proxy).own is own
    assert resolve_scorer(own, proxy=proxy).scored_by.proxy is False
    with pytest.raises(ScorerUnavailableError, match="OpenAI's own API"):
        resolve_scorer(llm=llm)  # without a proxy: the error as before


def test_the_retry_budget_of_the_chains_own_scorer_is_settable() -> None:
    """#26 item 10: with scorer=None the HTTP scorer is built by the integration, and a
    dead server's retries must still be boundable by the user."""
    llm = ChatOpenAI(model="smollm2", base_url="http://127.0.0.1:9/v1", api_key=SecretStr("x"))
    built = resolve_scorer(llm=llm, retry_budget_s=0.25, max_retries=1)
    assert built.retry.budget_s == 0.25 and built.retry.max_retries == 1
    assert resolve_scorer(llm=llm).retry.budget_s == 3.0  # the default suits a chat
    handler = CamabCallbackHandler(scorer_options={"retry_budget_s": 0.0})
    call = LLMCall("Q?", model=(dumpd(llm), {"model_name": "smollm2"}))
    assert handler._scorer_for(call).retry.budget_s == 0.0
    step = CamabAttributor(llm=llm, scorer_options={"retry_budget_s": 0.5})
    source = step.scorers
    assert resolve_scorer(source.scorer, llm=source.llm, **source.options).retry.budget_s == 0.5


def test_the_scorer_of_a_handler_or_step_is_built_once() -> None:
    """One HTTP scorer (one connection pool) per handler or step, not one per answer; a
    proxy fallback is kept too, so a model found unable to score is not asked again."""
    llm = ChatOpenAI(model="smollm2", base_url="http://127.0.0.1:9/v1", api_key=SecretStr("x"))
    call = LLMCall("Q?", model=(dumpd(llm), {"model_name": "smollm2"}))
    handler = CamabCallbackHandler(llm=llm, proxy=KeywordScorer())
    assert handler._scorer_for(call) is handler._scorer_for(call)
    from_run = CamabCallbackHandler()
    assert from_run._scorer_for(call) is from_run._scorer_for(call)
    step = CamabAttributor(llm=llm)
    assert step.scorers.get() is step.scorers.get()
    unable = CamabAttributor(llm=object())  # no base URL: no scorer can be built for it
    for _ in range(2):  # a failed build is not cached: it fails each time
        with pytest.raises(ScorerUnavailableError, match="pass proxy="):
            unable.scorers.get()

"""Which scorer attributes a chain's answer (the one resolver,
camab_rag.scorers.resolve_scorer, and the integrations' per-object ScorerCache): the given
one, the model's own, a proxy, or one rebuilt from a trace; a key named by an environment
variable goes to OpenAI's own host only."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from fakes import KeywordScorer

from camab_rag.errors import InputError, ScorerUnavailableError
from camab_rag.scorers import resolve_scorer
from camab_rag.scorers.openai_completions import OpenAICompletionsScorer
from camab_rag.scorers.proxy import ScorerCache

LOCAL = "http://127.0.0.1:9/v1"


def test_a_models_scorer_is_its_own_its_server_or_an_error_saying_what_to_pass() -> None:
    own, scoring = KeywordScorer(), KeywordScorer()
    assert resolve_scorer(llm=SimpleNamespace(scorer=own)) is own
    assert resolve_scorer(llm=scoring) is scoring
    client = SimpleNamespace(model_name="m", openai_api_base=LOCAL, openai_api_key="sk-x")
    assert isinstance(resolve_scorer(llm=client, timeout=2.0), OpenAICompletionsScorer)
    served = resolve_scorer(llm=SimpleNamespace(api_base=LOCAL, model="m"))  # LlamaIndex's
    assert isinstance(served, OpenAICompletionsScorer) and "127.0.0.1:9" in repr(served)
    with pytest.raises(ScorerUnavailableError, match=r"pass proxy=.*cannot score with") as info:
        resolve_scorer(llm=object())
    assert info.value.reason.startswith("cannot score with the chain's model object")
    with pytest.raises(ScorerUnavailableError, match=r"OpenAI-compatible chat model: .* Simple"):
        resolve_scorer(llm=SimpleNamespace(scorer=None))


def test_a_served_model_gets_the_given_key_and_openai_is_refused() -> None:
    assert "api_key=<none>" in repr(resolve_scorer(base_url=LOCAL, model="m"))
    with pytest.raises(ScorerUnavailableError, match="OpenAI's own API") as info:
        resolve_scorer(base_url="https://api.openai.com/v1", model="m", api_key="sk-secret")
    assert "sk-secret" not in str(info.value)
    assert "api_key=<set>" in repr(resolve_scorer(base_url=LOCAL, model="m", api_key="given"))
    with pytest.raises(ScorerUnavailableError, match="needs model="):
        resolve_scorer(base_url=LOCAL)


def test_resolution_checks_the_given_scorer_and_falls_back_to_the_proxy() -> None:
    given, proxy = KeywordScorer(), KeywordScorer()
    assert resolve_scorer(given) is given
    with pytest.raises(InputError, match="scorer must have a score"):
        resolve_scorer(object())
    with pytest.raises(ScorerUnavailableError, match=r"pass scorer=\.\.\. or llm="):
        resolve_scorer(None)
    fallback = resolve_scorer(llm=object(), proxy=proxy)
    assert fallback.proxy is proxy and fallback.scored_by.proxy is True


def test_a_source_builds_each_scorer_once() -> None:
    builds: list[dict[str, object]] = []

    def build(**options: object) -> KeywordScorer:
        builds.append(options)
        return KeywordScorer()

    traced = ScorerCache(options={"timeout": 1})
    assert traced.get("seen", build, "model-a") is traced.get("seen", build, "model-a")
    assert builds == [{"timeout": 1}]
    configured = ScorerCache(scorer=KeywordScorer())
    assert configured.get("seen", build, "model-a") is configured.get()
    assert len(builds) == 1
    model, other = SimpleNamespace(scorer=KeywordScorer()), SimpleNamespace(scorer=KeywordScorer())
    assert traced.get(model) is model.scorer and traced.get(other) is other.scorer
    assert configured.get(model) is configured.get()

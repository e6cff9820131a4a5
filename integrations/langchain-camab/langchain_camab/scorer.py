"""Find the scorer for a chain: explicit, the in-process chat model, or the chain's own
OpenAI-compatible chat model (``ChatOpenAI`` with a base URL)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from camab_rag.integration import (
    PROXY_FIX,
    InputError,
    LLMCall,
    ScorerCache,
    cannot_score_reason,
    checked_scorer,
    is_openai_endpoint,
    own_or_proxy,
    scorer_from_chat_client,
)
from langchain_camab.chat_models import MODEL_KEY, CamabChatModel, registered_model


class ScorerUnavailableError(InputError):
    """No scorer could be built for the chain's model (the message says what to pass;
    ``reason``: the cause alone, for ``scored_by.reason`` when a proxy takes over)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


def scorer_from_llm(llm: object, **options: Any) -> Any:
    """The scorer for a chat model object: its own weights for :class:`CamabChatModel`,
    the HTTP scorer of its server for an OpenAI-compatible client (``ChatOpenAI``);
    ``options`` go to that HTTP scorer (e.g. ``retry_budget_s``, ``timeout``)."""
    if isinstance(llm, CamabChatModel):
        return llm.scorer
    bound = getattr(llm, "bound", None)  # llm.bind(...) / with_config wrappers
    if bound is not None and bound is not llm:
        return scorer_from_llm(bound, **options)
    if callable(getattr(llm, "score", None)):
        return llm
    try:
        return scorer_from_chat_client(llm, **options)
    except InputError as error:
        kind = type(llm).__name__
        cause = f"cannot score with the chain's model {kind}: {cannot_score_reason(error)}"
        raise ScorerUnavailableError(
            f"{PROXY_FIX}, or scorer=camab_rag.OpenAICompletionsScorer(...) for a server "
            f"that scores a given text (`camab serve`): {cause}. Attribution needs the "
            "log-probabilities of a given text",
            reason=cause,
        ) from error


NO_KEY_FROM_RUN = (
    "the handler rebuilt the scorer from what LangChain's callbacks show of the chain's "
    "model, where its API key is only the name of an environment variable; that variable "
    "is read for OpenAI's own endpoint only, so no key was sent to this server: pass "
    "llm=<the chain's chat model> (its own key is used) or scorer=... to the handler"
)
"""Why a server refused a scorer rebuilt from a serialized run (see :func:`scorer_from_run`)."""


def _secret(value: object, base_url: str) -> str | None:
    """The API key of a serialized model: a serialized secret names its environment
    variable, read only for OpenAI's own endpoint (a key never goes elsewhere)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and value.get("type") == "secret":
        ids = value.get("id") or []
        return os.environ.get(str(ids[0])) if ids and is_openai_endpoint(base_url) else None
    return None


def scorer_from_run(
    serialized: Mapping[str, Any] | None, params: Mapping[str, Any], **options: Any
) -> Any:
    """The scorer for the model of an LLM run, from what callbacks see of it: a
    :class:`CamabChatModel` by its key, else an OpenAI-compatible client rebuilt from its
    serialized base URL and model (no key unless OpenAI's own, see :data:`NO_KEY_FROM_RUN`)."""
    model = registered_model(params.get(MODEL_KEY))
    if model is not None:
        return model.scorer
    kwargs = dict((serialized or {}).get("kwargs") or {})
    base_url = kwargs.get("openai_api_base") or kwargs.get("base_url") or kwargs.get("api_base")
    name = params.get("model") or params.get("model_name") or kwargs.get("model_name")
    ident = ".".join(str(p) for p in (serialized or {}).get("id") or []) or "unknown model"
    if not base_url or not name:
        raise ScorerUnavailableError(
            f"cannot build a scorer from the chain's model ({ident}): it is not an "
            "OpenAI-compatible chat model with a base URL. Attribution needs the "
            "log-probabilities of a given text: pass scorer=camab_rag.default_scorer(), "
            "scorer=camab_rag.OpenAICompletionsScorer(...) or llm=<the chain's chat model>"
        )
    api_key = _secret(kwargs.get("openai_api_key") or kwargs.get("api_key"), str(base_url))
    name, base_url = str(name), str(base_url)
    client = SimpleNamespace(model_name=name, model=name, openai_api_base=base_url)
    client.base_url, client.openai_api_key, client.api_key = base_url, api_key, api_key
    return scorer_from_llm(client, **options)


def resolve_scorer(
    scorer: object,
    llm: object = None,
    proxy: object = None,
    options: Mapping[str, Any] | None = None,
) -> Any:
    """``scorer`` when given (checked), else the scorer of ``llm`` (built with ``options``);
    with a ``proxy``, the proxy scores whenever the chain's model cannot
    (:func:`camab_rag.integration.own_or_proxy`)."""
    if proxy is not None:
        return own_or_proxy(lambda: resolve_scorer(scorer, llm, None, options), proxy)
    if scorer is not None:
        return checked_scorer(scorer)
    if llm is None:
        raise ScorerUnavailableError(
            "no scorer: pass scorer=... or llm=<the chain's chat model> (scorer=None uses "
            "the chain's own model, which this step cannot see)"
        )
    return scorer_from_llm(llm, **dict(options or {}))


def scorer_for_call(owner: Any, cache: ScorerCache, call: LLMCall | None = None) -> Any:
    """The scorer of a handler or step (``owner``: its ``scorer``, ``llm``, ``proxy`` and
    ``scorer_options``), or with ``call`` of that LLM call's model as callbacks saw it
    (``call.model``: its serialized form and invocation parameters), built once per model."""
    options = owner.scorer_options
    if call is None:
        return cache.get(
            "configured", lambda: resolve_scorer(owner.scorer, owner.llm, owner.proxy, options)
        )
    serialized, params = call.model
    key = repr((serialized or {}).get("id")) + repr(sorted(map(str, params.items())))
    build = lambda: scorer_from_run(serialized, params, **options)  # noqa: E731
    return cache.get(key, lambda: own_or_proxy(build, owner.proxy))

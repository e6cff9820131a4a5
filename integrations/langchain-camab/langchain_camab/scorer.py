"""Find the scorer for a chain: explicit, the in-process chat model, or the chain's own
OpenAI-compatible chat model (``ChatOpenAI`` with a base URL); the decision is the core's
(:mod:`camab_rag.integration`: ``ScorerSource``), the LangChain types are read here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from camab_rag import integration as core
from langchain_camab.chat_models import MODEL_KEY, MODELS


def scorer_from_llm(llm: object, **options: Any) -> Any:
    """The scorer for a chat model object: its own weights for a ``CamabChatModel``,
    the HTTP scorer of its server for an OpenAI-compatible client (``ChatOpenAI``);
    ``options`` go to that HTTP scorer (e.g. ``retry_budget_s``, ``timeout``)."""
    bound = getattr(llm, "bound", None)  # llm.bind(...) / with_config wrappers
    if bound is not None and bound is not llm:
        return scorer_from_llm(bound, **options)
    return core.scorer_from_model(llm, **options)


def resolve_scorer(
    scorer: object,
    llm: object = None,
    proxy: object = None,
    options: Mapping[str, Any] | None = None,
) -> Any:
    """``scorer`` when given (checked), else the scorer of ``llm`` (built with ``options``);
    with a ``proxy``, the proxy scores whenever the chain's model cannot."""
    return core.resolve_scorer(scorer, llm, proxy, options, scorer_from_llm)


def scorer_from_run(
    serialized: Mapping[str, Any] | None, params: Mapping[str, Any], **options: Any
) -> Any:
    """The scorer for the model of an LLM run, from what callbacks see of it: a
    :class:`CamabChatModel` by its key, else an OpenAI-compatible client rebuilt from its
    serialized base URL and model (a key only for OpenAI's own endpoint: a serialized
    secret names its environment variable)."""
    model = MODELS.get(params.get(MODEL_KEY))
    if model is not None:
        return model.scorer
    kwargs = dict((serialized or {}).get("kwargs") or {})
    key = kwargs.get("openai_api_key") or kwargs.get("api_key")
    ids = key.get("id") if isinstance(key, Mapping) and key.get("type") == "secret" else None
    return core.scorer_from_endpoint(
        kwargs.get("openai_api_base") or kwargs.get("base_url") or kwargs.get("api_base"),
        params.get("model") or params.get("model_name") or kwargs.get("model_name"),
        api_key=key if isinstance(key, str) else None,
        key_variable=str(ids[0]) if ids else None,
        ident=".".join(str(p) for p in (serialized or {}).get("id") or []) or "unknown model",
        **options,
    )

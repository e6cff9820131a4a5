"""How camab-rag reads LangChain's chat models: ``llm.bind(...)`` is unwrapped for the one
resolver (:func:`camab_rag.scorers.resolve_scorer`, registered on import), and a run's
model is rebuilt from what callbacks see of it (:func:`scorer_from_run`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from camab_rag.errors import ScorerUnavailableError
from camab_rag.scorers import resolve_scorer
from camab_rag.scorers.proxy import is_openai_endpoint, register_model_reader
from langchain_camab.chat_models import MODEL_KEY, MODELS


def _unbound(llm: object) -> object:
    """The chat model inside ``llm.bind(...)`` / ``with_config`` wrappers."""
    while (bound := getattr(llm, "bound", None)) is not None and bound is not llm:
        llm = bound
    return llm


register_model_reader(_unbound)


def scorer_from_run(
    serialized: Mapping[str, Any] | None, params: Mapping[str, Any], **options: Any
) -> Any:
    """The scorer for the model of an LLM run, from what callbacks see of it: a
    :class:`CamabChatModel` by its key, else an OpenAI-compatible client rebuilt from its
    serialized base URL and model (a key only for OpenAI's own endpoint: a serialized
    secret names its environment variable)."""
    model = MODELS.get(str(params.get(MODEL_KEY)))
    if model is not None:
        return model.scorer
    kwargs = dict((serialized or {}).get("kwargs") or {})
    url = kwargs.get("openai_api_base") or kwargs.get("base_url") or kwargs.get("api_base")
    name = params.get("model") or params.get("model_name") or kwargs.get("model_name")
    if not url or not name:
        ident = ".".join(str(p) for p in (serialized or {}).get("id") or []) or "unknown model"
        raise ScorerUnavailableError(
            f"cannot build a scorer from the chain's model ({ident}): it is not an "
            "OpenAI-compatible chat model with a base URL. Attribution needs the "
            "log-probabilities of a given text: pass scorer=camab_rag.default_scorer(), "
            "scorer=camab_rag.OpenAICompletionsScorer(...) or llm=<the chain's chat model>"
        )
    key = kwargs.get("openai_api_key") or kwargs.get("api_key")
    ids = key.get("id") if isinstance(key, Mapping) and key.get("type") == "secret" else None
    api_key = key if isinstance(key, str) else None
    if api_key is None and ids and is_openai_endpoint(str(url)):
        api_key = os.environ.get(str(ids[0]))
    return resolve_scorer(base_url=str(url), model=str(name), api_key=api_key, **options)

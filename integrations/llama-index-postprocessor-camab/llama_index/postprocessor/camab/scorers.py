"""The scorer of a query: the LLM's own (an OpenAI-compatible server, or an LLM that
carries a scorer), a given one, or a proxy when the LLM cannot score."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from camab_rag.integration import (
    PROXY_FIX,
    ChatAPICannotScoreError,
    InputError,
    checked_scorer,
    own_or_proxy,
    scorer_from_chat_client,
)
from camab_rag.integration import ScorerCache as BuiltScorers


def scorer_from_llm(llm: object, **options: Any) -> Any:
    """The scorer for a LlamaIndex LLM: its own ``llm.scorer`` (``CamabLocalLLM``), the
    HTTP scorer (built with ``options``) of an OpenAI-compatible server (``api_base``),
    else an :class:`~camab_rag.errors.InputError` asking for ``scorer=`` or ``proxy=``."""
    if llm is None:
        raise InputError(
            "no scorer: pass scorer=camab_rag.default_scorer() (or an OpenAICompletionsScorer), "
            "or use an OpenAI-compatible LLM (OpenAILike / OpenAI with api_base)"
        )
    own = getattr(llm, "scorer", None)
    if callable(getattr(own, "score", None)):
        return own
    api_base = getattr(llm, "api_base", None)
    if not isinstance(api_base, str) or not api_base:
        cause = (
            f"cannot build a scorer from {type(llm).__name__}: it is not OpenAI-compatible "
            "(no api_base)"
        )
        raise ChatAPICannotScoreError(
            f"{PROXY_FIX}, or scorer=camab_rag.OpenAICompletionsScorer(base_url, model) for a "
            f"server that scores a given text (`camab serve`): {cause}",
            reason=cause,
        )
    return scorer_from_chat_client(llm, **options)


class ScorerCache:
    """One scorer per LLM object (an HTTP scorer keeps its connection pool), or per given
    scorer; with a ``proxy``, each falls back to it when its model cannot score (and a
    model found unable is asked again only after its re-probe interval)."""

    def __init__(self, proxy: Any = None, options: Mapping[str, Any] | None = None) -> None:
        self.proxy = checked_scorer(proxy, "proxy")
        self.options = dict(options or {})
        self._built = BuiltScorers()

    def get(self, llm: object, scorer: Any = None) -> Any:
        """The scorer of ``scorer`` (given) or of ``llm``, built once per object."""
        source = scorer if scorer is not None else llm

        def own() -> Any:
            return scorer if scorer is not None else scorer_from_llm(llm, **self.options)

        return self._built.get(id(source), lambda: own_or_proxy(own, self.proxy), owner=source)

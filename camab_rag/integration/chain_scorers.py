"""Which scorer attributes a chain's answer: the one given, the chain's own model, or a proxy.

An integration knows its framework's model types; the rest of the decision is here, one
rule for every framework. :func:`resolve_scorer` takes the given scorer, else the chain
model's (with a proxy whenever that model cannot score); :func:`scorer_from_model` finds a
model's scorer (its in-process weights, else the HTTP scorer of its OpenAI-compatible
server, else a typed error saying what to pass);
:func:`scorer_from_endpoint` rebuilds one from what a trace shows of a model (a key named
by an environment variable is read for OpenAI's own host only: a key never goes
elsewhere); :class:`ScorerSource` is one integration object's choice, built once per model.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from functools import partial
from types import SimpleNamespace
from typing import Any

from camab_rag.errors import CredentialsRefusedError, InputError, ScorerUnavailableError
from camab_rag.scorers.chat_clients import is_openai_endpoint, scorer_from_chat_client
from camab_rag.scorers.echo import PROXY_FIX
from camab_rag.scorers.proxy import ScorerCache, cannot_score_reason, checked_scorer, own_or_proxy

NO_KEY_FROM_RUN = (
    "the handler rebuilt the scorer from what the framework's callbacks show of the chain's "
    "model, where its API key is only the name of an environment variable; that variable "
    "is read for OpenAI's own endpoint only, so no key was sent to this server: pass "
    "llm=<the chain's chat model> (its own key is used) or scorer=... to the handler"
)
"""Why a server refused a scorer rebuilt from a trace (:func:`scorer_from_endpoint`)."""


def scorer_from_model(
    model: object, *, compatible: str = "an OpenAI-compatible chat model", **options: Any
) -> Any:
    """The scorer of a chat model object: its own ``scorer`` (its in-process weights), the
    model itself when it can score, else the HTTP scorer of its OpenAI-compatible server
    (built with ``options``); otherwise a :class:`ScorerUnavailableError` saying what to
    pass (``compatible`` names the framework's OpenAI-compatible models)."""
    if model is None:
        raise ScorerUnavailableError(
            "no scorer: pass scorer=camab_rag.default_scorer() (or an "
            f"OpenAICompletionsScorer), or use {compatible}"
        )
    own = getattr(model, "scorer", None)
    if callable(getattr(own, "score", None)):
        return own
    if callable(getattr(model, "score", None)):
        return model
    try:
        return scorer_from_chat_client(model, **options)
    except InputError as error:
        kind = type(model).__name__
        cause = f"cannot score with the chain's model {kind}: {cannot_score_reason(error)}"
        raise ScorerUnavailableError(
            f"{PROXY_FIX}, or scorer=camab_rag.OpenAICompletionsScorer(...) for a server "
            f"that scores a given text (`camab serve`), or use {compatible}: {cause}. "
            "Attribution needs the log-probabilities of a given text",
            reason=cause,
        ) from error


def scorer_from_endpoint(
    base_url: object,
    model: object,
    *,
    api_key: str | None = None,
    key_variable: str | None = None,
    ident: str = "unknown model",
    **options: Any,
) -> Any:
    """The HTTP scorer of a model known by its server's ``base_url`` and its name (as a
    trace shows it; ``ident`` names it in errors). Without ``api_key``, the environment
    variable ``key_variable`` gives the key for OpenAI's own endpoint only."""
    if not base_url or not model:
        raise ScorerUnavailableError(
            f"cannot build a scorer from the chain's model ({ident}): it is not an "
            "OpenAI-compatible chat model with a base URL. Attribution needs the "
            "log-probabilities of a given text: pass scorer=camab_rag.default_scorer(), "
            "scorer=camab_rag.OpenAICompletionsScorer(...) or llm=<the chain's chat model>"
        )
    url, name = str(base_url), str(model)
    if api_key is None and key_variable and is_openai_endpoint(url):
        api_key = os.environ.get(key_variable)
    client = SimpleNamespace(model_name=name, model=name, openai_api_base=url, base_url=url)
    client.openai_api_key = client.api_key = api_key
    return scorer_from_model(client, **options)


def resolve_scorer(
    scorer: object,
    llm: object = None,
    proxy: object = None,
    options: Mapping[str, Any] | None = None,
    from_model: Callable[..., Any] = scorer_from_model,
) -> Any:
    """``scorer`` when given (checked), else the scorer of ``llm`` (``from_model(llm,
    **options)``); with a ``proxy``, the proxy scores whenever the chain's model cannot
    (:func:`~camab_rag.scorers.proxy.own_or_proxy`)."""
    if proxy is not None:
        return own_or_proxy(lambda: resolve_scorer(scorer, llm, None, options, from_model), proxy)
    if scorer is not None:
        return checked_scorer(scorer)
    if llm is None:
        raise ScorerUnavailableError(
            "no scorer: pass scorer=... or llm=<the chain's chat model> (scorer=None uses "
            "the chain's own model, which this step cannot see)"
        )
    return from_model(llm, **dict(options or {}))


@dataclass
class ScorerSource:
    """One integration object's scorer: ``scorer``, else ``llm``'s (``from_model``), with
    ``proxy`` whenever that model cannot score; each built once (:class:`ScorerCache`)."""

    scorer: object = None
    llm: object = None
    proxy: object = None
    options: dict[str, Any] = field(default_factory=dict)
    from_model: Callable[..., Any] = scorer_from_model
    cache: ScorerCache = field(default_factory=ScorerCache)

    def configured(self) -> Any:
        """The scorer the object was given (:func:`resolve_scorer`)."""
        build = lambda: resolve_scorer(  # noqa: E731
            self.scorer, self.llm, self.proxy, self.options, self.from_model
        )
        return self.cache.get("configured", build)

    def traced(self, key: Hashable | None, build: Callable[..., Any], owner: object = None) -> Any:
        """The scorer of a model a trace showed (``key`` identifies it, ``None``: none seen;
        with ``owner``, for that object only), ``build(**options)`` once per key, with the
        proxy; the configured one when a scorer or llm was given."""
        if key is None or self.scorer is not None or self.llm is not None:
            return self.configured()
        own = partial(own_or_proxy, partial(build, **self.options), self.proxy)
        return self.cache.get(key, own, owner=owner)

    def of_model(self, model: object) -> Any:
        """The configured scorer, else ``model``'s (``from_model``), built once per object."""
        return self.traced(id(model), partial(self.from_model, model), model)

    def explain(self, error: Exception) -> Exception:
        """A key refused by a server whose scorer was rebuilt from a trace, explained."""
        if isinstance(error, CredentialsRefusedError) and self.scorer is None and self.llm is None:
            return ScorerUnavailableError(f"{error}. {NO_KEY_FROM_RUN}")
        return error


__all__ = [
    "NO_KEY_FROM_RUN",
    "ScorerSource",
    "ScorerUnavailableError",
    "resolve_scorer",
    "scorer_from_endpoint",
    "scorer_from_model",
]

"""One integration object's scorers, built once per model.

The rule that picks a scorer is :func:`camab_rag.scorers.resolve_scorer` (the one resolver;
a framework's model types are read by the hook its integration registers);
:class:`ScorerSource` only keeps what it built, so an HTTP scorer keeps its connection pool
and a model that could not score is not asked again until its re-probe interval passed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from camab_rag.errors import CredentialsRefusedError, ScorerUnavailableError
from camab_rag.scorers.proxy import _own_or_proxy, _ScorerCache, resolve_scorer

NO_KEY_FROM_RUN = (
    "the handler rebuilt the scorer from what the framework's callbacks show of the chain's "
    "model, where its API key is only the name of an environment variable; that variable "
    "is read for OpenAI's own endpoint only, so no key was sent to this server: pass "
    "llm=<the chain's chat model> (its own key is used) or scorer=... to the handler"
)
"""Why a server refused a scorer rebuilt from a trace (the callbacks' own rebuild)."""


@dataclass
class ScorerSource:
    """One integration object's scorer: ``scorer``, else ``llm``'s (``from_model``), with
    ``proxy`` whenever that model cannot score; each built once (:class:`ScorerCache`)."""

    scorer: object = None
    llm: object = None
    proxy: object = None
    options: dict[str, Any] = field(default_factory=dict)
    cache: _ScorerCache = field(default_factory=lambda: _ScorerCache())

    def configured(self) -> Any:
        """The scorer the object was given (:func:`~camab_rag.scorers.resolve_scorer`)."""
        build = lambda: resolve_scorer(  # noqa: E731
            self.scorer, llm=self.llm, proxy=self.proxy, **self.options
        )
        return self.cache.get("configured", build)

    def traced(self, key: Hashable | None, build: Callable[..., Any], owner: object = None) -> Any:
        """The scorer of a model a trace showed (``key`` identifies it, ``None``: none seen;
        with ``owner``, for that object only), ``build(**options)`` once per key, with the
        proxy; the configured one when a scorer or llm was given."""
        if key is None or self.scorer is not None or self.llm is not None:
            return self.configured()
        own = partial(_own_or_proxy, partial(build, **self.options), self.proxy)
        return self.cache.get(key, own, owner=owner)

    def of_model(self, model: object) -> Any:
        """The configured scorer, else ``model``'s, built once per object."""
        return self.traced(id(model), partial(resolve_scorer, llm=model), model)

    def explain(self, error: Exception) -> Exception:
        """A key refused by a server whose scorer was rebuilt from a trace, explained."""
        if isinstance(error, CredentialsRefusedError) and self.scorer is None and self.llm is None:
            return ScorerUnavailableError(f"{error}. {NO_KEY_FROM_RUN}")
        return error


__all__ = ["NO_KEY_FROM_RUN", "ScorerSource", "ScorerUnavailableError"]

"""The keyword options every integration object takes, listed once
(:class:`AttributorOptions`, :class:`ChainOptions`: the knobs of :func:`camab_rag.attribute`
with one meaning) and checked once (:func:`checked_options`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from difflib import get_close_matches
from typing import Any, TypedDict

from camab_rag.errors import CredentialsRefusedError, InputError, ScorerUnavailableError
from camab_rag.groundedness import GroundednessFilter
from camab_rag.integration.messages import ProgressHook
from camab_rag.methods import Method
from camab_rag.scorers.proxy import _checked_scorer
from camab_rag.segments import Granularity
from camab_rag.settings import CHAIN_SETTINGS, FIELD_KNOBS, AttributionSettings, resolve_settings

NO_KEY_FROM_RUN = (
    "the handler rebuilt the scorer from what the framework's callbacks show of the chain's "
    "model, where its API key is only the name of an environment variable; that variable "
    "is read for OpenAI's own endpoint only, so no key was sent to this server: pass "
    "llm=<the chain's chat model> (its own key is used) or scorer=... to the handler"
)


def explain_refused_key(error: Exception) -> Exception:
    """A key refused by a server whose scorer was rebuilt from a trace, explained."""
    if isinstance(error, CredentialsRefusedError):
        return ScorerUnavailableError(f"{error}. {NO_KEY_FROM_RUN}")
    return error


class AttributorOptions(TypedDict, total=False):
    """The options every integration object takes (keyword-only, all optional): the
    knobs of :func:`camab_rag.attribute` (each given wins over ``settings``' field),
    ``settings`` (default :data:`CHAIN_SETTINGS`: whole documents, a 120 s deadline),
    ``proxy`` (scores when the chain's model cannot), ``scorer_options`` (of the HTTP
    scorer built for a model) and ``progress(calls_made, total)``."""

    budget: int | None
    method: str | Method | None
    granularity: Granularity | None
    deadline_s: float | None
    groundedness: GroundednessFilter | bool | None
    settings: AttributionSettings | None
    proxy: object
    scorer_options: Mapping[str, Any] | None
    progress: ProgressHook | None


class ChainOptions(AttributorOptions, total=False):
    """:class:`AttributorOptions` and those of a chain step or callback handler: ``llm``
    (the chain's chat model, when no scorer is given), ``strict`` (re-raise attribution
    errors), ``background`` (attribute after returning, pending dicts filled in place),
    ``citations`` (native citations on the answer message), ``max_results`` (kept)."""

    llm: object
    strict: bool
    background: bool
    citations: bool
    max_results: int


def checked_options(
    owner: str, options: Mapping[str, Any], listed: type = ChainOptions
) -> AttributionSettings:
    """The settings of ``options`` (default :data:`CHAIN_SETTINGS`, each knob given in
    place): a name ``listed`` lacks is a ``TypeError`` naming it and ``owner``, a bad
    value an :class:`~camab_rag.errors.InputError`."""
    names = listed.__annotations__
    if unknown := sorted(set(options) - set(names)):
        name = unknown[0]
        hint = ""
        if name in {f.name for f in fields(AttributionSettings) if f.init}:
            hint = f": it is a setting, pass settings=CHAIN_SETTINGS.with_changes({name}=...)"
        elif close := get_close_matches(name, names, n=1):
            hint = f" (did you mean {close[0]!r}?)"
        raise TypeError(f"{owner}() got an unexpected keyword argument {name!r}{hint}")
    progress = options.get("progress")
    if progress is not None and not callable(progress):
        raise InputError(f"progress must be a function progress(calls, total), got {progress!r}")
    knobs = {name: options.get(name) for name in FIELD_KNOBS}
    settings = resolve_settings(options.get("settings"), CHAIN_SETTINGS, **knobs)
    _checked_scorer(options.get("proxy"), "proxy")
    return settings

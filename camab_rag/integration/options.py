"""What every integration object is built from: its keyword options, listed once
(:class:`AttributorOptions`, :class:`ChainOptions`: the knobs of :func:`camab_rag.attribute`
with one meaning), and its scorers (:class:`~camab_rag.scorers.proxy.ScorerCache`, over the
one resolver); :meth:`ChainParts.of` checks and builds them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from difflib import get_close_matches
from typing import Any, TypedDict

from camab_rag.errors import CredentialsRefusedError, InputError, ScorerUnavailableError
from camab_rag.groundedness import GroundednessFilter
from camab_rag.integration.kernel import Runs
from camab_rag.integration.messages import ProgressHook, ProgressRelay
from camab_rag.methods import Method
from camab_rag.scorers.proxy import ScorerCache, _checked_scorer
from camab_rag.segments import Granularity
from camab_rag.settings import (
    CHAIN_SETTINGS,
    FIELD_KNOBS,
    AttributionSettings,
    groundedness_filter,
    resolve_settings,
)

NO_KEY_FROM_RUN = (
    "the handler rebuilt the scorer from what the framework's callbacks show of the chain's "
    "model, where its API key is only the name of an environment variable; that variable "
    "is read for OpenAI's own endpoint only, so no key was sent to this server: pass "
    "llm=<the chain's chat model> (its own key is used) or scorer=... to the handler"
)
"""Why a server refused a scorer rebuilt from a trace (the callbacks' own rebuild)."""


def _explain(error: Exception) -> Exception:
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
    place), once checked: a name ``listed`` lacks is a ``TypeError`` naming it and
    ``owner``, a bad value an :class:`~camab_rag.errors.InputError`."""
    if unknown := sorted(set(options) - set(listed.__annotations__)):
        name = unknown[0]
        hint = ""
        if name in {f.name for f in fields(AttributionSettings) if f.init}:
            hint = f": it is a setting, pass settings=CHAIN_SETTINGS.with_changes({name}=...)"
        elif close := get_close_matches(name, listed.__annotations__, n=1):
            hint = f" (did you mean {close[0]!r}?)"
        raise TypeError(f"{owner}() got an unexpected keyword argument {name!r}{hint}")
    progress = options.get("progress")
    if progress is not None and not callable(progress):
        raise InputError(f"progress must be a function progress(calls, total), got {progress!r}")
    knobs = {name: options.get(name) for name in FIELD_KNOBS}
    settings = resolve_settings(options.get("settings"), CHAIN_SETTINGS, **knobs)
    _checked_scorer(options.get("proxy"), "proxy")
    return settings


@dataclass
class ChainParts:
    """What an integration object is made of, built from its :class:`ChainOptions`."""

    settings: AttributionSettings
    groundedness: GroundednessFilter | None
    scorers: ScorerCache
    runs: Runs[Any]
    strict: bool
    background: bool
    progress: ProgressHook | None
    citations: bool

    def relay(
        self, emit: Callable[[dict[str, Any]], object] | None, run_id: str | None
    ) -> ProgressRelay:
        """One attribution's progress: to the ``progress`` option, then ``emit``-ted."""
        return ProgressRelay(self.progress, emit, run_id)

    @classmethod
    def of(
        cls,
        owner: str,
        scorer: object,
        options: Mapping[str, Any],
        *,
        blocking_refused: str | None = None,
        needs_scorer: str | None = None,
        traced: bool = False,
        uuid_keys: bool = False,
        listed: type = ChainOptions,
    ) -> ChainParts:
        """Check ``options`` and build the parts. ``owner`` names the object in errors,
        ``blocking_refused`` says why it cannot block, ``needs_scorer`` why it needs a
        scorer; ``traced``: scorers may be rebuilt from a trace (a refused key explained)."""
        settings = checked_options(owner, options, listed)
        _checked_scorer(scorer)
        given = scorer, options.get("llm"), options.get("proxy")
        if needs_scorer is not None and all(value is None for value in given):
            raise InputError(
                f"{owner} needs scorer=... (e.g. camab_rag.default_scorer()), llm=<the "
                f"chain's chat model> (scored by its own server) or proxy=...: {needs_scorer}"
            )
        gate = groundedness_filter(
            options.get("groundedness"), settings, blocking_refused=blocking_refused
        )
        scorers = ScorerCache(
            scorer,
            options.get("llm"),
            options.get("proxy"),
            dict(options.get("scorer_options") or {}),
        )
        strict = bool(options.get("strict", False))
        runs: Runs[Any] = Runs(
            settings,
            gate,
            strict=strict,
            keep=options.get("max_results", 1000),
            uuid_keys=uuid_keys,
            explain=_explain if traced and scorer is None and scorers.llm is None else None,
        )
        return cls(
            settings,
            gate,
            scorers,
            runs,
            strict,
            bool(options.get("background", False)),
            options.get("progress"),
            bool(options.get("citations", False)),
        )

"""The keyword options every integration object takes, listed once, and what they build.

Every integration object takes a scorer and :class:`AttributorOptions` (the everyday knobs
``budget``, ``method``, ``granularity``, ``deadline_s``, ``groundedness`` among them, as in
:func:`camab_rag.attribute`); a chain step or callback handler also :class:`ChainOptions`
(which extends them). :func:`checked_options` checks either and merges the knobs into the
settings with :func:`~camab_rag.settings.resolve_settings` (an unknown name is a
``TypeError``, bad settings an :class:`~camab_rag.errors.InputError`);
:meth:`ChainParts.of` also refuses a blocking filter where the object cannot hold the
answer back, and builds the settings, the scorer choice
(:class:`~camab_rag.integration.chain_scorers.ScorerSource`) and the runs
(:class:`~camab_rag.integration.chain_runs.ChainRuns`). An integration types its
``**options`` with ``Unpack[...]`` of one of them and adds only the options of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from difflib import get_close_matches
from typing import Any, TypedDict

from camab_rag.errors import InputError
from camab_rag.groundedness import GroundednessFilter
from camab_rag.groundedness.filter import check_groundedness_filter
from camab_rag.integration.attached import ChainAttribution
from camab_rag.integration.chain_runs import ChainRuns
from camab_rag.integration.chain_scorers import ScorerSource
from camab_rag.integration.progress_relay import ProgressHook
from camab_rag.methods import Method
from camab_rag.scorers.proxy import _checked_scorer
from camab_rag.segments import Granularity
from camab_rag.settings import CHAIN_SETTINGS, KNOBS, AttributionSettings, resolve_settings


class AttributorOptions(TypedDict, total=False):
    """The options every integration object takes (keyword-only, all optional).

    * ``budget``, ``method``, ``granularity``, ``deadline_s``, ``groundedness``: the
      everyday knobs, as :func:`camab_rag.attribute` takes them; each given wins over
      the field of ``settings``;
    * ``settings``: the rest of how each answer is attributed (default
      :data:`CHAIN_SETTINGS`: whole documents, a 120 s deadline);
    * ``proxy``: a scorer used when the chain's model cannot score (named in ``scored_by``);
    * ``scorer_options``: the options of the HTTP scorer built for a model;
    * ``progress``: ``progress(calls_made, total)`` every few model calls.
    """

    budget: int | None
    method: str | Method | None
    granularity: Granularity | None
    deadline_s: float | None
    groundedness: GroundednessFilter | None
    settings: AttributionSettings | None
    proxy: object
    scorer_options: Mapping[str, Any] | None
    progress: ProgressHook | None


class ChainOptions(AttributorOptions, total=False):
    """:class:`AttributorOptions` and those of a chain step or callback handler.

    * ``llm``: the chain's chat model to score with (when no scorer is given);
    * ``strict``: re-raise attribution errors (default: record them, the answer goes on);
    * ``background``: attribute after returning, with ``{"status": "pending"}`` dicts
      filled in place when done;
    * ``citations``: also put the framework's native citations on the answer message;
    * ``max_results``: results kept in ``.results`` (oldest dropped first).
    """

    llm: object
    strict: bool
    background: bool
    citations: bool
    max_results: int


def checked_options(
    owner: str, options: Mapping[str, Any], listed: type = ChainOptions
) -> AttributionSettings:
    """The settings of ``options``: its ``settings`` (default :data:`CHAIN_SETTINGS`) with
    its knobs in place (:func:`~camab_rag.settings.resolve_settings`: a keyword wins), once
    they are checked: a name ``listed`` lacks is a ``TypeError`` naming it (``owner`` names
    the object), a ``settings`` that is not an :class:`AttributionSettings` or a bad knob an
    :class:`~camab_rag.errors.InputError`, a ``proxy`` that cannot score or a ``progress``
    that is not a function too."""
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
    knobs = {name: options.get(name) for name in KNOBS}
    settings = resolve_settings(options.get("settings"), CHAIN_SETTINGS, **knobs)
    _checked_scorer(options.get("proxy"), "proxy")
    return settings


@dataclass
class ChainParts:
    """What an integration object is made of, built from its :class:`ChainOptions`."""

    settings: AttributionSettings
    scorers: ScorerSource
    runs: ChainRuns[ChainAttribution]
    strict: bool
    background: bool
    progress: ProgressHook | None
    citations: bool

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
    ) -> ChainParts:
        """Check ``options`` (``owner`` names the object in errors; ``blocking_refused``
        says why it cannot block, ``None`` where it can; ``needs_scorer`` why it needs a
        scorer, ``llm`` or ``proxy``, ``None`` where it can do without) and build the
        parts; ``traced``: scorers may be rebuilt from a trace (a refused key explained)."""
        settings = checked_options(owner, options)
        given = scorer, options.get("llm"), options.get("proxy")
        if needs_scorer is not None and all(value is None for value in given):
            raise InputError(
                f"{owner} needs scorer=... (e.g. camab_rag.default_scorer()), llm=<the "
                f"chain's chat model> (scored by its own server) or proxy=...: {needs_scorer}"
            )
        check_groundedness_filter(settings.groundedness, blocking_refused=blocking_refused)
        scorers = ScorerSource(
            scorer,
            options.get("llm"),
            options.get("proxy"),
            dict(options.get("scorer_options") or {}),
        )
        strict = bool(options.get("strict", False))
        runs: ChainRuns[ChainAttribution] = ChainRuns(
            settings,
            strict=strict,
            keep=options.get("max_results", 1000),
            uuid_keys=uuid_keys,
            explain=scorers.explain if traced else None,
        )
        return cls(
            settings,
            scorers,
            runs,
            strict,
            bool(options.get("background", False)),
            options.get("progress"),
            bool(options.get("citations", False)),
        )


__all__ = ["AttributorOptions", "ChainOptions", "ChainParts", "checked_options"]

"""The keyword options every integration object takes, listed once, and what they build.

A callback handler, a chain step or a query engine wrapper each take a scorer and the
same options (:class:`ChainOptions`); :meth:`ChainParts.of` checks them (an unknown name
is a ``TypeError``, a blocking filter where the object cannot hold the answer back an
:class:`~camab_rag.errors.InputError`) and builds the settings, the scorer choice
(:class:`~camab_rag.integration.chain_scorers.ScorerSource`) and the runs
(:class:`~camab_rag.integration.chain_runs.ChainRuns`). An integration types its ``**options`` with
``Unpack[ChainOptions]`` and adds only the options of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from camab_rag.errors import InputError
from camab_rag.groundedness.filter import check_groundedness_filter
from camab_rag.integration.attached import ChainAttribution
from camab_rag.integration.chain_runs import ChainRuns
from camab_rag.integration.chain_scorers import ScorerSource, scorer_from_model
from camab_rag.integration.progress_relay import ProgressHook
from camab_rag.settings import CHAIN_SETTINGS, AttributionSettings


class ChainOptions(TypedDict, total=False):
    """The options of every integration object (keyword-only, all optional).

    * ``settings``: how each answer is attributed (default :data:`CHAIN_SETTINGS`);
    * ``llm``, ``proxy``, ``scorer_options``: the chain's chat model to score with (when
      no scorer is given), a scorer used when that model cannot score (named in
      ``scored_by``), the options of the HTTP scorer built for a model;
    * ``strict``: re-raise attribution errors (default: record them, the answer goes on);
    * ``background``: attribute after returning, with ``{"status": "pending"}`` dicts
      filled in place when done;
    * ``progress``: ``progress(calls_made, total)`` every few model calls;
    * ``citations``: also put the framework's native citations on the answer message;
    * ``max_results``: results kept in ``.results`` (oldest dropped first).
    """

    settings: AttributionSettings | None
    llm: object
    proxy: object
    scorer_options: Mapping[str, Any] | None
    strict: bool
    background: bool
    progress: ProgressHook | None
    citations: bool
    max_results: int


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
        from_model: Callable[..., Any] = scorer_from_model,
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
        unknown = sorted(set(options) - set(ChainOptions.__annotations__))
        if unknown:
            raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}")
        settings = options.get("settings") or CHAIN_SETTINGS
        if not isinstance(settings, AttributionSettings):
            kind = type(settings).__name__
            raise InputError(f"settings must be an AttributionSettings, got {kind}")
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
            from_model,
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


def how_to_wait(awaited: str) -> str:
    """What a background attribution cancelled by its event loop's end says to do."""
    return (
        f"Await {awaited} before the event loop ends (e.g. at the end of the coroutine "
        "given to asyncio.run), or set background=False"
    )


__all__ = ["ChainOptions", "ChainParts", "how_to_wait"]

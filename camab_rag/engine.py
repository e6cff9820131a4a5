"""Attribution of a reward function with no LLM: :func:`attribute_fn`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.methods import Method
from camab_rag.result import AttributionResult
from camab_rag.rewards import FunctionOracle
from camab_rag.runs import ProgressFn as ProgressFn
from camab_rag.runs import check_groups, finish_run, start_run
from camab_rag.settings import AttributionSettings, resolve_settings
from camab_rag.steps import drive


def attribute_fn(
    value_fn: Callable[[NDArray[np.bool_]], float],
    n_segments: int,
    *,
    budget: int | None = None,
    method: str | Method | None = None,
    groups: Sequence[int] | None = None,
    progress: ProgressFn | None = None,
    settings: AttributionSettings | None = None,
) -> AttributionResult:
    """Attribute a reward function over ``n_segments`` binary inclusions.

    ``value_fn`` maps a boolean mask of shape ``(n_segments,)`` to a float reward; each
    distinct mask is evaluated once, and ``budget`` counts those distinct calls.
    ``groups`` gives each segment's document index (0..D-1): with it, ``"auto"`` (or any
    method with ``hierarchical=True``) attributes the documents first, then the segments
    inside the top ones. ``budget`` and ``method`` override ``settings``, whose seed,
    method and ``hierarchical`` are used (its text fields do not apply).
    """
    if isinstance(n_segments, bool) or not isinstance(n_segments, (int, np.integer)):
        raise InputError(f"n_segments must be an integer, got {n_segments!r}")
    if n_segments < 1:
        raise InputError("n_segments must be >= 1: there is nothing to attribute")
    if not callable(value_fn):
        raise InputError("value_fn must be callable: mask -> float")
    chosen = resolve_settings(settings, budget=budget, method=method)
    oracle = FunctionOracle(value_fn)
    run = start_run(int(n_segments), chosen, check_groups(groups, int(n_segments)))
    run.progress = progress
    run.follow(oracle)
    drive(run.rounds(oracle))
    run.report_end(oracle.n_queries)
    result = finish_run(run, int(n_segments), oracle.n_queries, 0)
    return replace(result, wall_time_s=time.perf_counter() - run.started)

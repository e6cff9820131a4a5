"""Plots of an attribution (``pip install camab-rag[plot]``): per-segment bars."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from camab_rag.errors import InputError
from camab_rag.result import AttributionResult, ranking, short_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def plot_attribution(
    result: AttributionResult,
    *,
    ax: Axes | None = None,
    gold: Iterable[int] = (),
    cited: Iterable[int] = (),
    top: int | None = 20,
) -> Axes:
    """Bar chart of the segments' scores: ``gold`` indices starred, ``cited`` ones outlined,
    the ``top`` highest (``None``: all)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'camab-rag[plot]'") from None
    scores = np.asarray(result.scores, float)
    if scores.size == 0:
        raise InputError("the attribution has no scores to plot")
    flat = [short_text(s.text, 40) for s in result.segments] or [""] * scores.size
    ranked = ranking(scores)[:top]
    order = list(range(scores.size) if top is None else ranked)
    gold_set, cited_set = set(gold), set(cited)
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.35 * len(order) + 1.2))
    positions = np.arange(len(order))
    colors = ["#e0a800" if i in gold_set else "#4c78a8" for i in order]
    bars = ax.barh(positions, scores[order], color=colors)
    for bar, i in zip(bars, order):
        if i in cited_set:
            bar.set(edgecolor="#d62728", linewidth=2.0)
    names = [f"{'★ ' if i in gold_set else ''}{i}: {flat[i]}" for i in order]
    ax.set_yticks(positions, names, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0.0, color="#333", linewidth=0.8)
    ax.set_xlabel(f"attribution score ({result.method}, {result.n_queries} model calls)")
    ax.set_title("Attribution: gold = ★/yellow, cited = red outline", fontsize=10)
    getattr(ax.get_figure(), "tight_layout", lambda: None)()  # not on a subfigure
    return ax

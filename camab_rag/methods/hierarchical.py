"""Hierarchical attribution: whole documents first, then the segments of the top documents
that fit in the rest of the budget; an unrefined document's segments share its score (a
base with ``joint_fit`` is fitted once over every subset instead)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.methods.auto import Auto
from camab_rag.methods.base import FloatArray, Masks, Method, Sampler, plan_sampler


@dataclass
class _Stage:
    """One level's sampler in full coordinates; rows in ``known`` are answered from it."""

    inner: Sampler
    to_full: Callable[[Masks], Masks]
    known: dict[bytes, float]
    max_calls: int
    calls: int = 0
    done: bool = False
    buffer: list[tuple[NDArray[np.bool_], NDArray[np.bool_]]] = field(default_factory=list)
    pending: Masks = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))

    def next_masks(self) -> Masks | None:
        while not self.buffer and not self.done:
            batch = self.inner.next_masks()
            if batch is None:
                break
            full = self.to_full(batch)
            known = np.array([row.tobytes() in self.known for row in full], dtype=bool)
            if known.any():
                self.inner.observe(
                    batch[known], np.array([self.known[r.tobytes()] for r in full[known]])
                )
            self.buffer.extend(zip(batch[~known], full[~known]))
        room = min(len(self.buffer), self.max_calls - self.calls)
        if room <= 0:
            self.done, self.buffer = True, []
            return None
        taken, self.buffer = self.buffer[:room], self.buffer[room:]
        self.pending = np.array([inner for inner, _ in taken], dtype=bool)
        self.calls += room
        return np.array([full for _, full in taken], dtype=bool)


def document_calls(base: Method, n_docs: int, budget: int) -> int:
    """The document level's calls: ``D + 1`` when that leaves a third of the budget (when it
    fits, for ``auto``), else half the budget; at most every subset of the documents."""
    cap = max(n_docs + 1 if 3 * (n_docs + 1) <= 2 * budget else budget // 2, 1)
    if isinstance(base, Auto) and base._switches.document_opening and n_docs + 1 <= budget:
        cap = n_docs + 1
    return min(cap, 2**n_docs) if n_docs < 62 else cap


def most_calls(base: Method, groups: Sequence[int], budget: int) -> int:
    """An upper bound on a hierarchical run's distinct calls: its document level and every
    subset of the segments of documents of two or more."""
    sizes = np.bincount(np.asarray(groups, dtype=np.int64))
    refinable = int(sizes[sizes >= 2].sum())
    if refinable >= 62:
        return budget
    return document_calls(base, int(sizes.size), budget) + int(2**refinable) - 1


class HierarchicalSampler(Sampler):
    def __init__(self, method: Hierarchical, budget: int, rng: np.random.Generator) -> None:
        self.method, self.budget, self.rng = method, budget, rng
        self.known: dict[bytes, float] = {}  # every subset scored, in order
        base, groups = method.base, method.groups
        cap = document_calls(base, len(method.members), budget)
        inner = plan_sampler(base, len(method.members), cap, rng)
        cap = sys.maxsize if base.name == "loo" else cap  # leave-one-out: its own size
        self.stages = [_Stage(inner, lambda doc_masks: doc_masks[:, groups], self.known, cap)]

    def next_masks(self) -> Masks | None:
        batch = self.stages[-1].next_masks()
        if batch is None and len(self.stages) == 1:
            self._start_segments()
            batch = self.stages[-1].next_masks()
        return batch

    def observe(self, masks: Masks, rewards: FloatArray) -> None:
        for mask, value in zip(masks, rewards):
            self.known[mask.tobytes()] = float(value)
        self.stages[-1].inner.observe(self.stages[-1].pending, rewards)
        self.n_redrawn = sum(stage.inner.n_redrawn for stage in self.stages)

    def _start_segments(self) -> None:
        """Refine the top documents (by the design's scores) whose segments fit the budget."""
        n_segments = self.method.groups.size
        self.method.stage1_calls = len(self.known)
        remaining = self.budget - len(self.known)
        masks = np.frombuffer(b"".join(self.known), dtype=bool).reshape(-1, n_segments)
        rewards = np.array(list(self.known.values()))
        doc_scores = self.method.document_scores(masks, rewards, design=True)
        refined: list[int] = []
        count = 0
        for d in np.argsort(-doc_scores, kind="stable"):
            size = self.method.members[d].size
            # a one-segment document is already attributed; a smaller one further down may fit
            if size >= 2 and not (refined and count + size > remaining):
                refined.append(int(d))
                count += size
        if remaining <= 0 or not refined:
            return
        columns = np.sort(np.concatenate([self.method.members[d] for d in refined]))
        known_here = int(masks[:, np.setdiff1d(np.arange(n_segments), columns)].all(axis=1).sum())

        def to_full(sub: Masks) -> Masks:
            full = np.ones((sub.shape[0], n_segments), dtype=bool)
            full[:, columns] = sub
            return full

        base = self.method.base
        inner = plan_sampler(base, columns.size, remaining + known_here, self.rng)
        cap = sys.maxsize if base.name == "loo" else remaining
        self.stages.append(_Stage(inner, to_full, self.known, cap))


class Hierarchical(Method):
    """``base`` run hierarchically over ``groups`` (each segment's document, 0..D-1)."""

    def __init__(
        self, base: Method, groups: Sequence[int], stage1_calls: int | None = None
    ) -> None:
        ids = np.asarray(groups, dtype=np.int64).reshape(-1)
        if ids.size == 0 or not np.array_equal(np.unique(ids), np.arange(ids.max() + 1)):
            raise ValueError("groups must number the documents 0..D-1, one per segment")
        self.base, self.groups, self.name = base, ids, base.name
        self.members = [np.flatnonzero(ids == d) for d in range(int(ids.max()) + 1)]
        self.first = np.array([m[0] for m in self.members])  # each document's first segment
        self.stage1_calls = stage1_calls  # the document level's calls (set by the run)

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        if n_segments != self.groups.size:
            raise ValueError(f"groups has {self.groups.size} entries for {n_segments} segments")
        return HierarchicalSampler(self, budget, rng)

    def document_scores(
        self, masks: Masks, rewards: FloatArray, seed: int = 0, *, design: bool = False
    ) -> FloatArray:
        """The documents' scores from the subsets that keep or drop whole documents (for
        ``design=True`` with ``auto``, the means of the CAMAB that steers its draws)."""
        whole = np.all(masks == masks[:, self.first][:, self.groups], axis=1)
        if self.stage1_calls is not None:
            whole[self.stage1_calls :] = False
        if not whole.any():
            return np.zeros(self.first.size)
        base = self.base
        fit = base.bandit().fit if design and isinstance(base, Auto) else base.fit
        return np.asarray(fit(masks[whole][:, self.first], rewards[whole], seed), dtype=float)

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        if getattr(self.base, "joint_fit", False):
            return np.asarray(self.base.fit(masks, rewards, seed), dtype=float)
        sizes = np.array([m.size for m in self.members], dtype=float)
        scores = (self.document_scores(masks, rewards, seed) / sizes)[self.groups]
        varies = np.any(masks != masks[:, self.first][:, self.groups], axis=0)
        refined = np.isin(self.groups, np.unique(self.groups[varies]))
        if refined.any():
            rows = masks[:, ~refined].all(axis=1)
            scores[refined] = self.base.fit(masks[rows][:, refined], rewards[rows], seed)
        return np.asarray(scores, dtype=float)

    def config(self) -> dict[str, Any]:
        where = {"groups": self.groups.tolist(), "stage1_calls": self.stage1_calls}
        return {**self.base.config(), "hierarchical": True, **where}

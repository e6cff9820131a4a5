"""Hierarchical attribution: whole documents first (:func:`document_calls`), then the
segments of the top documents that fit in the rest of the budget, the others kept.

Document scores come from the subsets that keep or drop whole documents, segment scores
from those that keep every other document; an unrefined document's segments share its
score (a base with ``joint_fit`` is fitted once over every subset instead)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.methods.base import FloatArray, Masks, Method, Sampler, plan_sampler

IntArray = NDArray[np.int64]


class _Stage:
    """One level's sampler in full coordinates; rows in ``known`` are answered from it."""

    def __init__(
        self,
        inner: Sampler,
        to_full: Callable[[Masks], Masks],
        known: dict[bytes, float],
        max_calls: int | None,
    ) -> None:
        self.inner = inner
        self.to_full = to_full
        self.known = known
        self.max_calls = max_calls
        self.calls = 0
        self.buffer: list[tuple[NDArray[np.bool_], NDArray[np.bool_]]] = []
        self.done = False
        self.pending: Masks = np.zeros((0, 0), dtype=bool)

    def next_masks(self) -> Masks | None:
        while not self.buffer and not self.done:
            batch = self.inner.next_masks()
            if batch is None:
                self.done = True
                break
            full = self.to_full(batch)
            keys = [row.tobytes() for row in full]
            known = [k in self.known for k in keys]
            if any(known):
                rows = np.flatnonzero(known)
                self.inner.observe(batch[rows], np.array([self.known[keys[i]] for i in rows]))
            self.buffer.extend((batch[i], full[i]) for i in np.flatnonzero(~np.array(known)))
        if not self.buffer:
            return None
        room = len(self.buffer)
        if self.max_calls is not None:
            room = min(room, self.max_calls - self.calls)
        if room <= 0:
            self.done, self.buffer = True, []
            return None
        taken, self.buffer = self.buffer[:room], self.buffer[room:]
        self.pending = np.array([inner for inner, _ in taken], dtype=bool)
        self.calls += room
        return np.array([full for _, full in taken], dtype=bool)

    def observe(self, rewards: FloatArray) -> None:
        self.inner.observe(self.pending, rewards)


def document_calls(base: Method, n_docs: int, budget: int) -> int:
    """The document level's calls: ``D + 1`` (each document left out once) when that leaves
    a third of the budget (whenever it fits for a base that ``opens_documents``), else half
    the budget; at most every subset of the documents."""
    d = n_docs
    cap = max(d + 1 if 3 * (d + 1) <= 2 * budget else budget // 2, 1)
    if getattr(base, "opens_documents", False) and d + 1 <= budget:
        cap = d + 1
    return min(cap, 2**d) if d < 62 else cap


def most_calls(base: Method, groups: Sequence[int], budget: int) -> int:
    """An upper bound on a hierarchical run's distinct calls: its document level and every
    subset of the segments of documents of two or more (e.g. 6 for 4 sentences in 3
    documents)."""
    sizes = np.bincount(np.asarray(groups, dtype=np.int64))
    refinable = int(sizes[sizes >= 2].sum())
    if refinable >= 62:
        return budget
    return document_calls(base, int(sizes.size), budget) + int(2**refinable) - 1


class HierarchicalSampler(Sampler):
    def __init__(self, method: Hierarchical, budget: int, rng: np.random.Generator) -> None:
        self.method = method
        self.budget = budget
        self.rng = rng
        self.groups = np.asarray(method.groups, dtype=np.int64)
        self.n_docs = int(self.groups.max()) + 1
        self.members = method.members()
        self.known: dict[bytes, float] = {}
        self.history: list[tuple[NDArray[np.bool_], float]] = []
        base = method.base
        cap = document_calls(base, self.n_docs, budget)
        self.stage1 = _Stage(
            plan_sampler(base, self.n_docs, cap, rng),
            lambda doc_masks: np.asarray(doc_masks[:, self.groups], dtype=bool),
            self.known,
            cap if base.prefix_fit else None,  # leave-one-out keeps its own cost
        )
        self.stage2: _Stage | None = None
        self.stage = 1

    def next_masks(self) -> Masks | None:
        if self.stage == 1:
            batch = self.stage1.next_masks()
            if batch is not None:
                return batch
            self._start_stage2()
        if self.stage2 is None:
            return None
        return self.stage2.next_masks()

    def observe(self, masks: Masks, rewards: FloatArray) -> None:
        for mask, value in zip(masks, rewards):
            self.known[mask.tobytes()] = float(value)
            self.history.append((mask.copy(), float(value)))
        if self.stage == 1:
            self.stage1.observe(rewards)
        elif self.stage2 is not None:
            self.stage2.observe(rewards)
        self.n_redrawn = self.stage1.inner.n_redrawn + (
            self.stage2.inner.n_redrawn if self.stage2 is not None else 0
        )

    def _plan(self) -> list[int]:
        masks = np.array([m for m, _ in self.history], dtype=bool).reshape(-1, self.groups.size)
        rewards = np.array([v for _, v in self.history])
        doc_scores = self.method.document_scores(masks, rewards, design=True)
        remaining = self.budget - len(self.history)
        refined: list[int] = []
        count = 0
        for d in np.argsort(-doc_scores, kind="stable"):
            size = self.members[d].size
            if size < 2:  # a one-segment document is already attributed
                continue
            if refined and count + size > remaining:
                continue  # a smaller document further down may still fit
            refined.append(int(d))
            count += size
        return refined

    def _start_stage2(self) -> None:
        self.stage = 2
        self.method.stage1_calls = len(self.history)
        remaining = self.budget - len(self.history)
        refined = self._plan()
        if remaining <= 0 or not refined:
            return
        columns = np.sort(np.concatenate([self.members[d] for d in refined]))
        n_columns = columns.size
        known_here = sum(
            1 for mask, _ in self.history if mask[np.setdiff1d(np.arange(mask.size), columns)].all()
        )

        def to_full(sub: Masks) -> Masks:
            full = np.ones((sub.shape[0], self.groups.size), dtype=bool)
            full[:, columns] = sub
            return full

        base = self.method.base
        inner = plan_sampler(base, n_columns, remaining + known_here, self.rng)
        self.stage2 = _Stage(inner, to_full, self.known, remaining if base.prefix_fit else None)


class Hierarchical(Method):
    """``base`` run hierarchically over ``groups`` (each segment's document, 0..D-1)."""

    anytime = False

    def __init__(
        self, base: Method, groups: Sequence[int], stage1_calls: int | None = None
    ) -> None:
        ids = np.asarray(groups, dtype=np.int64).reshape(-1)
        if ids.size == 0 or ids.min() < 0:
            raise ValueError("groups must be non-negative document indices, one per segment")
        if set(np.unique(ids).tolist()) != set(range(int(ids.max()) + 1)):
            raise ValueError("groups must number the documents 0..D-1 with none missing")
        self.base = base
        self.groups = ids
        self.name = base.name
        #: the document stage's calls (set by the run; document scores read those rows)
        self.stage1_calls = stage1_calls

    def sampler(self, n_segments: int, budget: int, rng: np.random.Generator) -> Sampler:
        if n_segments != self.groups.size:
            raise ValueError(f"groups has {self.groups.size} entries for {n_segments} segments")
        return HierarchicalSampler(self, budget, rng)

    def members(self) -> list[IntArray]:
        return [np.flatnonzero(self.groups == d) for d in range(int(self.groups.max()) + 1)]

    def document_scores(
        self, masks: Masks, rewards: FloatArray, seed: int = 0, *, design: bool = False
    ) -> FloatArray:
        """The documents' scores from the subsets that keep or drop whole documents (with
        the base's ``design_fit``, when it has one, for ``design=True``)."""
        first = np.array([m[0] for m in self.members()])
        whole = np.all(masks == masks[:, first][:, self.groups], axis=1)
        if self.stage1_calls is not None:
            whole[self.stage1_calls :] = False
        if not whole.any():
            return np.zeros(first.size)
        fit = getattr(self.base, "design_fit", self.base.fit) if design else self.base.fit
        return np.asarray(fit(masks[whole][:, first], rewards[whole], seed), dtype=float)

    def fit(self, masks: Masks, rewards: FloatArray, seed: int = 0) -> FloatArray:
        if getattr(self.base, "joint_fit", False):
            return np.asarray(self.base.fit(masks, rewards, seed), dtype=float)
        members = self.members()
        sizes = np.array([m.size for m in members], dtype=float)
        scores = (self.document_scores(masks, rewards, seed) / sizes)[self.groups]
        first = np.array([m[0] for m in members])
        varies = np.any(masks != masks[:, first][:, self.groups], axis=0)
        refined = np.unique(self.groups[varies])
        if refined.size:
            columns = np.flatnonzero(np.isin(self.groups, refined))
            others = np.flatnonzero(~np.isin(self.groups, refined))
            rows = masks[:, others].all(axis=1)
            scores[columns] = self.base.fit(masks[rows][:, columns], rewards[rows], seed)
        return np.asarray(scores, dtype=float)

    def config(self) -> dict[str, Any]:
        return {
            **self.base.config(),
            "hierarchical": True,
            "groups": [int(g) for g in self.groups],
            "stage1_calls": self.stage1_calls,
        }

"""A persistent store of priced subsets (each subset of an example scored once), the reward
function that replays it, and the JSONL files and ``"0101..."`` masks they are kept in."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.data import read_jsonl
from benchmarks.evaluation.metrics import removal_mask, removal_set

Mask = NDArray[np.bool_]
DIGITS = 6
REMOVAL_CACHE = (
    Path(__file__).resolve().parents[1] / "results" / "design_drop" / "scored_sets.jsonl"
)
"""Removal sets the retired design benchmarks scored (results, id, removed -> log-prob)."""
Removed = tuple[int, ...]


def bits(mask: Mask | Iterable[bool]) -> str:
    """A mask as the ``"0101..."`` string the results files use."""
    return "".join("1" if b else "0" for b in mask)


def masks_from_bits(rows: Sequence[str]) -> NDArray[np.bool_]:
    """The masks of a results record (one ``"0101..."`` string per query) as a bool matrix."""
    return np.array([[bit == "1" for bit in row] for row in rows], dtype=bool)


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line, flushed to disk; after a torn last line (a kill) the next
    append starts a line of its own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torn = False
    if path.exists() and path.stat().st_size > 0:
        with open(path, "rb") as existing:
            existing.seek(-1, os.SEEK_END)
            torn = existing.read(1) != b"\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(("\n" if torn else "") + json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def read_cache(path: Path = REMOVAL_CACHE) -> dict[tuple[str, str, Removed], float]:
    """Mean response log-probs already scored: ``(results, example id, removed) -> value``."""
    return {
        (row["results"], row["id"], tuple(row["removed"])): row["logprob"]
        for row in read_jsonl(path)  # a line torn by a kill is skipped
    }


class Unpriced(LookupError):
    """A subset the store has no reward for, asked for where no model may be called."""


class RewardStore:
    """``example id -> mask -> reward`` in one JSONL file, flushed as each is priced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._rewards: dict[str, dict[str, float]] = {}
        self.conflicts: list[float] = []
        """Gaps between two values offered for the same subset (the first one is kept)."""
        for row in read_jsonl(path):
            self._rewards.setdefault(str(row["id"]), {})[str(row["mask"])] = float(row["reward"])

    def get(self, example_id: str, mask: Mask | str) -> float | None:
        return self._rewards.get(example_id, {}).get(_key(mask))

    def __len__(self) -> int:
        return sum(len(v) for v in self._rewards.values())

    def put(
        self,
        example_id: str,
        mask: Mask | str,
        reward: float,
        *,
        source: str,
        logprobs: Iterable[float] | None = None,
    ) -> float:
        """Record a subset's reward, flushed to the file at once (once: a subset already
        there keeps its value, and the gap is noted in :attr:`conflicts`); returns the
        value the store holds."""
        row = self._row(example_id, mask, reward, source, logprobs)
        if row is not None:
            append_record(self.path, row)
        return self._rewards[example_id][_key(mask)]

    def put_many(self, example_id: str, rows: Iterable[tuple[str, float, str]]) -> int:
        """Record ``(mask, reward, source)`` rows in one write (seeding from stored runs);
        returns how many were new."""
        new = [r for m, v, s in rows if (r := self._row(example_id, m, v, s, None)) is not None]
        if new:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.writelines(json.dumps(r) + "\n" for r in new)
        return len(new)

    def _row(
        self,
        example_id: str,
        mask: Mask | str,
        reward: float,
        source: str,
        logprobs: Iterable[float] | None,
    ) -> dict[str, Any] | None:
        if not math.isfinite(reward):
            raise ValueError(f"reward must be finite, got {reward!r}")
        key = _key(mask)
        value = round(float(reward), DIGITS)
        held = self._rewards.setdefault(example_id, {})
        if key in held:
            self.conflicts.append(abs(held[key] - value))
            return None
        held[key] = value
        row: dict[str, Any] = {"id": example_id, "mask": key, "reward": value, "source": source}
        if logprobs is not None:
            row["logprobs"] = [round(float(x), 4) for x in logprobs]
        return row


def _key(mask: Mask | str) -> str:
    return mask if isinstance(mask, str) else bits(mask)


def stored_subsets(
    record: dict[str, Any],
    lines: Iterable[dict[str, Any]] = (),
    removals: Iterable[tuple[tuple[int, ...], float]] = (),
) -> Iterator[tuple[str, float, str]]:
    """``(mask, reward, source)`` for every subset earlier runs of one example priced: the
    results ``record``, its ``bench_calls`` ``lines``, the design benchmarks' ``removals``
    and the top-k removal set behind each stored drop (``full - drop``)."""
    n = int(record["n_segments"])
    yield bits(np.ones(n, dtype=bool)), float(record["full_logprob"]), "results:full"
    fits: list[tuple[str, dict[str, Any], bool]] = []
    for method, entry in record.get("methods", {}).items():
        if "rewards" in entry:
            for mask, reward in zip(entry["masks"], entry["rewards"]):
                yield mask, float(reward), f"results:{method}"
        fits += [
            (f"results:{method}@{label}", fit, True) for label, fit in entry["budgets"].items()
        ]
    for line in lines:
        for label, fit in line["budgets"].items():
            source = f"calls:{line.get('variant', '?')}@{label}"
            for mask, reward in zip(fit["masks"], fit["rewards"]):
                yield mask, float(reward), source
            fits.append((source, fit, False))
    for gone, reward in removals:
        yield bits(removal_mask(n, gone)), float(reward), "design_drop"
    full = float(record["full_logprob"])
    for source, fit, exact in fits:
        ordered = sorted(fit["scores"], reverse=True)
        for k, drop in fit.get("drop", {}).items():
            # a stored drop of rounded scores is used only where the rounding cannot have
            # swapped the k-th and the next score
            if exact or int(k) >= len(ordered) or ordered[int(k) - 1] - ordered[int(k)] > 1e-5:
                removed = removal_set(fit["scores"], int(k))
                yield bits(removal_mask(n, removed)), full - float(drop), f"{source}:drop@{k}"


class PricedReward:
    """``mask -> reward`` for :func:`camab_rag.attribute_fn`, served from ``store``; an
    unpriced subset goes to ``price`` (the model) and into the store, or raises
    :class:`Unpriced`. Values are the store's (rounded), so a run and its replay agree."""

    def __init__(
        self,
        store: RewardStore,
        example_id: str,
        price: Callable[[Mask], tuple[float, list[float]]] | None = None,
    ) -> None:
        self.store = store
        self.example_id = example_id
        self.price = price
        self.model_calls = 0
        self.replayed = 0

    def __call__(self, mask: Mask) -> float:
        held = self.store.get(self.example_id, mask)
        if held is not None:
            self.replayed += 1
            return held
        if self.price is None:
            raise Unpriced(f"{self.example_id}: subset {bits(mask)} is not priced")
        reward, logprobs = self.price(np.asarray(mask, dtype=bool))
        self.model_calls += 1
        return self.store.put(self.example_id, mask, reward, source="model", logprobs=logprobs)

    def many(self, masks: Iterable[Mask]) -> list[float]:
        """The rewards of several masks (priced in the order given)."""
        return [self(m) for m in masks]
